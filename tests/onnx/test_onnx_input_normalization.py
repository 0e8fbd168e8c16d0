"""Float ops on the model's float input before it is quantized, as a torch model that normalizes its own
input exports them and onnxruntime's quantize_static leaves them (float Sub / Div / Mul / Add with float
constants, then QuantizeLinear): qnnweb computes them in float32 (the binary_f32 record: one IEEE
operation per element, as onnxruntime), then quantizes. Every mode, per-channel and scalar constants,
a constant on either side, chains of them; bit-exact with onnxruntime in every variant."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]
RNG = np.random.default_rng(2026_12_04)
H, W = 9, 11
MEAN = np.array([0.485, 0.456, 0.406], np.float32).reshape(1, 3, 1, 1)
STD = np.array([0.229, 0.224, 0.225], np.float32).reshape(1, 3, 1, 1)

# (nodes before the convolution: (op, first input, second input)), each output feeding the next as "t<k>"
PREPROCESSING = {
    "imagenet-mean-std": [("Sub", "x", "mean"), ("Div", "t0", "std")],
    "scale-then-shift": [("Mul", "x", "two"), ("Sub", "t0", "one")],     # [0, 1] -> [-1, 1]
    "constant-first": [("Sub", "one", "x"), ("Div", "two", "t0")],       # c - x, c / x
    "add-per-channel": [("Add", "mean", "x")],
    "divide-by-255": [("Div", "x", "k255")],
}
CONSTANTS = {"mean": MEAN, "std": STD, "one": np.float32(1.0), "two": np.float32(2.0), "k255": np.float32(255.0)}


def model(steps):
    nodes, used = [], {}
    for k, (op, a, b) in enumerate(steps):
        nodes.append(helper.make_node(op, [a, b], [f"t{k}"]))
        used.update({n: np.asarray(CONSTANTS[n], np.float32) for n in (a, b) if n in CONSTANTS})
    nodes += [helper.make_node("Conv", [f"t{len(steps) - 1}", "w", "bias"], ["c"], pads=[1, 1, 1, 1]),
              helper.make_node("Relu", ["c"], ["y"])]
    init = {**used, "w": RNG.normal(0, 0.3, (8, 3, 3, 3)).astype(np.float32),
            "bias": RNG.normal(0, 0.1, 8).astype(np.float32)}
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 8, H, W])], init)


def photo_like():
    """Pixels in [0, 1] (for the division by 255: in [0, 255]); the constant-first case keeps away from 1."""
    return RNG.uniform(0.0, 0.9, (1, 3, H, W)).astype(np.float32)


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("name", list(PREPROCESSING))
def test_matches_onnxruntime(name, quant):
    scale = 255.0 if name == "divide-by-255" else 1.0
    feeds = [{"x": photo_like() * np.float32(scale)} for _ in range(8)]
    data = quantized(model(PREPROCESSING[name]), feeds, quant_format=quant[0], activation=quant[1])
    ops = {op.upper() for op, _, _ in PREPROCESSING[name]}
    assert_matches_onnxruntime(data, photo_like() * np.float32(scale), list(ops), exact=True)



# ---------------------------------------------------------------- ops that commute with quantization

COMMUTING = {
    "relu": [helper.make_node("Relu", ["x"], ["r"])],
    "clip": [helper.make_node("Clip", ["x", "lo", "hi"], ["r"])],
    "maxpool": [helper.make_node("MaxPool", ["x"], ["r"], kernel_shape=[3, 3], pads=[1, 1, 1, 1])],
}


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("name", list(COMMUTING))
def test_commuting_op_beside_the_input_itself_matches_onnxruntime(name, quant):
    """A Relu / Clip / MaxPool of the float input whose result is quantized with its own parameters while
    the input itself is quantized with others (Add(op(x), x)): the op's path quantizes the input with the
    op's output parameters (exact: these ops commute with a monotonic quantization), the other path with
    the input's. Was: refused as a float op on the model's float input."""
    nodes = COMMUTING[name] + [helper.make_node("Add", ["r", "x"], ["s"]),
                               helper.make_node("Conv", ["s", "w"], ["y"], pads=[1, 1, 1, 1])]
    init = {"w": RNG.normal(0, 0.3, (4, 3, 3, 3)).astype(np.float32)}
    if name == "clip":
        init.update(lo=np.float32(-0.25), hi=np.float32(0.5))
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 4, H, W])], init, opset=13), feeds,
                     quant_format=quant[0], activation=quant[1])
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), ["CONV_2D"], exact=True)
