"""What every part of the benchmark shares: where things are, the engines and variants, logging."""

from __future__ import annotations

import os
import statistics
import sys
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[3]

ENGINES = ("qnnweb", "qnnweb-js", "litert", "ort")
QNNWEB_ENGINES = ("qnnweb", "qnnweb-js")   # one slot per kernel variant
VARIANTS = ("relaxed", "simd128", "scalar")
# the two classifiers of the table, a detector and a segmentation model
DEFAULT_MODELS = ("data/models/efficientnet_lite0_u8s8.onnx", "data/models/mobilenet_v2_u8s8.onnx",
                  "data/models/face_detection_short_range.tflite", "data/models/efficientnet_lite0_segmentation.onnx")
# --modern: DeiT-tiny, MobileViT-xxs and YOLO11n at their own input sizes, random weights, quantize_static
# qdq_u8s8; each ONNX file's sidecar names its TFLite twin made from the same torch model by litert-torch and
# ai-edge-quantizer (tools/models/converters/bench_models.py makes them; ./build.sh bench --modern runs it)
MODERN_ARCHS = ("deit_tiny_patch16_224", "mobilevit_xxs", "yolo11n")
MODERN_DIR = "data/bench-modern"
MODERN_MODELS = tuple(f"{MODERN_DIR}/{name}_qdq_u8s8.onnx" for name in MODERN_ARCHS)
PHOTO = REPO / "data" / "samples" / "coffee.png"
CHROMIUM = Path(os.environ.get("QNNWEB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
NPM_DIR = REPO / ".cache" / "npm" / "node_modules"
NPM_PACKAGES = ("@litertjs/core", "@litertjs/wasm-utils", "onnxruntime-web")
ENGINE_LABELS = {
    "qnnweb": "qnnweb (Pyodide)",
    "qnnweb-js": "qnnweb.js (compiled)",
    "litert": "LiteRT.js",
    "ort": "ONNX Runtime Web",
    "native-onnxruntime": "onnxruntime (native)",
    "native-litert": "ai-edge-litert (native)",
}
LOAD_TIMEOUT_MS = 300_000


def log(*args) -> None:
    print("[bench]", *args, file=sys.stderr, flush=True)


class BenchError(RuntimeError):
    """Something the benchmark needs is missing (says what to run)."""


def median(values):
    return float(statistics.median(values)) if values else None


def percentile(values, q):
    """Linear-interpolated percentile (numpy's default)."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if values else None
