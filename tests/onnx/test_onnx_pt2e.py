"""A model quantized by PyTorch's own flow (PT2E: torch.export, torchao's prepare_pt2e / convert_pt2e with
executorch's XNNPACKQuantizer, per-channel symmetric weights) and exported by torch.onnx.export(dynamo=True):
QDQ with int8 activations, float biases, the Clip of a ReLU6 between QuantizeLinear / DequantizeLinear
pairs. tests/data/onnx/pt2e/ holds the model and onnxruntime's outputs for its inputs
(tools/models/converters/make_pt2e_fixture.py made them; manifest.json says with what): qnnweb gives the
same bytes in every variant, and onnxruntime here gives them too."""

import json
from pathlib import Path

import numpy as np
import pytest
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb

DATA = Path(__file__).resolve().parents[1] / "data" / "onnx" / "pt2e"


def test_manifest_lists_the_fixture():
    manifest = json.loads((DATA / "manifest.json").read_text())
    assert set(manifest["files"]) == {"pt2e_cnn.onnx", "pt2e_cnn.npz"}
    assert "prepare_pt2e" in manifest["recipe"] and "dynamo=True" in manifest["recipe"]


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_pt2e_model_matches_onnxruntime(variant):
    data = (DATA / "pt2e_cnn.onnx").read_bytes()
    stored = np.load(DATA / "pt2e_cnn.npz")
    session = ReferenceSession(data)
    name = session.session.get_inputs()[0].name
    with qnnweb.load(data, variant=variant) as model:
        ops = {op.type for op in model._graph.ops}
        assert {"CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "MUL"} <= ops, ops
        for x, want in zip(stored["input_0"], stored["output_0"], strict=True):
            np.testing.assert_array_equal(session.run({name: x})[0], want, err_msg="onnxruntime moved")
            np.testing.assert_array_equal(model.run(x)[0], want, err_msg=variant)
