"""ONNX Sub of two convolutions' outputs as onnxruntime's quantize_static leaves it (in float between
DequantizeLinear and QuantizeLinear: onnxruntime has no quantized Sub), both modes, int8 and uint8,
either operand broadcast, a Relu after it, then a convolution: qnnweb computes onnxruntime's float32
Sub for every pair of int8 values (a 256 x 256 table, the lut2d record). As the model's last op (its
float32 result the output, as in a detector's box decoding) and Div as well: a float32 table, bit-exact."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]
RNG = np.random.default_rng(88)
H, W, C = 5, 6, 8


def model(b_channels):
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("Conv", ["x", "w2"], ["b"], pads=[1, 1, 1, 1]),
             helper.make_node("Sub", ["a", "b"], ["d"]), helper.make_node("Relu", ["d"], ["r"])]
    init = {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32),
            "w2": RNG.normal(0, 0.3, (b_channels, 3, 3, 3)).astype(np.float32)}
    nodes.append(helper.make_node("Conv", ["r", "w3"], ["y"]))
    init["w3"] = RNG.normal(0, 0.3, (4, C, 1, 1)).astype(np.float32)
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 4, H, W])], init)


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("b_channels", [C, 1], ids=["same-shape", "b-broadcast"])
def test_matches_onnxruntime(b_channels, quant):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(b_channels), feeds, quant_format=quant[0], activation=quant[1])
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), ["SUB"],
                               min_exact=0.98)


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("operand", ["conv", "constant"])
@pytest.mark.parametrize("op", ["Sub", "Div"])
def test_float_result_as_the_output_matches_onnxruntime(op, operand, quant):
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1])]
    init = {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32)}
    if operand == "conv":
        nodes.append(helper.make_node("Conv", ["x", "w2"], ["b"], pads=[1, 1, 1, 1]))
        init["w2"] = RNG.normal(0, 0.3, (C, 3, 3, 3)).astype(np.float32)
    else:
        init["b"] = (RNG.uniform(0.5, 2.0, (C, 1, 1)) * RNG.choice([-1, 1], (C, 1, 1))).astype(np.float32)
    nodes.append(helper.make_node(op, ["a", "b"], ["y"]))
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, C, H, W])], init), feeds,
                     quant_format=quant[0], activation=quant[1])
    with np.errstate(divide="ignore", invalid="ignore"):
        assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), [op.upper()],
                                   exact=True)
