"""Blocks of today's architectures as the real tools write them: timm's RepViT block (a BatchNormalization
no convolution absorbs, GELU) and timm's GELU Mlp, exported by torch.onnx and quantized by quantize_static
in the arch sweep's three modes (tests/data/onnx/gelu_blocks/, made by
tools/models/converters/make_gelu_block_fixtures.py). qnnweb gives onnxruntime's outputs bit for bit, in
every variant. Were refused: "op Erf", "op BatchNormalization"."""

from pathlib import Path

import numpy as np
import pytest
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb

FIXTURES = sorted((Path(__file__).parents[1] / "data" / "onnx" / "gelu_blocks").glob("*.onnx"))


def test_every_fixture_is_there():
    assert {p.stem for p in FIXTURES} == {f"{block}_{mode}" for block in ("repvit_block", "gelu_mlp")
                                          for mode in ("qdq_u8s8", "qdq_s8s8", "qop_u8")}


@pytest.mark.parametrize("path", FIXTURES, ids=lambda p: p.stem)
def test_block_matches_onnxruntime(path):
    data = path.read_bytes()
    stored = np.load(path.with_suffix(".npz"))
    session = ReferenceSession(data)
    for x, y in zip(stored["x"], stored["y"], strict=True):
        np.testing.assert_array_equal(session.run({"x": x})[0], y, err_msg="the fixture's stored outputs")
    expected = {"DIV_SCALAR"} | ({"BATCH_NORM"} if path.stem.startswith("repvit") else set())
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(data, variant=variant)
        assert expected <= {o.type for o in model._graph.ops}
        for x, y in zip(stored["x"], stored["y"], strict=True):
            np.testing.assert_array_equal(model.run(x)[0], y, err_msg=variant)
