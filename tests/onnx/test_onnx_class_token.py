"""ViT / DeiT's class token: a constant concatenated to the patch tokens along the token axis, as torch
exports it (the cls_token parameter, or its Expand to the batch, which the importer folds) and
onnxruntime's quantize_static quantizes it: QDQ (a DequantizeLinear of the quantized constant into Concat)
and QOperator (QLinearConcat with the constant as an input), uint8 and int8 activations, the constant
first or last. The constant runs as a BROADCAST_TO (to its own shape) into an activation that CONCATENATION takes as it
takes the others: bit-exact with onnxruntime in every variant."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

RNG = np.random.default_rng(1207)
D, GRID, E = 8, 3, 5
FORMATS = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]


def model(expanded, first):
    """Patch embedding (a strided Conv), the tokens [1, GRID * GRID, D], the class token concatenated,
    then a MatMul over the features."""
    cls = "cls_expanded" if expanded else "cls"
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], strides=[2, 2]),
             helper.make_node("Reshape", ["c", "flat"], ["f"]),
             helper.make_node("Transpose", ["f"], ["t"], perm=[0, 2, 1]),
             helper.make_node("Concat", [cls, "t"] if first else ["t", cls], ["tokens"], axis=1),
             helper.make_node("MatMul", ["tokens", "m"], ["y"])]
    if expanded:
        nodes.insert(0, helper.make_node("Expand", ["cls", "batch_shape"], ["cls_expanded"]))
    init = {"w": RNG.normal(0, 0.4, (D, 3, 2, 2)).astype(np.float32), "flat": np.array([1, D, GRID * GRID], np.int64),
            "cls": RNG.normal(0, 0.8, (1, 1, D)).astype(np.float32), "m": RNG.normal(0, 0.4, (D, E)).astype(np.float32),
            "batch_shape": np.array([1, 1, D], np.int64)}
    if not expanded:
        del init["batch_shape"]
    return float_model(nodes, [("x", [1, 3, 2 * GRID, 2 * GRID])], [("y", [1, GRID * GRID + 1, E])], init)


@pytest.mark.parametrize("first", [True, False], ids=["token-first", "token-last"])
@pytest.mark.parametrize("expanded", [False, True], ids=["parameter", "expanded"])
@pytest.mark.parametrize("quant_format,activation", FORMATS)
def test_class_token_matches_onnxruntime(quant_format, activation, expanded, first):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, 2 * GRID, 2 * GRID)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(expanded, first), feeds, quant_format=quant_format, activation=activation)
    for _ in range(3):
        assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, 2 * GRID, 2 * GRID)).astype(np.float32),
                                   ["BROADCAST_TO"], exact=True)
