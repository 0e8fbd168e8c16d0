#!/usr/bin/env python3
"""The modern-architecture model set of ``./build.sh bench --modern``: DeiT-tiny, MobileViT-xxs and YOLO11n at their
own input sizes (224, 256, 640), with the arch sweep's realistic random weights (arch_sweep_models.build), as an
ONNX file quantized by quantize_static in the sweep's default mode (qdq_u8s8) and as a TFLite file of the same
torch model made by litert-torch and ai-edge-quantizer's static_wi8_ai8 (litert_pipeline), which LiteRT.js runs.

Two steps, one per virtualenv (build.sh runs both when a file is missing):

    onnx   (.cache/arch-sweep-venv)  builds each float model, saves it as a torch.export program
           (``<name>.pt2``: the very weights, no timm or ultralytics needed to read it), exports and quantizes
           the ONNX file ``<name>_qdq_u8s8.onnx`` and writes its sidecar ``<name>_qdq_u8s8.json`` (preprocessing
           for the bench's photo input, output meaning, the name of its TFLite twin)
    tflite (.cache/converters-venv)  converts each ``<name>.pt2`` with litert-torch, quantizes it with
           static_wi8_ai8 on the same calibration photos, inputs and outputs left float32 (LiteRT.js's
           JavaScript tensors cannot carry int8), and writes ``<name>_static_wi8_ai8.tflite``; a model
           litert-torch or the quantizer cannot take gets the reason in the ONNX sidecar
           (``tflite_twin_error``), which the bench reports instead of a LiteRT.js time

Nothing is downloaded (the weights are random: timm ``pretrained=False``, ultralytics from its yaml offline).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "build.sh").is_file())
sys.path.insert(0, str(ROOT / "tools"))  # tools/: the tools' import root (tools/README.md)

import arch_sweep_models as models  # noqa: E402  (first: it makes torchvision importable)
import torch  # noqa: E402
from bench.benchmark.common import MODERN_ARCHS, MODERN_DIR  # noqa: E402  (the set the bench runs)

ONNX_MODE = "qdq_u8s8"         # arch_sweep_onnx.MODES: the sweep's default user recipe
TFLITE_RECIPE = "mmpc"         # quantizer_recipes.RECIPES: ai-edge-quantizer's static_wi8_ai8()


def log(msg: str) -> None:
    print(f"[bench-models] {msg}", file=sys.stderr, flush=True)


def onnx_path(out: Path, name: str) -> Path:
    return out / f"{name}_{ONNX_MODE}.onnx"


def tflite_path(out: Path, name: str) -> Path:
    return out / f"{name}_static_wi8_ai8.tflite"


def calibration(photos, size: int, mean, std):
    """The arch sweep's calibration set ([N, 3, size, size] float32: each photo's centre square and one seeded
    crop)."""
    return models.photo_inputs(photos, size, mean, std, crops_per_photo=1, seed=1)


def sidecar(name: str, built) -> dict:
    """What the bench needs to feed the photo and read the output, in the demo models' sidecar format
    (pixels 0..255: mean / std scaled by 255)."""
    size = built.input_shape[-1]
    return {
        "source": f"{built.timm_name}, random weights made realistic (tools/models/converters/arch_sweep_models.py; "
                  f"{built.note}), quantize_static {ONNX_MODE}",
        "preprocess": {"resize": size, "crop": size, "mean": [255 * m for m in built.mean],
                       "std": [255 * s for s in built.std]},
        "normalization": {"size": size, "mean": list(built.mean), "std": list(built.std)},
        "output": {"meaning": "detections: boxes and class scores, one column per anchor" if name.startswith("yolo")
                   else "logits (random weights: no labels)"},
        "tflite_twin": tflite_path(Path("."), name).name,
    }


def make_onnx(name: str, photos, out: Path) -> None:
    import arch_sweep_onnx as ox   # noqa: PLC0415  (onnxruntime's quantizer: the arch-sweep virtualenv only)

    arch = next(a for a in models.ARCHITECTURES if a.name == name)
    t0 = time.monotonic()
    built = models.build(arch, photos, small=False)
    size = built.input_shape[-1]
    # YOLO's Detect head caches its anchors and the input shape on the module at its first forward pass: one plain
    # pass first, so that neither torch.export nor the ONNX trace leaves its own tensors there for the other
    example = torch.zeros(built.input_shape)
    with torch.no_grad():
        built.model(example)
        program = torch.export.export(built.model, (example,))
    with tempfile.TemporaryDirectory() as tmp:
        float_path = Path(tmp) / f"{name}.onnx"
        ox.export(built.model, built.input_shape, float_path)
        data = ox.quantize(float_path, ox.MODES_BY_NAME[ONNX_MODE],
                           calibration(photos, size, built.mean, built.std))
    torch.export.save(program, str(out / f"{name}.pt2"))
    onnx_path(out, name).write_bytes(data)
    onnx_path(out, name).with_suffix(".json").write_text(json.dumps(sidecar(name, built), indent=1) + "\n")
    log(f"{name}: {onnx_path(out, name).name} ({len(data)} bytes, {size}x{size}) in {time.monotonic() - t0:.0f} s")


def traced_module(program):
    """The saved program as the nn.Module litert-torch converts. ExportedProgram.module() forbids train() and eval()
    (litert_pipeline.convert calls eval()); the graph was traced in eval mode, so nn.Module's own methods, which
    only set the flags, are given back."""
    module = program.module()
    del module.train, module.eval
    return module


def make_tflite(name: str, photos, out: Path) -> None:
    import numpy as np  # noqa: PLC0415
    from models.converters.litert_pipeline import convert, quantize  # noqa: PLC0415  (converters venv only)

    side_path = onnx_path(out, name).with_suffix(".json")
    side = json.loads(side_path.read_text())
    t0 = time.monotonic()
    try:
        program = torch.export.load(str(out / f"{name}.pt2"))
        norm = side["normalization"]
        shape = (1, 3, norm["size"], norm["size"])
        nhwc = [np.ascontiguousarray(x.transpose(1, 2, 0))[None]
                for x in calibration(photos, norm["size"], norm["mean"], norm["std"])]
        data = quantize(convert(traced_module(program), shape), TFLITE_RECIPE, nhwc, float_edges=True)
    except Exception as exc:  # noqa: BLE001  (recorded for the bench, which reports it instead of a time)
        side["tflite_twin_error"] = f"litert-torch + ai-edge-quantizer failed: {type(exc).__name__}: " \
                                    f"{str(exc).strip().splitlines()[0] if str(exc).strip() else ''}"[:400]
        side_path.write_text(json.dumps(side, indent=1) + "\n")
        log(f"{name}: {side['tflite_twin_error']}")
        return
    tflite_path(out, name).write_bytes(data)
    side.pop("tflite_twin_error", None)
    side_path.write_text(json.dumps(side, indent=1) + "\n")
    log(f"{name}: {tflite_path(out, name).name} ({len(data)} bytes) in {time.monotonic() - t0:.0f} s")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="tools/models/converters/bench_models.py",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("step", choices=("onnx", "tflite"), help="which file to make (see the module's doc)")
    parser.add_argument("--only", nargs="+", choices=MODERN_ARCHS, default=list(MODERN_ARCHS), metavar="NAME",
                        help=f"models (default: {' '.join(MODERN_ARCHS)})")
    parser.add_argument("--out", type=Path, default=ROOT / MODERN_DIR, help=f"folder (default {MODERN_DIR})")
    parser.add_argument("--samples", type=Path, default=ROOT / "data" / "samples", help="calibration photos")
    parser.add_argument("--missing", action="store_true", help="only the files that do not exist yet")
    return parser.parse_args(argv)


def main(argv=None) -> int:
    args = parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    os.environ["YOLO_OFFLINE"] = "1"
    os.environ.setdefault("YOLO_CONFIG_DIR", str(ROOT / ".cache" / "arch-sweep-ultralytics"))
    photos = models.photo_paths(args.samples)
    torch.set_num_threads(1)
    for name in args.only:
        if args.step == "onnx":
            if not (args.missing and onnx_path(args.out, name).is_file()):
                make_onnx(name, photos, args.out)
        elif not (args.missing and (tflite_path(args.out, name).is_file() or "tflite_twin_error" in json.loads(
                onnx_path(args.out, name).with_suffix(".json").read_text()))):
            make_tflite(name, photos, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
