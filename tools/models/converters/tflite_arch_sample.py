"""The TFLite sweep's CI sample: the reduced-width configurations of arch_sample.py (their blocks with small
depths and widths, a 10-class head, 64x64 inputs; MobileViT 128x128, see SIZES) of the architectures
tflite_sweep.py sweeps, converted as it converts them (litert-torch, then ai-edge-quantizer's
``static_wi8_ai8`` calibrated on the photos and one crop of each), written as committed fixtures with
ai-edge-litert's outputs on two photos, for tests/tflite/test_tflite_arch_sample.py.

    ./build.sh arch-sweep --tflite --fixtures tests/data/tflite/arch_sample     # remakes every fixture

Written to DIR: ``<arch>.tflite``, ``<arch>.npz`` (litert_pipeline.reference: ``input_0``, the two photos'
int8 NHWC inputs, and ``output_0``, what ai-edge-litert's default kernels give for them) and
``manifest.json``. Its ``expect`` per architecture is what qnnweb does today: ``exact`` (bit-exact with
ai-edge-litert in every kernel variant) or ``refused`` (a clean UnsupportedModelError naming only the op kinds
of ``refused_ops``); a remake keeps the expectations already in the manifest.
"""

from __future__ import annotations

import hashlib
import importlib.metadata
import json
from pathlib import Path
from unittest import mock

import numpy as np
import qnnweb
from ai_edge_litert.tools import flatbuffer_utils

import arch_sample
import arch_sweep_models as models
from models.converters.litert_pipeline import convert, describe, npz_bytes, quantize, reference

RECIPE = "mmpc"   # quantizer_recipes.RECIPES: ai-edge-quantizer's static_wi8_ai8()
VERSIONED = ["torch", "timm", "litert-torch", "ai-edge-quantizer", "ai-edge-litert"]
REFERENCE = "ai-edge-litert Interpreter(model_path=..., num_threads=1): default kernels (XNNPACK delegate)"
# MobileViT at 128x128: at 64 its last stage's 2x2 map is one patch, and ai-edge-quantizer gives that one-token
# attention's written-out softmax (x - max x, always 0) an output scale of 4e-12, whose SUB LiteRT runs through
# its builtin ADD past its int32 range (which qnnweb refuses)
SIZES = {"mobilevit_xxs": 128}


def nhwc(batch) -> list:
    return [np.ascontiguousarray(x.transpose(1, 2, 0))[None] for x in batch]


def shorten_names(data: bytes) -> bytes:
    """Every tensor renamed t<k> (by LiteRT's own flatbuffer tools; the signature keeps its input and output
    names): litert-torch's names ("..._transformer.Block_0/timm.layers.attention.Attention_attn;17") are over
    half of a small model's bytes."""
    model = flatbuffer_utils.read_model_from_bytearray(data)
    for subgraph in model.subgraphs:
        for k, tensor in enumerate(subgraph.tensors):
            tensor.name = f"t{k}"
    return bytes(flatbuffer_utils.convert_object_to_bytearray(model))


def qnnweb_verdict(data: bytes, arrays: dict) -> dict:
    """What today's qnnweb does with a fixture: refused (the op kinds named), exact in every variant, or not."""
    for variant in qnnweb.VARIANTS:
        try:
            loaded = qnnweb.load(data, variant=variant)
        except qnnweb.UnsupportedModelError as exc:
            return {"qnnweb": "refused", "refused_ops": sorted({op.partition(" ")[0] for _, op, _ in exc.problems})}
        with loaded:
            for x, want in zip(arrays["input_0"], arrays["output_0"]):
                if not np.array_equal(loaded.run(x)[0], want):
                    return {"qnnweb": f"inexact in {variant}"}
    return {"qnnweb": "exact"}


def make(out: Path, samples: Path, names: list, log) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    kept = json.loads(manifest_path.read_text())["architectures"] if manifest_path.exists() else {}
    all_photos = models.photo_paths(samples)
    photos = [samples / name for name in arch_sample.PHOTOS]
    manifest = {"about": "made by tools/models/converters/tflite_arch_sample.py (./build.sh arch-sweep --tflite "
                         "--fixtures DIR); tests/tflite/test_tflite_arch_sample.py checks each architecture as its "
                         "'expect' says",
                "versions": {name: importlib.metadata.version(name) for name in VERSIONED},
                "reference": REFERENCE, "recipe": "static_wi8_ai8", "photos": list(arch_sample.PHOTOS),
                "architectures": {}}
    for arch in arch_sample.SAMPLE:
        if arch.name not in names:
            continue
        size = SIZES.get(arch.name, arch_sample.SIZE)
        with mock.patch.object(arch_sample, "SIZE", size):
            built = arch_sample.build(arch, all_photos)
        calibration = models.photo_inputs(all_photos, size, built.mean, built.std,
                                          crops_per_photo=arch_sample.CALIBRATION_CROPS, seed=1)
        data = shorten_names(quantize(convert(built.model, built.input_shape), RECIPE, nhwc(calibration)))
        path = out / f"{arch.name}.tflite"
        path.write_bytes(data)
        arrays = reference(path, nhwc(models.photo_inputs(photos, size, built.mean, built.std)))
        blob = npz_bytes(arrays)
        (out / f"{arch.name}.npz").write_bytes(blob)
        verdict = qnnweb_verdict(data, arrays)
        today = "refused" if verdict["qnnweb"] == "refused" else "exact"   # inexact: the test says so
        log(f"{arch.name}: {len(data)} bytes, qnnweb {verdict}")
        manifest["architectures"][arch.name] = {
            "expect": kept.get(arch.name, {}).get("expect", today), "refused_ops": verdict.get("refused_ops", []),
            "qnnweb": verdict["qnnweb"], "model": built.timm_name, "input_shape": list(built.input_shape),
            "file": path.name, "bytes": len(data), "sha256": hashlib.sha256(data).hexdigest(),
            "reference": f"{arch.name}.npz", "npz_sha256": hashlib.sha256(blob).hexdigest(),
            "ops": describe(path)["ops"]}
        manifest_path.write_text(json.dumps(manifest, indent=1) + "\n")
    return manifest
