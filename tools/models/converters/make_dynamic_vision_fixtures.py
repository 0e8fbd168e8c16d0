#!/usr/bin/env python3
"""Make the dynamically quantized vision fixtures of tests/onnx/test_onnx_dynamic_vision.py: timm's DeiT (a ViT
with a class token) and ConvNeXt (the atto / femto form: 1x1 convolutions for its MLP) at reduced width and
depth, with seeded random weights shifted off their initial constants (arch_sweep_models.shift_parameters),
exported by torch.onnx (opset 17) and quantized by onnxruntime's quantize_dynamic (every op type it takes:
ConvInteger for the convolutions, MatMulInteger for the linear layers) with QUInt8 weights per tensor, or
QInt8 weights per channel with reduce_range; committed under tests/data/onnx/dynamic_vision/ so that CI
(which has no torch or timm) tests what the real tools write. onnxruntime runs them in the tests themselves.

Run with the arch-sweep virtualenv (torch, timm, onnxruntime; ``./build.sh arch-sweep --help`` makes it):
  PYTHONPATH=py_frontend:tools/models/converters .cache/arch-sweep-venv/bin/python \\
      tools/models/converters/make_dynamic_vision_fixtures.py
``--full DIR`` writes timm's full-size deit_tiny_patch16_224 and convnext_atto instead (QUInt8 weights), for
measurements (docs/performance-log.md). Deterministic: seeded weights.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
from onnxruntime.quantization import QuantType, quantize_dynamic

from arch_sweep_models import shift_parameters   # (torchvision's operator schemas, before timm imports it)
from arch_sweep_onnx import export
import timm  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "tests" / "data" / "onnx" / "dynamic_vision"

MODES = {"q8_u8": dict(weight_type=QuantType.QUInt8, per_channel=False, reduce_range=False),
         "q8_s8_rr": dict(weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)}

# name: (timm model, its arguments, input side)
REDUCED = {
    "deit": ("deit_tiny_patch16_224", dict(img_size=64, patch_size=16, embed_dim=48, depth=2, num_heads=3,
                                           num_classes=10), 64),
    "convnext": ("convnext_atto", dict(depths=(1, 1, 2, 1), dims=(16, 24, 32, 48), num_classes=10), 64),
}
FULL = {"deit_tiny": ("deit_tiny_patch16_224", {}, 224), "convnext_atto": ("convnext_atto", {}, 224)}


def float_model(name, arguments, side, folder):
    torch.manual_seed(0)
    model = timm.create_model(name, pretrained=False, **arguments)
    shift_parameters(model)
    model.eval()
    path = folder / f"{name}.onnx"
    export(model, (1, 3, side, side), path)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--full", metavar="DIR", help="write the full-size models to DIR instead")
    args = parser.parse_args()
    out = Path(args.full) if args.full else OUT
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, (timm_name, arguments, side) in (FULL if args.full else REDUCED).items():
            path = float_model(timm_name, arguments, side, Path(tmp))
            for mode in ["q8_u8"] if args.full else MODES:
                target = out / f"{name}_{mode}.onnx"
                quantize_dynamic(str(path), str(target), **MODES[mode])
                print(target, target.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
