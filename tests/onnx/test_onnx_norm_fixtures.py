"""LayerNormalization as the real tools write it: timm's ConvNeXt (LayerNorm2d: Transpose -> LayerNormalization
-> Transpose, the blocks' LayerNorm on NHWC tensors, the head's on [N, C, 1, 1]) and VisionTransformer (the
blocks' and the final LayerNorm on [N, tokens, channels]) at reduced width, exported by torch.onnx and quantized
by quantize_static (QDQ u8s8, per-channel weights). The models and onnxruntime's outputs are fixtures
(tests/data/onnx/norm/, made by tools/models/converters/make_norm_fixtures.py): every output bit-exact with
them and with onnxruntime now, in every variant."""

from pathlib import Path

import numpy as np
import pytest
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "onnx" / "norm"


@pytest.mark.parametrize("name, norms", [("convnext", 9), ("vit", 3)])
def test_fixture_bit_exact(name, norms):
    data = (FIXTURES / f"{name}.onnx").read_bytes()
    reference = np.load(FIXTURES / f"{name}.npz")
    session = ReferenceSession(data)
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(data, variant=variant)
        assert sum(op.type == "LAYER_NORM" for op in model._graph.ops) == norms
        for x, want in zip(reference["inputs"], reference["outputs"], strict=True):
            got = model.run(x)[0]
            np.testing.assert_array_equal(got, want, err_msg=f"{name} {variant}: the fixture's outputs")
            np.testing.assert_array_equal(got, session.run({"x": x})[0], err_msg=f"{name} {variant}: onnxruntime")


def test_profile_names_layer_norm():
    data = (FIXTURES / "vit.onnx").read_bytes()
    x = np.load(FIXTURES / "vit.npz")["inputs"][0]
    rows = qnnweb.load(data).profile(x, repeats=1)
    assert [row["shape"] for row in rows if row["kind"] == "layer_norm"] == [[1, 16, 24], [1, 16, 24], [1, 24]]
