"""The TFLite sweep's CI sample (tests/data/tflite/arch_sample/): reduced-width copies of DeiT-tiny, MobileViT-xxs,
ConvNeXt-atto, RepViT-m0.9 and EfficientFormerV2-s0 (arch_sample.py's configurations, seeded realistic weights)
converted by litert-torch and quantized by ai-edge-quantizer's static_wi8_ai8, with ai-edge-litert's outputs on
two photos. Made by tools/models/converters/tflite_arch_sample.py (``./build.sh arch-sweep --tflite --fixtures
tests/data/tflite/arch_sample``).

Each architecture of manifest.json says what qnnweb must do with it: ``"expect": "exact"``, give ai-edge-litert's
every output byte on both photos in every kernel variant; ``"expect": "refused"``, raise a clean
``qnnweb.UnsupportedModelError`` naming only op kinds of its ``refused_ops``.
"""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import qnnweb

pytestmark = pytest.mark.slow  # five whole architectures, each in every variant

SAMPLE = Path(__file__).resolve().parents[1] / "data" / "tflite" / "arch_sample"
MANIFEST = json.loads((SAMPLE / "manifest.json").read_text())
ARCHITECTURES = MANIFEST["architectures"]


def fixture(entry):
    data = (SAMPLE / entry["file"]).read_bytes()
    assert hashlib.sha256(data).hexdigest() == entry["sha256"], f"{entry['file']} is not the file the manifest lists"
    reference = SAMPLE / entry["reference"]
    assert hashlib.sha256(reference.read_bytes()).hexdigest() == entry["npz_sha256"], entry["reference"]
    return data, np.load(reference)


def test_the_sample_is_small_and_complete():
    assert set(ARCHITECTURES) == {"deit_tiny_patch16_224", "mobilevit_xxs", "convnext_atto", "repvit_m0_9",
                                  "efficientformerv2_s0"}
    assert max(entry["bytes"] for entry in ARCHITECTURES.values()) <= 300_000
    assert sum(p.stat().st_size for p in SAMPLE.iterdir()) <= 1_500_000
    on_disk = {p.name for p in SAMPLE.iterdir()} - {"manifest.json"}
    assert on_disk == {name for e in ARCHITECTURES.values() for name in (e["file"], e["reference"])}
    for name, entry in ARCHITECTURES.items():
        assert entry["expect"] in ("exact", "refused"), name
        assert entry["expect"] != "refused" or entry["refused_ops"], f"{name}: refused, but for which ops?"


@pytest.mark.parametrize("name", sorted(ARCHITECTURES))
def test_architecture(name):
    entry = ARCHITECTURES[name]
    data, reference = fixture(entry)
    inputs, outputs = reference["input_0"], reference["output_0"]
    n, c, h, w = entry["input_shape"]
    assert len(inputs) == len(MANIFEST["photos"]) and inputs.shape[1:] == (n, h, w, c)
    if entry["expect"] == "refused":
        with pytest.raises(qnnweb.UnsupportedModelError) as error:
            qnnweb.load(data)
        named = {op_type.partition(" ")[0] for _, op_type, _ in error.value.problems}
        assert named and named <= set(entry["refused_ops"]), f"{name} now refuses {sorted(named)}"
        return
    for variant in qnnweb.VARIANTS:
        with qnnweb.load(data, variant=variant) as model:
            for k, (x, want) in enumerate(zip(inputs, outputs)):
                np.testing.assert_array_equal(model.run(x)[0], want, err_msg=f"{name}, {variant}, photo {k}")
