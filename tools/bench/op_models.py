"""Layer-sized TFLite models for comparing engines op by op (qnnweb against LiteRT.js's XNNPACK).

    .venv/bin/python tools/bench/op_models.py [--out results/op_models]
    ./build.sh bench --engines qnnweb-js,litert --variants relaxed,simd128 --model results/op_models/*.tflite

Each model is a chain of one op kind at the shape of a real EfficientNet-Lite0 / MobileNetV2 layer
(224x224 input): 1x1 expand/project pairs, depthwise 3x3 and 5x5, the 3x3 stride-2 first
convolution, ADD. LiteRT.js takes float tensors only, so every chain sits between a QUANTIZE and a
DEQUANTIZE; ``quantize_dequantize_224`` is that frame alone, to subtract. Chains of 2-4 ops make the op
the larger part of each inference. Weights are random (the speed does not depend on them).
"""

import argparse
import sys
from pathlib import Path

import numpy as np
from qnnweb.exporters.tflite import export_tflite

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)
from bench.kernel_bench import Builder  # noqa: E402

# name: (input height = width, input channels, chain); chain steps: ("conv", out channels, kernel,
# stride), ("dw", kernel, stride) or ("add",)
MODELS = {
    "conv1x1_112_16x96_x2": (112, 16, [("conv", 96, 1, 1), ("conv", 16, 1, 1)] * 2),
    "conv1x1_56_24x144_x2": (56, 24, [("conv", 144, 1, 1), ("conv", 24, 1, 1)] * 2),
    "conv1x1_14_112x672_x2": (14, 112, [("conv", 672, 1, 1), ("conv", 112, 1, 1)] * 2),
    "conv1x1_7_192x1152_x2": (7, 192, [("conv", 1152, 1, 1), ("conv", 192, 1, 1)] * 2),
    "dw3x3_56_144_x4": (56, 144, [("dw", 3, 1)] * 4),
    "dw3x3s2_112_96": (112, 96, [("dw", 3, 2)]),
    "dw5x5_28_240_x4": (28, 240, [("dw", 5, 1)] * 4),
    "dw5x5_14_672_x4": (14, 672, [("dw", 5, 1)] * 4),
    "first_conv3x3s2_224": (224, 3, [("conv", 32, 3, 2)]),
    "add_56_24_x4": (56, 24, [("add",)] * 4),
    "quantize_dequantize_224": (224, 3, []),
}


def _convolution(b, rng, x, shape, step):
    """One CONV_2D or DEPTHWISE_CONV_2D with 'SAME' padding and RELU6; returns (output, its shape)."""
    h, w, cin = shape
    depthwise = step[0] == "dw"
    cout, k, stride = (cin, *step[1:]) if depthwise else step[1:]
    pad = max(k - stride, 0) if stride > 1 else k - 1
    oh, ow = (h + pad - k) // stride + 1, (w + pad - k) // stride + 1
    scales = tuple(float(s) for s in rng.uniform(0.002, 0.01, cout))
    wshape = (1, k, k, cout) if depthwise else (cout, k, k, cin)
    wt = b.tensor(wshape, "int8", scales, (0,) * cout, rng.integers(-127, 128, wshape, dtype=np.int8).tobytes(),
                  qdim=3 if depthwise else 0)
    bt = b.tensor((cout,), "int32", tuple(0.05 * s for s in scales), (0,) * cout,
                  rng.integers(-2000, 2000, cout).astype(np.int32).tobytes())
    y = b.tensor((1, oh, ow, cout), "int8", (0.1,), (2,))
    b.op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, wt, bt], [y], stride=(stride, stride),
         dilation=(1, 1), padding=[pad // 2, pad - pad // 2, pad // 2, pad - pad // 2], activation="RELU6",
         **({"depth_multiplier": 1} if depthwise else {}))
    return y, (oh, ow, cout)


def build(size, channels, chain, seed=0):
    """The model's flatbuffer: float input -> QUANTIZE -> chain -> DEQUANTIZE -> float output."""
    rng = np.random.default_rng(seed)
    b = Builder()
    shape = (size, size, channels)
    xf = b.tensor((1, *shape), "float32")
    b.inputs.append(xf)
    x = b.tensor((1, *shape), "int8", (0.1,), (2,))
    b.op("QUANTIZE", [xf], [x])
    for step in chain:
        if step[0] == "add":
            y = b.tensor((1, *shape), "int8", (0.12,), (-1,))
            b.op("ADD", [x, x], [y], activation="NONE")
            x = y
        else:
            x, shape = _convolution(b, rng, x, shape, step)
    yf = b.tensor((1, *shape), "float32")
    b.op("DEQUANTIZE", [x], [yf])
    b.outputs.append(yf)
    return export_tflite(b.graph())


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--out", type=Path, default=Path("results/op_models"))
    args = p.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    for name, (size, channels, chain) in MODELS.items():
        path = args.out / f"{name}.tflite"
        path.write_bytes(build(size, channels, chain))
        print(path)


if __name__ == "__main__":
    main()
