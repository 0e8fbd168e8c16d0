#!/usr/bin/env python3
"""The arch sweep's TFLite path: the transformer-era architectures of arch_sweep_models (random weights,
128x128 inputs, 100 classes) converted the way a user makes a TFLite file today -- litert-torch, then
ai-edge-quantizer's ``static_wi8_ai8`` calibrated on the sample photos -- then loaded by qnnweb: either it
refuses (the op kinds of its UnsupportedModelError) or it runs, in each kernel variant, and is compared with
ai-edge-litert on the photos. For each architecture it lists the ops the converter emitted.

Writes DIR/tflite-sweep.md, DIR/tflite-sweep.json and each quantized DIR/<name>.tflite (rewritten after each
architecture). Run it through ``./build.sh arch-sweep --tflite [ARGS]``, which installs timm and torchvision
into the converter virtualenv .cache/converters-venv (docs/arch-sweep.md); ``--help`` lists the options.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import sys
import time
from pathlib import Path

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "build.sh").is_file())
sys.path.insert(0, str(ROOT / "tools"))  # tools/: the tools' import root (tools/README.md)

try:
    import numpy as np
    import qnnweb
    from qnnweb.cli.reference_litert import litert_outputs
    import arch_sweep_models as models
    import tflite_arch_sample
    from models.converters.litert_pipeline import convert, describe, quantize, quantize_input
except ImportError as exc:   # run outside its virtualenv
    sys.exit(f"tflite-sweep: {exc} -- run it with ./build.sh arch-sweep --tflite, which makes its virtualenv "
             ".cache/converters-venv (litert-torch, ai-edge-quantizer, timm)")

# The architectures the modern-architecture work targets, in arch_sweep_models' names.
DEFAULT_ARCHS = ["deit_tiny_patch16_224", "mobilevit_xxs", "convnext_atto", "repvit_m0_9", "efficientformerv2_s0"]
RECIPE = "mmpc"   # quantizer_recipes.RECIPES: ai-edge-quantizer's static_wi8_ai8()


def log(msg: str) -> None:
    print(f"[tflite-sweep] {msg}", file=sys.stderr, flush=True)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(prog="./build.sh arch-sweep --tflite", description=__doc__.split("\n\n")[0])
    names = [a.name for a in models.ARCHITECTURES if a.family == "timm"]
    parser.add_argument("--only", nargs="+", metavar="NAME", choices=names, default=DEFAULT_ARCHS,
                        help=f"architectures (default: {' '.join(DEFAULT_ARCHS)}); any timm one of: {', '.join(names)}")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "tflite-sweep", help="report folder")
    parser.add_argument("--samples", type=Path, default=ROOT / "data" / "samples",
                        help="photos to calibrate and compare on (default data/samples)")
    parser.add_argument("--fixtures", type=Path, metavar="DIR",
                        help="instead of sweeping, remake the CI sample (reduced-width copies of the "
                             "architectures, tools/models/converters/tflite_arch_sample.py) in DIR, e.g. "
                             "tests/data/tflite/arch_sample")
    return parser.parse_args(argv)


def nhwc(batch):
    return [np.ascontiguousarray(x.transpose(1, 2, 0))[None] for x in batch]


def compare(data: bytes, photos: list) -> dict:
    """qnnweb in each kernel variant against ai-edge-litert on the photos: per variant the bit-exact share and
    the worst difference in quanta; overall the lowest share and the worst difference of any variant."""
    expected = [litert_outputs(data, x) for x in photos]
    variants = {}
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(data, variant=variant)
        exact = total = worst = 0
        for x, wants in zip(photos, expected):
            for ours, want in zip(model.run(x), wants):
                diff = np.abs(ours.astype(np.int32) - want.astype(np.int32))
                exact += int((diff == 0).sum())
                total += diff.size
                worst = max(worst, int(diff.max()))
        model.close()
        variants[variant] = {"bit_exact": exact / total, "max_diff": worst}
    return {"runs": True, "bit_exact": min(v["bit_exact"] for v in variants.values()),
            "max_diff": max(v["max_diff"] for v in variants.values()), "variants": variants}


def sweep_one(name: str, photo_paths: list, out: Path) -> dict:
    arch = next(a for a in models.ARCHITECTURES if a.name == name)
    t0 = time.monotonic()
    built = models.build(arch, photo_paths, small=True)
    size = built.input_shape[-1]
    calibration = nhwc(models.photo_inputs(photo_paths, size, built.mean, built.std))
    float_model = convert(built.model, built.input_shape)
    data = quantize(float_model, RECIPE, calibration)
    path = out / f"{name}.tflite"
    path.write_bytes(data)
    entry = {"timm": built.timm_name, "input": list(built.input_shape), "size": len(data), **describe(path)}
    detail = entry["inputs"][0]
    samples = [quantize_input(x, {"dtype": np.dtype(detail["dtype"]).type,
                                  "quantization": (detail["scale"], detail["zero_point"])}) for x in calibration]
    try:
        entry.update(compare(data, samples))
    except qnnweb.UnsupportedModelError as e:
        entry.update(runs=False,
                     refused=collections.Counter(f"{op_type}: {reason}" for _, op_type, reason in e.problems))
    entry["seconds"] = round(time.monotonic() - t0)
    return entry


def markdown(results: dict) -> str:
    lines = ["# TFLite sweep (litert-torch + ai-edge-quantizer static_wi8_ai8, 128x128, random weights)", "",
             "| architecture | ops (count) | qnnweb |", "| --- | --- | --- |"]
    for name, r in results.items():
        if "error" in r:
            lines.append(f"| {name} | conversion failed: {r['error'][:200]} | |")
            continue
        ops = ", ".join(f"{op} {n}" for op, n in r["ops"].items())
        if r["runs"]:
            verdict = f"runs: {100 * r['bit_exact']:.2f}% bit-exact, worst {r['max_diff']} quanta (every variant)"
        else:
            verdict = "refuses: " + "; ".join(f"{problem} (x{n})" for problem, n in r["refused"].items())
        lines.append(f"| {name} | {ops} | {verdict} |")
    return "\n".join(lines) + "\n"


def main(argv=None) -> int:
    args = parse_args(argv)
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    import torch

    torch.set_num_threads(1)
    if args.fixtures:
        manifest = tflite_arch_sample.make(args.fixtures, args.samples, args.only, log)
        log(f"{len(manifest['architectures'])} architectures written to {args.fixtures}")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    photo_paths = models.photo_paths(args.samples)
    results = {}
    for name in args.only:
        log(f"{name}: converting and quantizing")
        try:
            results[name] = sweep_one(name, photo_paths, args.out)
        except Exception as e:  # noqa: BLE001 - recorded in the report, the sweep goes on
            results[name] = {"error": f"{type(e).__name__}: {e}"}
        log(f"{name}: {json.dumps(results[name], default=str)[:2000]}")
        (args.out / "tflite-sweep.json").write_text(json.dumps(results, indent=1, default=str) + "\n")
        (args.out / "tflite-sweep.md").write_text(markdown(results))
    print(markdown(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
