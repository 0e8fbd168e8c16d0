#!/usr/bin/env python3
"""Make the ONNX GELU / BatchNormalization block fixtures: small blocks of timm's modern architectures,
exported by torch.onnx (opset 17, the TorchScript exporter, as the arch sweep does) and quantized by
onnxruntime's quantize_static in the sweep's modes, committed under tests/data/onnx/gelu_blocks/ with the
outputs onnxruntime gives for them, so that CI (which has no torch) tests qnnweb against real exporter and
quantizer output (tests/onnx/test_onnx_gelu_blocks.py).

- ``repvit_block``: timm's RepViT block (RepVggDw token mixer: two depthwise convs and the identity summed,
  then a BatchNormalization no convolution absorbs; Conv-BN -> GELU -> Conv-BN channel mixer), 16 channels,
  a 6x6 map;
- ``gelu_mlp``: timm's Mlp (Linear -> GELU -> Linear) over [1, 10, 12] tokens, as in ViT / DeiT blocks.

Each ``<block>_<mode>.onnx`` has ``<block>_<mode>.npz`` beside it: ``x`` (seeded inputs, a batch stacked on
axis 0) and ``y`` (qnnweb.cli.reference_onnx's ReferenceSession outputs for each).

Run with the arch sweep's virtualenv (torch, timm): ``PYTHONPATH=py_frontend:tools/models/converters
.cache/arch-sweep-venv/bin/python tools/models/converters/make_gelu_block_fixtures.py``.
"""

import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from arch_sweep_models import reestimate_batchnorm, shift_parameters   # (first: makes torchvision importable)
from arch_sweep_onnx import MODES, export, quantize
from timm.layers import Mlp
from timm.models.repvit import RepViTBlock

from qnnweb.cli.reference_onnx import ReferenceSession

OUT = Path(__file__).resolve().parents[3] / "tests" / "data" / "onnx" / "gelu_blocks"
SEED = 0


def blocks():
    torch.manual_seed(SEED)
    repvit = RepViTBlock(16, 2, 3, False, torch.nn.GELU)
    mlp = Mlp(12, 24, act_layer=torch.nn.GELU)
    return {"repvit_block": (repvit, [1, 16, 6, 6]), "gelu_mlp": (mlp, [1, 10, 12])}


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(SEED)
    for name, (block, shape) in blocks().items():
        shift_parameters(block, SEED)   # scales and biases away from their initial 1 / 0
        calibration = rng.normal(0, 1, [8, *shape[1:]]).astype(np.float32)
        reestimate_batchnorm(block, [calibration])   # BatchNorm statistics a trained block would hold
        inputs = rng.normal(0, 1.2, [3, *shape]).astype(np.float32)
        with tempfile.TemporaryDirectory() as tmp:
            float_path = Path(tmp) / "float.onnx"
            export(block, shape, float_path)
            for mode in MODES:
                data = quantize(float_path, mode, calibration)
                session = ReferenceSession(data)
                outputs = np.stack([session.run({"x": x})[0] for x in inputs])
                (OUT / f"{name}_{mode.name}.onnx").write_bytes(data)
                np.savez_compressed(OUT / f"{name}_{mode.name}.npz", x=inputs, y=outputs)
                print(name, mode.name, len(data), "bytes", file=sys.stderr)


if __name__ == "__main__":
    main()
