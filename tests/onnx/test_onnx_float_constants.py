"""Sub and Div by a float constant that onnxruntime's quantize_static leaves unquantized (the op stays in
float between DequantizeLinear and QuantizeLinear: a normalization x - mean or x / std per channel, x / 6),
as onnxruntime computes them: the dequantized operand and the constant's exact float32 value, the float32
result quantized. One scalar and one value per channel, the constant on either side of Sub, uint8 and int8
activations, between convolutions and before the model's end: bit-exact with onnxruntime in every variant.
Div by an activation too (a divisor at its zero point divides by 0: an infinity, or NaN for 0 / 0, which
QuantizeLinear saturates), and a constant divisor holding 0 is a named error."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

import qnnweb

RNG = np.random.default_rng(91)
C, H, W = 4, 5, 6
CASES = {"sub-scalar": ("Sub", [], False), "sub-per-channel": ("Sub", [C, 1, 1], False),
         "constant-minus-x": ("Sub", [C, 1, 1], True), "div-scalar": ("Div", [], False),
         "div-per-channel": ("Div", [1, C, 1, 1], False)}


def model(op, shape, constant_first):
    inputs = ["k", "c"] if constant_first else ["c", "k"]
    k = RNG.normal(0.2, 0.6, shape).astype(np.float32)
    if op == "Div":
        k = np.abs(k) + np.float32(0.5)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node(op, inputs, ["d"]),
             helper.make_node("Conv", ["d", "w2"], ["y"])]
    init = {"w": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32), "k": k,
            "w2": RNG.normal(0, 0.5, (2, C, 1, 1)).astype(np.float32)}
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 2, H, W])], init)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("case", list(CASES))
def test_matches_onnxruntime(case, activation):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(*CASES[case]), feeds, activation=activation)
    op = "DIV" if case.startswith("div") else "SUB"
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), [op], exact=True)


# divisor -> the nodes making it from the convolution's output "c" (and the input "x")
DIVISORS = {"another-conv": [helper.make_node("Conv", ["x", "w3"], ["e"], pads=[1, 1, 1, 1])],
            "sigmoid-of-conv": [helper.make_node("Conv", ["x", "w3"], ["f"], pads=[1, 1, 1, 1]),
                                helper.make_node("Sigmoid", ["f"], ["e"])],
            "itself": []}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # onnxruntime's calibration of x / 0
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("divisor", list(DIVISORS))
def test_division_by_an_activation_matches_onnxruntime(divisor, activation):
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), *DIVISORS[divisor],
             helper.make_node("Div", ["c", "c" if divisor == "itself" else "e"], ["d"]),
             helper.make_node("Conv", ["d", "w2"], ["y"])]
    init = {"w": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32), "w3": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32),
            "w2": RNG.normal(0, 0.5, (2, C, 1, 1)).astype(np.float32)}
    if divisor == "itself":
        del init["w3"]
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 2, H, W])], init), feeds, activation=activation)
    for _ in range(3):
        assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), ["DIV"], exact=True)


@pytest.mark.filterwarnings("ignore::RuntimeWarning")  # onnxruntime's calibration of x / 0
def test_division_by_a_constant_holding_zero_is_a_named_error():
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Div", ["c", "k"], ["d"]),
             helper.make_node("Conv", ["d", "w2"], ["y"])]
    init = {"w": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32), "k": np.array([1.0, 0.0, 2.0, 3.0], np.float32).reshape(C, 1, 1),
            "w2": RNG.normal(0, 0.5, (2, C, 1, 1)).astype(np.float32)}
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(4)]
    data = quantized(float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 2, H, W])], init), feeds)
    with pytest.raises(qnnweb.UnsupportedModelError, match="holds 0"):
        qnnweb.load(data)
