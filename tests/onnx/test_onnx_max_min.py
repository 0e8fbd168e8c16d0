"""ONNX Max and Min as onnxruntime's quantize_static leaves them (in float between DequantizeLinear and
QuantizeLinear, both modes, int8 and uint8): of two convolutions' outputs, and of one and a constant
(ReLU-like clamps), between convolutions. Quantization is monotonic, so qnnweb takes the extreme of
the operands requantized to the output (onnxruntime's DequantizeLinear -> QuantizeLinear, QuantizeLinear
for a float constant). As a model's last op its float result is the output: the float32 extreme of the
dequantized operands for every pair of int8 values (a float32 lut2d table), bit-exact."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]
RNG = np.random.default_rng(77)
H, W, C = 5, 6, 8


def model(op, operand, last):
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1])]
    init = {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32)}
    if operand == "two-convs":
        nodes.append(helper.make_node("Conv", ["x", "w2"], ["b"], pads=[1, 1, 1, 1]))
        init["w2"] = RNG.normal(0, 0.3, (C, 3, 3, 3)).astype(np.float32)
    else:
        init["b"] = RNG.normal(0, 0.4, (C, 1, 1)).astype(np.float32)
    nodes.append(helper.make_node(op, ["a", "b"], ["m" if not last else "y"]))
    out_c = C
    if not last:
        nodes.append(helper.make_node("Conv", ["m", "w3"], ["y"]))
        init["w3"] = RNG.normal(0, 0.3, (4, C, 1, 1)).astype(np.float32)
        out_c = 4
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, out_c, H, W])], init)


@pytest.mark.parametrize("last", [False, True], ids=["between-convs", "float-output"])
@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("operand", ["two-convs", "constant"])
@pytest.mark.parametrize("op", ["Max", "Min"])
def test_matches_onnxruntime(op, operand, quant, last):
    """Between convolutions within one quantum (98 % bit-exact: the next convolution rounds its input's
    requantization), as the last op its float32 result bit-exact."""
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(op, operand, last), feeds, quant_format=quant[0], activation=quant[1])
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), ["MAXIMUM", "MINIMUM"],
                               min_exact=0.98, exact=last)
