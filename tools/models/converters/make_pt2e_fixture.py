#!/usr/bin/env python3
"""Make the PyTorch-quantized (PT2E) ONNX fixture: a small CNN with timm blocks quantized by PyTorch's
own flow and exported by torch's ONNX exporter, with the outputs onnxruntime gives for it, committed under
tests/data/onnx/pt2e/ so that CI (which has no torch) tests qnnweb against it
(tests/onnx/test_onnx_pt2e.py). The recipe is the one docs/python-api.md gives users:

    exported = torch.export.export(model, (x,)).module()
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(exported, quantizer)
    for batch in calibration: prepared(batch)
    quantized = convert_pt2e(prepared)
    torch.onnx.export(quantized, (x,), dynamo=True).save("model.onnx")

(prepare_pt2e / convert_pt2e from torchao.quantization.pt2e.quantize_pt2e; XNNPACKQuantizer from
executorch.backends.xnnpack.quantizer.xnnpack_quantizer.) The ONNX file is QDQ: int8 activations per tensor,
int8 symmetric weights per output channel, float biases, the Clip of a ReLU6 between its QuantizeLinear /
DequantizeLinear pairs.

The model (seeded weights, BatchNorm statistics re-estimated on seeded noise so they are not the identity):
a stride-2 stem (Conv, BatchNorm, ReLU6), timm's DepthwiseSeparableConv and InvertedResidual with
squeeze-excite (ReLU), a 1x1 Conv, its pixels as tokens with a ViT-style class token concatenated in front,
then Linear over each token.

Writes ``pt2e_cnn.onnx`` and ``pt2e_cnn.npz`` (``input_0``: seeded normal inputs stacked on a new axis 0;
``output_0``: onnxruntime's outputs for each, ``qnnweb.cli.reference_onnx.ReferenceSession``) and
``manifest.json`` (versions, recipe, sha256s). Run in the arch-sweep virtualenv with torchao, executorch
(--no-deps, with ruamel.yaml and tabulate), onnxscript and onnx-ir added:

    PYTHONPATH=py_frontend .cache/arch-sweep-venv/bin/python tools/models/converters/make_pt2e_fixture.py
"""

import hashlib
import io
import json
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import onnx
import torch
from torch import nn

ROOT = next(p for p in Path(__file__).resolve().parents if (p / "build.sh").is_file())
sys.path.insert(0, str(Path(__file__).parent))
import arch_sweep_models  # noqa: E402,F401  (torchvision's operator schemas, before timm imports it)
from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (  # noqa: E402
    XNNPACKQuantizer, get_symmetric_quantization_config)
from timm.models._efficientnet_blocks import DepthwiseSeparableConv, InvertedResidual  # noqa: E402
from timm.layers import SqueezeExcite  # noqa: E402
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e  # noqa: E402

from qnnweb.cli.reference_onnx import ReferenceSession  # noqa: E402

OUT = ROOT / "tests" / "data" / "onnx" / "pt2e"
SEED, SIZE, INPUTS = 2026, 32, 6
VERSIONED = ["torch", "torchao", "executorch", "timm", "onnx", "onnxscript", "onnx-ir", "onnxruntime", "numpy"]


class SmallCNN(nn.Module):
    def __init__(self):
        super().__init__()
        self.stem = nn.Sequential(nn.Conv2d(3, 16, 3, stride=2, padding=1), nn.BatchNorm2d(16), nn.ReLU6())
        self.separable = DepthwiseSeparableConv(16, 16, act_layer=nn.ReLU)
        self.inverted = InvertedResidual(16, 16, exp_ratio=4.0, act_layer=nn.ReLU, se_layer=SqueezeExcite)
        self.reduce = nn.Conv2d(16, 8, 1, stride=2)
        self.cls_token = nn.Parameter(torch.randn(1, 1, 8))
        self.head = nn.Linear(8, 10)

    def forward(self, x):
        features = self.reduce(self.inverted(self.separable(self.stem(x))))
        tokens = torch.flatten(features, 2).transpose(1, 2)                  # [1, pixels, 8]
        tokens = torch.cat([self.cls_token.expand(x.shape[0], -1, -1), tokens], dim=1)
        return self.head(tokens)


def build():
    torch.manual_seed(SEED)
    model = SmallCNN()
    with torch.no_grad():   # parameters off their initial values (BatchNorm's 1 / 0 would fold to nothing)
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    model.train()
    with torch.no_grad():
        for _ in range(4):
            model(torch.randn(7, 3, SIZE, SIZE))
    return model.eval()


def quantized_onnx(model, calibration):
    x = calibration[0]
    exported = torch.export.export(model, (x,)).module()
    quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_per_channel=True))
    prepared = prepare_pt2e(exported, quantizer)
    for batch in calibration:
        prepared(batch)
    program = torch.onnx.export(convert_pt2e(prepared), (x,), dynamo=True)
    buffer = io.BytesIO()
    onnx.save(program.model_proto, buffer)
    return buffer.getvalue()


def main():
    generator = torch.Generator().manual_seed(SEED)
    calibration = [torch.randn(1, 3, SIZE, SIZE, generator=generator) for _ in range(16)]
    data = quantized_onnx(build(), calibration)
    inputs = np.stack([torch.randn(1, 3, SIZE, SIZE, generator=generator).numpy() for _ in range(INPUTS)])
    session = ReferenceSession(data)
    name = session.session.get_inputs()[0].name
    outputs = np.stack([session.run({name: x})[0] for x in inputs])
    OUT.mkdir(parents=True, exist_ok=True)
    (OUT / "pt2e_cnn.onnx").write_bytes(data)
    np.savez_compressed(OUT / "pt2e_cnn.npz", input_0=inputs, output_0=outputs)
    manifest = {
        "generator": "tools/models/converters/make_pt2e_fixture.py",
        "versions": {p: metadata.version(p) for p in VERSIONED},
        "recipe": "torch.export.export -> torchao prepare_pt2e(XNNPACKQuantizer, symmetric per-channel config) -> "
                  "16 seeded calibration inputs -> convert_pt2e -> torch.onnx.export(dynamo=True)",
        "reference": "qnnweb.cli.reference_onnx.ReferenceSession (onnxruntime, one thread, session.qdqisint8allowed=1)",
        "files": {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in sorted(OUT.glob("pt2e_cnn.*"))},
    }
    (OUT / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")
    print(f"wrote {OUT} ({len(data)} bytes of ONNX)")


if __name__ == "__main__":
    main()
