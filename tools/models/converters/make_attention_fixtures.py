"""Attention blocks made by the real tools, for tests/onnx/test_onnx_attention_blocks.py: timm's ``Attention``
(a DeiT block's, reduced width: 48 channels, 3 heads of 16, 17 tokens) and ultralytics' ``Attention`` (YOLO11's
C2PSA: 64 channels, 2 heads, a 4x4 feature map), seeded weights (shifted by seeded noise, as the sweep's), exported by torch.onnx (opset 17, the
TorchScript exporter, as the arch sweep does) and quantized by onnxruntime's quantize_static in the sweep's
modes (QDQ uint8 / int8 activations, QOperator). Writes tests/data/onnx/attention/NAME_MODE.onnx and
NAME_MODE.npz (two inputs and onnxruntime's outputs on them: qnnweb.cli.reference_onnx's session), so the
tests need neither torch nor timm. Run once, with the arch sweep's virtualenv:

    PYTHONPATH=py_frontend:tools .cache/arch-sweep-venv/bin/python tools/models/converters/make_attention_fixtures.py
"""

import sys
import tempfile
from pathlib import Path

import numpy as np
import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
import arch_sweep_models  # noqa: E402  (imports timm, with torchvision's operator schemas first)
import arch_sweep_onnx as ox  # noqa: E402
from timm.layers import Attention as TimmAttention  # noqa: E402
from ultralytics.nn.modules.block import Attention as YoloAttention  # noqa: E402

from qnnweb.cli.reference_onnx import ReferenceSession  # noqa: E402

OUT = Path(__file__).resolve().parents[3] / "tests" / "data" / "onnx" / "attention"
BLOCKS = {  # name: (module factory, input shape without the batch, modes)
    "timm_attention": (lambda: TimmAttention(48, num_heads=3, qkv_bias=True), (17, 48), ox.MODES),
    "yolo_attention": (lambda: YoloAttention(64, num_heads=2, attn_ratio=0.5), (64, 4, 4), ox.MODES),
}


class OneInput(torch.nn.Module):
    """The block called with its input alone (tracing timm's Attention directly hands its optional
    arguments tensors)."""

    def __init__(self, block):
        super().__init__()
        self.block = block

    def forward(self, x):
        return self.block(x)


def main():
    OUT.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(0)
    for name, (factory, shape, modes) in BLOCKS.items():
        torch.manual_seed(0)
        block = OneInput(factory()).eval()
        arch_sweep_models.shift_parameters(block)   # no two constants equal: the exporter would merge them
        calibration = rng.normal(size=(16, *shape)).astype(np.float32)
        inputs = rng.normal(size=(2, 1, *shape)).astype(np.float32)
        with tempfile.TemporaryDirectory() as tmp:
            float_path = Path(tmp) / f"{name}.onnx"
            ox.export(block, (1, *shape), float_path)
            for mode in modes:
                data = ox.quantize(float_path, mode, calibration)
                session = ReferenceSession(data)
                outputs = np.stack([session.run({ox.INPUT_NAME: x})[0] for x in inputs])
                (OUT / f"{name}_{mode.name}.onnx").write_bytes(data)
                np.savez_compressed(OUT / f"{name}_{mode.name}.npz", inputs=inputs, outputs=outputs)
                print(f"{name} {mode.name}: {len(data)} bytes, ops {ox.op_counts(data)}")


if __name__ == "__main__":
    main()
