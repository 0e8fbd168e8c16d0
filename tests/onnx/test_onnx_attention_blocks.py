"""Attention blocks as the real tools make them (tests/data/onnx/attention, from
tools/models/converters/make_attention_fixtures.py): timm's Attention (a DeiT block's: qkv Linear, the
[B, N, 3, H, D] head split permuted (2, 0, 3, 1, 4), scaled_dot_product_attention as torch.onnx exports it)
and ultralytics' Attention (YOLO11's C2PSA: 1x1 convolutions, heads split from a view, q^T k, v attn^T),
quantized by onnxruntime's quantize_static (QDQ uint8 / int8 activations, QOperator). qnnweb's
outputs bit-exact with onnxruntime's, the ones stored with the fixture and a live session's, in every
variant."""

from pathlib import Path

import numpy as np
import pytest
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "onnx" / "attention"
NAMES = sorted(p.stem for p in FIXTURES.glob("*.onnx"))


def test_fixtures_are_there():
    assert {n.rsplit("_", 2)[0] for n in NAMES} == {"timm_attention", "yolo_attention"}, NAMES


@pytest.mark.parametrize("name", NAMES)
def test_attention_block_matches_onnxruntime(name):
    data = (FIXTURES / f"{name}.onnx").read_bytes()
    stored = np.load(FIXTURES / f"{name}.npz")
    session = ReferenceSession(data)
    for x, expected in zip(stored["inputs"], stored["outputs"]):
        np.testing.assert_array_equal(session.run({"x": x})[0], expected, err_msg="onnxruntime changed")
        for variant in qnnweb.VARIANTS:
            model = qnnweb.load(data, variant=variant)
            assert "BATCH_MATMUL" in {op.type for op in model._graph.ops}
            np.testing.assert_array_equal(model.run(x)[0], expected, err_msg=variant)


def test_profile_names_the_products():
    """Model.profile's rows name the two products batch_matmul, with their multiply-adds (3 heads x 17 x
    16 x 17 each), and profile_by_family sums them."""
    data = (FIXTURES / "timm_attention_qdq_u8s8.onnx").read_bytes()
    x = np.load(FIXTURES / "timm_attention_qdq_u8s8.npz")["inputs"][0]
    with qnnweb.load(data) as model:
        rows = [r for r in model.profile(x, repeats=1) if r["kind"] == "batch_matmul"]
        assert [(r["family"], r["macs"]) for r in rows] == [("batch_matmul", 3 * 17 * 16 * 17)] * 2
        assert model.profile_by_family(x, repeats=1)["batch_matmul"]["ops"] == 2
