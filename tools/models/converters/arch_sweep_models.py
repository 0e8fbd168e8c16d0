"""The architectures of the sweep (tools/models/converters/arch_sweep.py) as float torch models with realistic random
weights, and the photos they are calibrated and compared on.

- timm's efficient vision families (ViT/DeiT, ConvNeXt, MobileViT, EfficientFormerV2, MobileNetV4, RepViT,
  TinyViT, GhostNetV2, PoolFormer, FastViT, LeViT, EfficientViT) and ultralytics' YOLO11n / YOLOv8n, built
  from their configurations: no weights are downloaded (ultralytics runs with YOLO_OFFLINE=1; arch_sweep.py
  also refuses every socket connection outside this machine, so an attempted download fails loudly).
- Random weights made realistic: every parameter shifted off its initial constant by seeded noise (the ONNX
  exporter would otherwise merge equal constants: zero biases, unit norms, layer scales), BatchNorm
  statistics re-estimated in train mode over the photos, then eval and timm's reparameterization
  (RepViT, FastViT, MobileOne-style branches fused as a user deploying them would).

torchvision: PyPI's torchvision wheel is a CUDA build whose C extension does not load beside the CPU torch;
its import then fails in torchvision/_meta_registrations.py, which registers fake kernels for the
``torchvision::nms`` and ``torchvision::qnms`` operators that the extension would have defined. timm imports
torchvision at module level (FrozenBatchNorm2d, transforms) and ultralytics reads its version, but neither
calls its C operators to build, run or export these models; so this module defines the two operators'
schemas (no kernels) before torchvision is imported: the import succeeds, and a call to them would fail
by name. See docs/arch-sweep.md.
"""

from __future__ import annotations

import os
import random
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from PIL import Image
from torch import nn

# The schemas of torchvision's C operators that its Python side registers fake kernels for (see above).
_TORCHVISION_OPS = torch.library.Library("torchvision", "FRAGMENT")
_TORCHVISION_OPS.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
_TORCHVISION_OPS.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")

import timm  # noqa: E402  (after the schemas above: timm imports torchvision)
from timm.utils.model import reparameterize_model  # noqa: E402

SEED = 0
WEIGHT_NOISE = 0.02       # std of the noise added to every parameter
SMALL_SIZE = 128          # --small: input side (a multiple of 32 and 64: every family's strides divide it)
SMALL_CLASSES = 100       # --small: classifier width
IMAGENET_MEAN, IMAGENET_STD = (0.485, 0.456, 0.406), (0.229, 0.224, 0.225)


@dataclass(frozen=True)
class Arch:
    name: str            # the sweep's name (timm's model name, or yolo11n / yolov8n)
    family: str          # "timm" or "yolo"
    candidates: tuple    # timm names to try in order (the first that timm's installed version has)


def _timm(name, *fallbacks):
    return Arch(name, "timm", (name, *fallbacks))


# In the order --archs N takes them: the smallest and most asked-for first.
ARCHITECTURES = [
    _timm("deit_tiny_patch16_224", "vit_tiny_patch16_224"),
    _timm("mobilenetv4_conv_small"),
    _timm("convnext_atto"),
    _timm("mobilevit_xxs"),
    _timm("efficientformerv2_s0"),
    _timm("repvit_m0_9", "repvit_m1"),
    Arch("yolo11n", "yolo", ()),
    _timm("levit_128s"),
    _timm("efficientvit_b0"),
    _timm("fastvit_t8"),
    _timm("mobilevitv2_050"),
    _timm("tiny_vit_5m_224"),
    _timm("ghostnetv2_100"),
    _timm("poolformerv2_s12", "poolformer_s12"),
    _timm("mobilenetv4_hybrid_medium"),
    Arch("yolov8n", "yolo", ()),
    _timm("convnext_femto"),
    _timm("vit_tiny_patch16_224"),
]


@dataclass
class Built:
    """A float model ready to export: ``model`` (eval), its input shape and how photos become inputs."""
    model: nn.Module
    timm_name: str
    input_shape: tuple   # (1, 3, H, W)
    mean: tuple
    std: tuple
    note: str = ""


def photo_paths(samples: Path) -> list[Path]:
    photos = sorted(p for p in samples.iterdir() if p.suffix.lower() in (".jpg", ".jpeg", ".png")) \
        if samples.is_dir() else []
    if not photos:
        raise SystemExit(f"arch-sweep: no photos (*.jpg, *.png) in {samples}: run ./build.sh build samples")
    return photos


