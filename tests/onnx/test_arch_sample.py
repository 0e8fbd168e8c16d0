"""The architecture sweep's CI sample (tests/data/onnx/arch_sample/): reduced-width copies of today's vision
architectures (DeiT, ConvNeXt, MobileViT, RepViT, EfficientFormerV2, MobileNetV4 hybrid and conv, LeViT,
YOLO11n, YOLOv8n) with seeded realistic weights, exported by torch.onnx and quantized by quantize_static
(QDQ u8s8 and s8s8; QOperator for the MobileNetV4-conv), with onnxruntime's outputs on two photos
(qnnweb.cli.reference_onnx.ReferenceSession, as the sweep compares). Made by
tools/models/converters/arch_sample.py (``./build.sh arch-sweep --fixtures tests/data/onnx/arch_sample``).

Each architecture of manifest.json says what qnnweb must do with every one of its fixtures:

- ``"expect": "exact"``: it loads and gives onnxruntime's every output byte on both photos, in every variant;
- ``"expect": "refused"``: loading raises a clean ``qnnweb.UnsupportedModelError`` whose problems name only
  op kinds of the architecture's ``refused_ops`` (what today's qnnweb named when the fixtures were made).

When an operator lands and an architecture runs, flip its ``"expect": "refused"`` line to ``"expect": "exact"``:
that line is the whole change (the reference outputs are already there). A refused architecture that loads
fails here, saying so. qnnweb's refusal names the op types it has no lowering for first: once those are
supported, it can name an op kind it knows but refuses in that form (an activation x activation MatMul); a
refusal naming a kind the manifest does not list fails with the ``refused_ops`` line to write instead (one
line too, and a deliberate one: a kind refused where it was not is also how a regression shows).
"""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import qnnweb

pytestmark = pytest.mark.slow  # ten whole architectures, each in every variant (about 20 s)

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "onnx" / "arch_sample"
MANIFEST = json.loads((SAMPLE / "manifest.json").read_text())
ARCHITECTURES = MANIFEST["architectures"]
EXPECTATIONS = ("exact", "refused")


def photo_inputs(entry):
    """The stored photos normalized as tools/models/converters/arch_sweep_models.photo_inputs does: x / 255,
    minus mean, over std, in float32, NCHW."""
    pixels = np.load(SAMPLE / MANIFEST["photos"]["file"])
    x = pixels.astype(np.float32) / np.float32(255)
    x = (x - np.float32(entry["mean"])) / np.float32(entry["std"])
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def fixture_bytes(fixture):
    data = (SAMPLE / fixture["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == fixture["sha256"], \
        f"{fixture['file']} is not the file the manifest lists"
    return data


def test_the_sample_is_small_and_complete():
    sizes = {f["file"]: (SAMPLE / f["file"]).stat().st_size for e in ARCHITECTURES.values() for f in e["fixtures"]}
    assert max(sizes.values()) <= 300_000, sizes
    assert sum(p.stat().st_size for p in SAMPLE.iterdir()) <= 3_500_000
    for name, entry in ARCHITECTURES.items():
        assert entry["expect"] in EXPECTATIONS, f"{name}: expect {entry['expect']!r}, not one of {EXPECTATIONS}"
        assert entry["expect"] != "refused" or entry["refused_ops"], f"{name}: refused, but for which ops?"
        assert {f["mode"] for f in entry["fixtures"]} >= {"qdq_u8s8", "qdq_s8s8"}, name
    assert any(e["expect"] == "exact" for e in ARCHITECTURES.values())


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_architecture(name):
    entry = ARCHITECTURES[name]
    inputs = photo_inputs(entry)
    assert inputs.shape[1:] == tuple(entry["input_shape"][1:])
    reference = np.load(SAMPLE / entry["reference"])
    for fixture in entry["fixtures"]:
        data, mode = fixture_bytes(fixture), fixture["mode"]
        if entry["expect"] == "refused":
            try:
                qnnweb.load(data).close()
            except qnnweb.UnsupportedModelError as error:
                named = {op_type.partition(" ")[0] for _, op_type, _ in error.problems}
                now = sorted(named | set(entry["refused_ops"]))
                assert named and named <= set(entry["refused_ops"]), (
                    f"{name} {mode}: refused for {sorted(named)}, the manifest lists {entry['refused_ops']}: if "
                    f"that is progress, not a regression, its line becomes \"refused_ops\": {json.dumps(now)}")
            else:
                pytest.fail(f"{name} {mode} loads now: flip its manifest entry to \"expect\": \"exact\"")
            continue
        for variant in qnnweb.VARIANTS:
            with qnnweb.load(data, variant=variant) as model:
                for p, x in enumerate(inputs):
                    outputs = model.run(x[None])
                    for k, got in enumerate(outputs):
                        want = reference[f"{mode}/{p}/{k}"]
                        got = np.asarray(got)
                        assert got.shape == want.shape and got.dtype == want.dtype, (name, mode, k)
                        differ = int((got != want).sum())
                        assert differ == 0, f"{name} {mode} [{variant}] photo {p} output {k}: " \
                                            f"{differ} of {got.size} elements differ from onnxruntime"
