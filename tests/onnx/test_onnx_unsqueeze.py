"""Unsqueeze of an activation (MobileNetV4-hybrid's attention reshapes its keys with one): a reshape of the
int8 tensor, bit-exact with onnxruntime in quantize_static's forms. Was refused: "op Unsqueeze: operator not
supported" (Unsqueeze ran only on constants)."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from test_onnx_quantizer_forms import feeds

RNG = np.random.default_rng(43)
MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8")]


@pytest.mark.parametrize("axes", [[2], [-2]], ids=str)
@pytest.mark.parametrize("mode", MODES, ids=["-".join(m) for m in MODES])
def test_unsqueeze_between_convolutions(mode, axes):
    """Conv -> Reshape [1, 4, 15] -> Unsqueeze -> [1, 4, 1, 15] -> Conv."""
    init = {"w": RNG.normal(0, 0.6, (4, 3, 1, 1)).astype(np.float32),
            "w2": RNG.normal(0, 0.5, (5, 4, 1, 1)).astype(np.float32),
            "shape": np.array([1, 4, 15], np.int64), "axes": np.array(axes, np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Reshape", ["c", "shape"], ["r"]),
             helper.make_node("Unsqueeze", ["r", "axes"], ["u"]), helper.make_node("Conv", ["u", "w2"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 3, 5])], [("y", [1, 5, 1, 15])], init)
    data = quantized(model, feeds([1, 3, 3, 5]), quant_format=mode[0], activation=mode[1], per_channel=True)
    assert_matches_onnxruntime(data, feeds([1, 3, 3, 5], 1, seed=9)[0]["x"], ["CONV_2D"], exact=True)
