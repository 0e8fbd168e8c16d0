"""LayerNormalization next to float ops that onnxruntime's QOperator form leaves in float with it: a
BatchNormalization, GELU or HardSwish whose result only moves (Reshape, Transpose) on to the
LayerNormalization (their tables become its input values, one per column where the BatchNormalization's
channels are the normalized axis), and a LayerNormalization whose result only moves on to the model's
float output (float32). Bit-exact with onnxruntime in every variant. (A LayerNormalization of another
normalization's float result: test_onnx_float32_path.py.)"""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

import qnnweb

RNG = np.random.default_rng(4242)
C, H, W = 6, 3, 5
SHAPE = [1, 3, H, W]
MODES = {"qoperator-u8": dict(quant_format="QOperator", activation="QUInt8"),
         "qoperator-s8": dict(quant_format="QOperator", activation="QInt8"),
         "qdq-u8s8": dict(quant_format="QDQ", activation="QUInt8")}


def feeds(count=8):
    return [{"x": RNG.normal(0, 1, SHAPE).astype(np.float32)} for _ in range(count)]


def batch_norm(x, y):
    """A BatchNormalization no convolution absorbs (after an Add), as the differential campaign draws it."""
    return helper.make_node("BatchNormalization", [x, "bn_scale", "bn_bias", "bn_mean", "bn_var"], [y], epsilon=1e-5)


def normal(mean, sigma, shape):
    return RNG.normal(mean, sigma, shape).astype(np.float32)


def initializers(normalized):
    return {"w": normal(0, 0.5, (C, 3, 1, 1)), "k": normal(0, 0.3, (1, C, 1, 1)),
            "bn_scale": RNG.uniform(0.5, 2, C).astype(np.float32), "bn_bias": normal(0, 0.5, C),
            "bn_mean": normal(0, 0.3, C), "bn_var": RNG.uniform(0.5, 2, C).astype(np.float32),
            "g": normal(1, 0.3, normalized), "b": normal(0, 0.3, normalized),
            "tokens": np.array([1, C, H * W], np.int64), "w2": normal(0, 0.5, (C, 4))}


def tokens_model(float_op, tail="matmul"):
    """Conv -> Add -> `float_op` -> Reshape [1, C, H*W] -> Transpose [1, H*W, C] -> LayerNormalization over C,
    then a MatMul (quantized again) or, with tail "output", a Transpose to the model's float output."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Add", ["c", "k"], ["a"]),
             float_op("a", "f"), helper.make_node("Reshape", ["f", "tokens"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),
             helper.make_node("LayerNormalization", ["t", "g", "b"], ["l"], axis=-1, epsilon=1e-5)]
    if tail == "output":
        nodes.append(helper.make_node("Transpose", ["l"], ["y"], perm=[0, 2, 1]))
        return float_model(nodes, [("x", SHAPE)], [("y", [1, C, H * W])], initializers([C]), opset=20)
    nodes.append(helper.make_node("MatMul", ["l", "w2"], ["y"]))
    return float_model(nodes, [("x", SHAPE)], [("y", [1, H * W, 4])], initializers([C]), opset=20)


FLOAT_OPS = {"batch-norm": batch_norm,
             "gelu": lambda x, y: helper.make_node("Gelu", [x], [y]),
             "hard-swish": lambda x, y: helper.make_node("HardSwish", [x], [y])}


def layer_norm_inputs(data):
    return [len(o.inputs) for o in qnnweb.load(data)._graph.ops if o.type == "LAYER_NORM"]


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("float_op", list(FLOAT_OPS))
def test_float_op_moved_into_layer_norm(mode, float_op):
    data = quantized(tokens_model(FLOAT_OPS[float_op]), feeds(), **MODES[mode])
    if mode.startswith("qoperator"):   # the float op's tables are the normalization's input values
        assert layer_norm_inputs(data) == [4]
    for _ in range(3):
        assert_matches_onnxruntime(data, feeds(1)[0]["x"], ["LAYER_NORM"], exact=True)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("float_op", ["batch-norm", "gelu"])
def test_layer_norm_moved_to_the_float_output(mode, float_op):
    """BatchNormalization / GELU -> moves -> LayerNormalization -> Transpose -> the model's float output."""
    data = quantized(tokens_model(FLOAT_OPS[float_op], tail="output"), feeds(), **MODES[mode])
    for _ in range(3):
        assert_matches_onnxruntime(data, feeds(1)[0]["x"], ["LAYER_NORM"], exact=True)


def test_batch_norm_channels_across_a_row_are_refused():
    """BatchNormalization -> LayerNormalization over W: each row holds one channel, the rows differ, so no
    table per column computes it: refused, by name."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Add", ["c", "k"], ["a"]),
             batch_norm("a", "f"),
             helper.make_node("LayerNormalization", ["f", "g", "b"], ["l"], axis=-1, epsilon=1e-5),
             helper.make_node("Conv", ["l", "w4"], ["y"])]
    init = initializers([W])
    init["w4"] = normal(0, 0.5, (4, C, 1, 1))
    model = float_model(nodes, [("x", SHAPE)], [("y", [1, 4, H, W])], init, opset=20)
    data = quantized(model, feeds(), **MODES["qoperator-u8"])
    with pytest.raises(qnnweb.UnsupportedModelError, match="its float output 'f' is used in float by "
                                                           "LayerNormalization .* otherwise than one per column"):
        qnnweb.load(data)