def photo_inputs(paths, size: int, mean, std, crops_per_photo: int = 0, seed: int = SEED) -> np.ndarray:
    """[N, 3, size, size] float32: each photo's centre square resized to ``size``, then ``crops_per_photo``
    seeded random squares of it (side 0.55..1 of the centre square's, random flip), normalized by ``mean`` /
    ``std`` (0..1 pixels)."""
    rng = random.Random(seed)
    out = []
    for path in paths:
        with Image.open(path) as im:
            img = im.convert("RGB")
        w, h = img.size
        side = min(w, h)
        boxes = [((w - side) // 2, (h - side) // 2, side, False)]
        for _ in range(crops_per_photo):
            s = int(side * rng.uniform(0.55, 1.0))
            boxes.append((rng.randint(0, w - s), rng.randint(0, h - s), s, rng.random() < 0.5))
        for left, top, s, flip in boxes:
            crop = img.crop((left, top, left + s, top + s)).resize((size, size), Image.BILINEAR)
            if flip:
                crop = crop.transpose(Image.FLIP_LEFT_RIGHT)
            x = np.asarray(crop, dtype=np.float32) / np.float32(255)
            x = (x - np.float32(mean)) / np.float32(std)
            out.append(x.transpose(2, 0, 1))
    return np.ascontiguousarray(np.stack(out), dtype=np.float32)


def shift_parameters(model: nn.Module, seed: int = SEED) -> None:
    """Every parameter plus seeded normal noise: no two constants stay equal (zero biases, unit norm scales,
    1e-5 layer scales would be merged by the exporter and are not what a trained model holds)."""
    generator = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn(p.shape, generator=generator) * WEIGHT_NOISE)


def reestimate_batchnorm(model: nn.Module, batches) -> int:
    """BatchNorm statistics (every BatchNorm1d/2d) as cumulative averages of train-mode batch statistics over
    ``batches``; dropout-like modules stay in eval mode; the model is left in eval mode. Returns how many
    BatchNorm layers there are."""
    norms = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    for m in norms:
        m.reset_running_stats()
        m.momentum = None
    model.train()
    for m in model.modules():
        if isinstance(m, (nn.Dropout, nn.Dropout2d)) or type(m).__name__ == "DropPath":
            m.eval()
    with torch.no_grad():
        for batch in batches:
            model(torch.from_numpy(batch))
    model.eval()
    return len(norms)


def _timm_model(arch: Arch, small: bool) -> tuple[nn.Module, str, int]:
    available = set(timm.list_models())
    name = next((n for n in arch.candidates if n in available), None)
    if name is None:
        raise LookupError(f"timm {timm.__version__} has none of {list(arch.candidates)}")
    if not small:
        model = timm.create_model(name, pretrained=False)
        return model, name, model.pretrained_cfg["input_size"][-1]
    try:   # ViT-style models take the input size at construction (position embeddings, attention biases)
        model = timm.create_model(name, pretrained=False, num_classes=SMALL_CLASSES, img_size=SMALL_SIZE)
    except TypeError:   # convolutional ones take any size and have no img_size argument
        model = timm.create_model(name, pretrained=False, num_classes=SMALL_CLASSES)
    return model, name, SMALL_SIZE


def _yolo_model(arch: Arch, small: bool) -> tuple[nn.Module, str, int]:
    os.environ["YOLO_OFFLINE"] = "1"
    from ultralytics import YOLO   # noqa: PLC0415  (imported only when a YOLO is swept: it is slow to import)

    model = YOLO(f"{arch.name}.yaml").model    # the configuration only: random weights, nothing downloaded
    return export_head(model), f"ultralytics {arch.name}.yaml", SMALL_SIZE if small else 640


def export_head(model: nn.Module) -> nn.Module:
    """A YOLO's Detect head set up as ultralytics' own ONNX export sets it: one decoded output tensor."""
    from ultralytics.nn.modules import Detect   # noqa: PLC0415  (only when a YOLO is built: slow to import)

    for m in model.modules():
        if isinstance(m, Detect):
            m.export, m.format = True, "onnx"
    return model


def build(arch: Arch, photos, small: bool) -> Built:
    """The float model of ``arch`` with realistic random weights (see the module's doc), in eval mode."""
    torch.manual_seed(SEED)
    if arch.family == "yolo":
        model, origin, size = _yolo_model(arch, small)
        mean, std = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)   # YOLO takes 0..1 pixels
    else:
        model, origin, size = _timm_model(arch, small)
        mean, std = model.pretrained_cfg.get("mean", IMAGENET_MEAN), model.pretrained_cfg.get("std", IMAGENET_STD)
    return realistic(model, arch.family, origin, size, mean, std, photos)


def realistic(model: nn.Module, family: str, origin: str, size: int, mean, std, photos) -> Built:
    """``model`` (fresh from its configuration) with realistic random weights: parameters shifted, BatchNorm
    statistics re-estimated on ``photos``, timm's training branches fused; in eval mode."""
    shift_parameters(model)
    batches = list(photo_inputs(photos, size, mean, std, crops_per_photo=3).reshape(-1, len(photos), 3, size, size))
    norms = reestimate_batchnorm(model, batches)
    if family == "timm":
        model = reparameterize_model(model)
    model.eval()
    note = f"{norms} BatchNorm re-estimated" if norms else "no BatchNorm"
    return Built(model, origin, (1, 3, size, size), tuple(mean), tuple(std), note)
