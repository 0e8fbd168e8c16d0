"""Float ops between quantized ones that only pass values on, as modern architectures export them and
onnxruntime's quantize_static leaves them (in float, between DequantizeLinear and QuantizeLinear): a Cast to
float32 of a float32 tensor (``x.float()``, EfficientViT's attention), and a constant Pad whose value is
not on the input's grid (``F.pad(v, (0, 1), value=1)``, EfficientViT's LiteMLA), which onnxruntime pads in
float and quantizes with the output's parameters. Both quantization formats, uint8 and int8 activations:
bit-exact with onnxruntime in every variant."""

import numpy as np
import pytest
from onnx import TensorProto, helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

RNG = np.random.default_rng(2026)
C, H, W = 4, 5, 6
FORMATS = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8")]


def feeds(count=8):
    return [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(count)]


def weights(*shape, sigma=0.5):
    return RNG.normal(0, sigma, shape).astype(np.float32)


@pytest.mark.parametrize("quant_format,activation", FORMATS)
def test_cast_to_float32_between_convolutions(quant_format, activation):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Cast", ["r"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Conv", ["f", "w2"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 2, H, W])],
                        {"w": weights(C, 3, 3, 3), "w2": weights(2, C, 1, 1)})
    data = quantized(model, feeds(), quant_format=quant_format, activation=activation)
    for _ in range(3):
        assert_matches_onnxruntime(data, feeds(1)[0]["x"], ["CONV_2D"], exact=True)


@pytest.mark.parametrize("value", [1.0, 0.0, -0.3])
@pytest.mark.parametrize("quant_format,activation", FORMATS)
def test_pad_with_a_value_off_the_grid(quant_format, activation, value):
    """F.pad(v, (0, 1), value=1) on a convolution's output, then a Cast and a convolution (the value 1 is
    rarely on the input's grid: padded in float, quantized with the Pad output's parameters)."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Pad", ["c", "pads", "v"], ["p"], mode="constant"),
             helper.make_node("Cast", ["p"], ["f"], to=TensorProto.FLOAT),
             helper.make_node("Conv", ["f", "w2"], ["y"])]
    init = {"w": weights(C, 3, 3, 3), "w2": weights(2, C, 1, 1), "pads": np.array([0, 0, 0, 0, 0, 0, 0, 1], np.int64),
            "v": np.array(value, np.float32)}
    model = float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 2, H, W + 1])], init)
    data = quantized(model, feeds(), quant_format=quant_format, activation=activation)
    for _ in range(3):
        assert_matches_onnxruntime(data, feeds(1)[0]["x"], ["PADV2"], exact=True)


@pytest.mark.parametrize("quant_format,activation", FORMATS)
def test_expand_of_an_activation(quant_format, activation):
    """MobileViTv2's linear attention: a context vector reduced over the patches, expanded back over them
    (Expand to a constant shape), then multiplied with another activation."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("ReduceMean", ["c"], ["m"], axes=[3], keepdims=1),
             helper.make_node("Expand", ["m", "shape"], ["e"]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Mul", ["r", "e"], ["p"]), helper.make_node("Conv", ["p", "w2"], ["y"])]
    init = {"w": weights(C, 3, 3, 3), "w2": weights(2, C, 1, 1), "shape": np.array([1, C, H, W], np.int64)}
    model = float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 2, H, W])], init)
    data = quantized(model, feeds(), quant_format=quant_format, activation=activation)
    for _ in range(3):
        assert_matches_onnxruntime(data, feeds(1)[0]["x"], ["BROADCAST_TO"], exact=True)


@pytest.mark.parametrize("axes", [[3], [2, 3], [1]], ids=["patches", "pixels-and-patches", "channels"])
@pytest.mark.parametrize("quant_format,activation", FORMATS)
def test_reduce_sum_then_expand(quant_format, activation, axes):
    """MobileViTv2's linear attention: key x context score summed over the patches (ReduceSum, opset 13:
    axes an input; left in float by the quantizer), expanded back and multiplied with the values. qnnweb
    sums the dequantized taps in float32 as onnxruntime's float ReduceSum does, in another order (its
    vectorized one): within one quantum, nearly every element exact."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("ReduceSum", ["c", "axes"], ["m"], keepdims=1),
             helper.make_node("Expand", ["m", "shape"], ["e"]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Mul", ["r", "e"], ["p"]), helper.make_node("Conv", ["p", "w2"], ["y"])]
    init = {"w": weights(C, 3, 3, 3), "w2": weights(2, C, 1, 1), "shape": np.array([1, C, H, W], np.int64),
            "axes": np.array(axes, np.int64)}
    model = float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 2, H, W])], init)
    data = quantized(model, feeds(), quant_format=quant_format, activation=activation)
    for _ in range(3):
        assert_matches_onnxruntime(data, feeds(1)[0]["x"], ["SUM"], min_exact=0.95)
