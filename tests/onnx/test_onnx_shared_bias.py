"""Two convolutions with equal float biases, which the exporter writes as one initializer: onnxruntime's
quantize_static quantizes that bias once, with one convolution's input scale x weight scale, and both
convolutions read it. QOperator: each QLinearConv adds the int32 values as they are, and so does qnnweb
(bit-exact). QDQ: onnxruntime does not fuse the convolution whose bias scale is not its own (its selector
checks the scale) and runs it in float, the bias dequantized with its own scale; qnnweb quantizes that
dequantized bias again at the convolution's scale (as onnxruntime quantizes a float bias) and runs it in
int8: the same up to the float convolution's rounding, so within one quantum, nearly every element exact."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

RNG = np.random.default_rng(77)
C, H, W = 4, 5, 6


def model():
    nodes = [helper.make_node("Conv", ["x", "w1", "b"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r"]),
             helper.make_node("Conv", ["r", "w2", "b"], ["y"], pads=[1, 1, 1, 1])]
    init = {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32),
            "w2": RNG.normal(0, 0.2, (C, C, 3, 3)).astype(np.float32), "b": RNG.normal(0, 0.5, (C,)).astype(np.float32)}
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, C, H, W])], init)


def inputs(count):
    return [RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32) for _ in range(count)]


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_qoperator_adds_the_shared_int32_bias_as_it_is(activation, per_channel):
    data = quantized(model(), [{"x": x} for x in inputs(8)], quant_format="QOperator", activation=activation,
                     per_channel=per_channel)
    for x in inputs(3):
        assert_matches_onnxruntime(data, x, ["CONV_2D"], exact=True)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_qdq_convolution_with_another_ops_bias_scale_runs(activation, per_channel):
    data = quantized(model(), [{"x": x} for x in inputs(8)], activation=activation, per_channel=per_channel)
    for x in inputs(5):
        assert_matches_onnxruntime(data, x, ["CONV_2D"], min_exact=0.95)
