#!/usr/bin/env python3
"""Make the LayerNorm fixtures of tests/onnx/test_onnx_norm_fixtures.py: small timm models exported by torch.onnx
and quantized by onnxruntime's quantize_static, with onnxruntime's outputs, committed under
tests/data/onnx/norm/ so that CI (which has no torch) tests qnnweb's LayerNormalization on what the real tools
write.

- ``convnext.onnx``: timm's ConvNeXt at reduced width (dims 8, 16, 16, 24; one block per stage; ReLU in place of
  GELU, whose Erf is another op): LayerNorm2d (Transpose -> LayerNormalization -> Transpose) after the stem,
  before the downsampling conv and in the head (on [N, C, 1, 1]), the blocks' LayerNorm over the channels of
  the NHWC tensor, their Linear layers on it;
- ``vit.onnx``: timm's VisionTransformer at reduced width (32x32 input, 8x8 patches, 24 channels, one block,
  ReLU MLP, average pooling), its attention replaced by a Linear token-wise layer (batched int8 MatMul is
  another op): the blocks' and the final LayerNorm over [N, tokens, channels].

Both quantized in the default user recipe (QDQ, uint8 activations, int8 per-channel weights) and calibrated on
seeded normal noise. Next to each model ``<name>.npz`` holds ``inputs`` [K, 1, 3, H, W] float32 and ``outputs``
[K, ...]: what qnnweb.cli.reference_onnx's ReferenceSession (onnxruntime as the tests run it) returns for each.

Run with the arch-sweep virtualenv (torch, timm, onnxruntime; ``./build.sh arch-sweep --help`` makes it):
  PYTHONPATH=py_frontend .cache/arch-sweep-venv/bin/python tools/models/converters/make_norm_fixtures.py
Deterministic: seeded weights and data.
"""
from __future__ import annotations

import sys
import tempfile
from pathlib import Path

import numpy as np
import torch
from torch import nn

import arch_sweep_models as models   # defines torchvision's operator schemas before timm imports it
import arch_sweep_onnx as sweep_onnx
from timm.models.convnext import ConvNeXt  # noqa: E402
from timm.models.vision_transformer import VisionTransformer  # noqa: E402

from qnnweb.cli.reference_onnx import ReferenceSession

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "tests" / "data" / "onnx" / "norm"
SAMPLES = 3


class TokenLinear(nn.Module):
    """In place of a ViT block's attention: one Linear over each token (timm's attn_layer signature)."""

    def __init__(self, dim, num_heads=1, **kwargs):
        super().__init__()
        self.proj = nn.Linear(dim, dim)

    def forward(self, x, attn_mask=None, is_causal=False):
        return self.proj(x)


def convnext():
    return ConvNeXt(in_chans=3, num_classes=10, depths=(1, 1, 1, 1), dims=(8, 16, 16, 24), act_layer="relu", ls_init_value=0.5), 32


def vit():
    return VisionTransformer(img_size=32, patch_size=8, embed_dim=24, depth=1, num_heads=2, mlp_ratio=2.0,
                             act_layer=nn.ReLU, num_classes=10, global_pool="avg", class_token=False,
                             attn_layer=TokenLinear), 32


def make(name, factory):
    torch.manual_seed(models.SEED)
    model, size = factory()
    models.shift_parameters(model)
    model.eval()
    rng = np.random.default_rng(models.SEED)
    calibration = rng.normal(0, 1, (16, 3, size, size)).astype(np.float32)
    with tempfile.TemporaryDirectory() as tmp:
        float_path = Path(tmp) / "float.onnx"
        sweep_onnx.export(model, (1, 3, size, size), float_path)
        data = sweep_onnx.quantize(float_path, sweep_onnx.MODES_BY_NAME["qdq_u8s8"], calibration)
    inputs = rng.normal(0, 1, (SAMPLES, 1, 3, size, size)).astype(np.float32)
    session = ReferenceSession(data)
    outputs = np.stack([session.run({sweep_onnx.INPUT_NAME: x})[0] for x in inputs])
    (OUT / f"{name}.onnx").write_bytes(data)
    np.savez_compressed(OUT / f"{name}.npz", inputs=inputs, outputs=outputs)
    print(f"[make_norm_fixtures] {name}: {len(data)} bytes, ops {sweep_onnx.op_counts(data)}", file=sys.stderr)


if __name__ == "__main__":
    OUT.mkdir(parents=True, exist_ok=True)
    make("convnext", convnext)
    make("vit", vit)
