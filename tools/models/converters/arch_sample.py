"""The architecture sweep's CI sample: reduced-width configurations of the sweep's architectures, made the way
the sweep makes them (arch_sweep_models: seeded realistic weights, BatchNorm statistics from the photos;
arch_sweep_onnx: torch.onnx export at opset 17, quantize_static), written as committed fixtures with
onnxruntime's reference outputs, for tests/onnx/test_arch_sample.py.

    ./build.sh arch-sweep --fixtures tests/data/onnx/arch_sample     # remakes every fixture and the manifest

Each architecture keeps its blocks (attention, LayerNorm, GELU, BatchNorm after adds, ...) with small depths,
widths and a 10-class head on 64x64 inputs, so that each quantized file stays under ~300 KB. Written to DIR:
``<arch>_<mode>.onnx``, ``<arch>.npz`` (onnxruntime's outputs per mode on the photos, ``<mode>/<k>`` for output
k), ``photos_<size>.npy`` (the photos' centre squares as uint8 HWC pixels; the test normalizes them with the
manifest's mean / std the way arch_sweep_models.photo_inputs does) and ``manifest.json``.

The manifest's ``expect`` per architecture is what qnnweb does today: ``exact`` (bit-exact with onnxruntime in
every mode and variant) or ``refused`` (a clean UnsupportedModelError; ``refused_ops`` lists the op kinds it
named in any mode). The reference outputs are stored for every fixture, so that flipping ``expect`` to ``exact``
once the operators are supported is the whole change; a remake keeps the expectations already in the manifest.
"""

from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass, field, replace
from functools import partial
from pathlib import Path
from unittest import mock

import numpy as np
import onnx
import torch

import arch_sweep_models as models   # first: it makes torchvision importable, which timm imports
import arch_sweep_onnx as ox
import qnnweb
import timm
from qnnweb.cli.reference_onnx import ReferenceSession
from timm.models import efficientformer_v2
from timm.models._efficientnet_builder import decode_arch_def
from timm.models.byobnet import ByobNet
from timm.models.mobilenetv3 import MobileNetV3
from timm.models.mobilevit import model_cfgs as mobilevit_cfgs
from torch import nn

SIZE = 64            # input side: every family's strides (up to 32) divide it
CLASSES = 10
PHOTOS = ("dog.jpg", "chelsea.png")   # the two photos the references are computed on
CALIBRATION_CROPS = 1                 # per photo, besides its centre square (as the sweep calibrates)


@dataclass(frozen=True)
class SampleArch:
    name: str              # the sweep's architecture this is a reduced copy of
    family: str            # "timm" or "yolo"
    config: str            # timm model name, or the ultralytics yaml
    kwargs: dict = field(default_factory=dict)   # the reduced configuration's arguments (see build)
    modes: tuple = ("qdq_u8s8", "qdq_s8s8")


SAMPLE = [
    SampleArch("deit_tiny_patch16_224", "timm", "deit_tiny_patch16_224",
               dict(img_size=SIZE, embed_dim=32, depth=2, num_heads=2)),
    SampleArch("convnext_atto", "timm", "convnext_atto", dict(depths=(1, 1, 1, 1), dims=(8, 16, 24, 32))),
    SampleArch("mobilevit_xxs", "timm", "mobilevit_xxs", dict(width=0.25, transformer_depth=1)),
    SampleArch("repvit_m0_9", "timm", "repvit_m0_9", dict(embed_dim=(8, 16, 24, 32), depth=(1, 1, 1, 1))),
    SampleArch("efficientformerv2_s0", "timm", "efficientformerv2_s0",
               dict(img_size=SIZE, depths=(1, 1, 1, 1), embed_dims=(8, 16, 24, 32), num_vit=1)),
    SampleArch("mobilenetv4_hybrid_medium", "timm", "mobilenetv4_hybrid_medium"),
    SampleArch("levit_128s", "timm", "levit_128s",
               dict(img_size=SIZE, embed_dim=(16, 24, 32), key_dim=8, num_heads=(2, 2, 2), depth=(1, 1, 1))),
    SampleArch("yolo11n", "yolo", "yolo11n.yaml", dict(depth=0.33, width=0.03125, max_channels=1024, reg_max=4)),
    # the CNNs qnnweb runs bit-exact today (the MobileNet in QOperator form too; YOLOv8's QOperator form had
    # com.microsoft.QLinearConcat, which qnnweb refuses)
    SampleArch("mobilenetv4_conv_small", "timm", "mobilenetv4_conv_small",
               modes=("qdq_u8s8", "qdq_s8s8", "qop_u8")),
    SampleArch("yolov8n", "yolo", "yolov8n.yaml", dict(depth=0.33, width=0.03125, max_channels=1024, reg_max=4)),
]

# MobileNetV4's block sequences (timm's _gen_mobilenet_v4) with a block or two of each kind per stage and a
# quarter of the channels; the hybrid's multi-query attention with 2 heads of 8 (KV downsampled in stage 2)
MOBILENETV4 = {
    "mobilenetv4_hybrid_medium": [
        ["er_r1_k3_s2_e4_c16"],
        ["uir_r1_a3_k5_s2_e4_c24", "uir_r1_a3_k3_s1_e2_c24"],
        ["uir_r1_a3_k5_s2_e6_c32", "uir_r1_a0_k0_s1_e2_c32", "mqa_r1_k3_h2_s1_v2_d8_c32", "uir_r1_a3_k0_s1_e4_c32"],
        ["uir_r1_a5_k5_s2_e6_c48", "mqa_r1_k3_h2_s1_d8_c48", "uir_r1_a5_k0_s1_e4_c48"],
        ["cn_r1_k1_s1_c96"],
    ],
    "mobilenetv4_conv_small": [
        ["cn_r1_k3_s2_e1_c8", "cn_r1_k1_s1_e1_c8"],
        ["cn_r1_k3_s2_e1_c24", "cn_r1_k1_s1_e1_c16"],
        ["uir_r1_a5_k5_s2_e3_c24", "uir_r2_a0_k3_s1_e2_c24", "uir_r1_a3_k0_s1_e4_c24"],
        ["uir_r1_a3_k3_s2_e6_c32", "uir_r1_a5_k5_s1_e4_c32", "uir_r1_a0_k5_s1_e4_c32"],
        ["cn_r1_k1_s1_c96"],
    ],
}


def _mobilenetv4(arch: SampleArch) -> nn.Module:
    return MobileNetV3(block_args=decode_arch_def(MOBILENETV4[arch.name]), num_classes=CLASSES, head_bias=False,
                       head_norm=True, num_features=128, stem_size=16, fix_stem=True, act_layer=nn.ReLU,
                       layer_scale_init_value=1e-5 if "hybrid" in arch.name else None)


def _efficientformerv2(arch: SampleArch) -> nn.Module:
    """EfficientFormerV2 with 2 attention heads of 8 (the stages build Attention2d / Attention2dDownsample with
    their defaults, 8 heads of 32 and 16, which no constructor argument reaches)."""
    small = dict(key_dim=8, num_heads=2)
    with mock.patch.object(efficientformer_v2, "Attention2d", partial(efficientformer_v2.Attention2d, **small)), \
            mock.patch.object(efficientformer_v2, "Attention2dDownsample",
                              partial(efficientformer_v2.Attention2dDownsample, **small)):
        return timm.create_model(arch.config, pretrained=False, num_classes=CLASSES, **arch.kwargs)


def _mobilevit(arch: SampleArch) -> nn.Module:
    """timm's MobileViT-XXS configuration with its channels scaled by ``width`` and ``transformer_depth``
    transformer layers per MobileViT block (create_model takes no configuration override for byobnet models)."""
    width, depth = arch.kwargs["width"], arch.kwargs["transformer_depth"]

    def scaled(block):
        if isinstance(block, tuple):
            return tuple(scaled(b) for b in block)
        extra = dict(block.block_kwargs)
        if "transformer_dim" in extra:
            extra.update(transformer_dim=int(extra["transformer_dim"] * width), transformer_depth=depth)
        return replace(block, c=max(8, int(block.c * width)), block_kwargs=extra)

    cfg = mobilevit_cfgs["mobilevit_xxs"]
    cfg = replace(cfg, blocks=tuple(scaled(b) for b in cfg.blocks), stem_chs=int(cfg.stem_chs * width),
                  num_features=int(cfg.num_features * width))
    return ByobNet(cfg, num_classes=CLASSES)


def _yolo(arch: SampleArch) -> nn.Module:
    os.environ["YOLO_OFFLINE"] = "1"
    from ultralytics.nn.tasks import DetectionModel, yaml_model_load   # noqa: PLC0415  (slow to import)

    cfg = yaml_model_load(arch.config)
    k = arch.kwargs
    cfg["scales"] = {cfg["scale"]: [k["depth"], k["width"], k["max_channels"]]}
    cfg["reg_max"] = k["reg_max"]     # DFL bins: the box branch's width is 4 x reg_max
    return models.export_head(DetectionModel(cfg, nc=CLASSES - 6, verbose=False))   # 4 classes


# the reduced configurations that timm.create_model's arguments do not reach
BUILDERS = {"mobilevit_xxs": _mobilevit, "efficientformerv2_s0": _efficientformerv2,
            "mobilenetv4_hybrid_medium": _mobilenetv4, "mobilenetv4_conv_small": _mobilenetv4}


def build(arch: SampleArch, photos) -> models.Built:
    torch.manual_seed(models.SEED)
    if arch.family == "yolo":
        return models.realistic(_yolo(arch), "yolo", f"ultralytics {arch.config} {arch.kwargs}", SIZE,
                                (0.0, 0.0, 0.0), (1.0, 1.0, 1.0), photos)
    if arch.name in BUILDERS:
        model = BUILDERS[arch.name](arch)
    else:
        model = timm.create_model(arch.config, pretrained=False, num_classes=CLASSES, **arch.kwargs)
    cfg = model.pretrained_cfg if isinstance(getattr(model, "pretrained_cfg", None), dict) else {}
    mean, std = cfg.get("mean", models.IMAGENET_MEAN), cfg.get("std", models.IMAGENET_STD)
    if arch.name == "mobilevit_xxs":
        mean, std = (0.0, 0.0, 0.0), (1.0, 1.0, 1.0)   # timm's MobileViT configurations take 0..1 pixels
    return models.realistic(model, "timm", f"timm {arch.config} {arch.kwargs}", SIZE, mean, std, photos)


def shorten_names(path: Path) -> None:
    """Every node and tensor of the exported model renamed n<k> / t<k> (the graph's input and outputs kept):
    the exporter's names ("/stages/stages.0/blocks/blocks.0/mlp/fc1/MatMul", three times over in each
    QuantizeLinear / DequantizeLinear pair the quantizer adds) are most of a small model's bytes."""
    model = onnx.load(str(path))
    graph = model.graph
    keep = {v.name for v in (*graph.input, *graph.output)} | {""}
    names = {}

    def short(name):
        if name in keep:
            return name
        return names.setdefault(name, f"t{len(names)}")

    for tensor in graph.initializer:
        tensor.name = short(tensor.name)
    for k, node in enumerate(graph.node):
        node.name = f"n{k}"
        node.input[:] = [short(n) for n in node.input]
        node.output[:] = [short(n) for n in node.output]
        node.doc_string = ""
    for info in graph.value_info:
        info.name = short(info.name)
    onnx.checker.check_model(model)
    onnx.save(model, str(path))


def photo_pixels(paths, size: int) -> np.ndarray:
    """[N, size, size, 3] uint8: each photo's centre square resized as photo_inputs resizes it (mean 0, std 1
    with the 1/255 scale undone exactly: the pixels are integers)."""
    unit = models.photo_inputs(paths, size, (0.0, 0.0, 0.0), (1.0, 1.0, 1.0))
    pixels = np.rint(unit * 255).astype(np.uint8).transpose(0, 2, 3, 1)
    assert np.array_equal(pixels.astype(np.float32).transpose(0, 3, 1, 2) / np.float32(255), unit)
    return np.ascontiguousarray(pixels)


def normalized(pixels: np.ndarray, mean, std) -> np.ndarray:
    """photo_inputs' arithmetic on stored pixels (the test does the same): x / 255, minus mean, over std."""
    x = pixels.astype(np.float32) / np.float32(255)
    x = (x - np.float32(mean)) / np.float32(std)
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


def qnnweb_verdict(data: bytes, inputs, reference) -> dict:
    """What today's qnnweb does with a fixture: refused (the op kinds named), exact, or inexact."""
    try:
        loaded = qnnweb.load(data)
    except qnnweb.UnsupportedModelError as exc:
        return {"qnnweb": "refused", "refused_ops": sorted({op.partition(" ")[0] for _, op, _ in exc.problems})}
    with loaded:
        for x, want in zip(inputs, reference):
            got = loaded.run(x[None])
            if not all(np.array_equal(np.asarray(g), w) for g, w in zip(got, want)):
                return {"qnnweb": "inexact"}
    return {"qnnweb": "exact"}


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def manifest_text(manifest: dict) -> str:
    """The manifest as JSON with one line per field of an architecture (and per fixture), so that an
    architecture's ``expect`` is one line to flip."""
    lines = ["{"]
    for key in ("about", "photos"):
        lines.append(f" {json.dumps(key)}: {json.dumps(manifest[key])},")
    lines.append(' "architectures": {')
    for n, (name, entry) in enumerate(manifest["architectures"].items()):
        lines.append(f"  {json.dumps(name)}: {{")
        fields = [f"   {json.dumps(k)}: {json.dumps(v)}" for k, v in entry.items() if k != "fixtures"]
        fixtures = ",\n".join(f"    {json.dumps(f)}" for f in entry["fixtures"])
        lines.append(",\n".join(fields + [f'   "fixtures": [\n{fixtures}\n   ]']))
        lines.append("  }" + ("," if n < len(manifest["architectures"]) - 1 else ""))
    lines += [" }", "}"]
    return "\n".join(lines) + "\n"


def make(out: Path, samples: Path, log) -> dict:
    out.mkdir(parents=True, exist_ok=True)
    manifest_path = out / "manifest.json"
    kept = json.loads(manifest_path.read_text())["architectures"] if manifest_path.exists() else {}
    all_photos = models.photo_paths(samples)
    photos = [samples / name for name in PHOTOS]
    pixels = photo_pixels(photos, SIZE)
    np.save(out / f"photos_{SIZE}.npy", pixels)
    manifest = {"about": "made by tools/models/converters/arch_sample.py (./build.sh arch-sweep --fixtures DIR); "
                         "tests/onnx/test_arch_sample.py checks each architecture as its 'expect' says",
                "photos": {"file": f"photos_{SIZE}.npy", "sources": list(PHOTOS)},
                "architectures": {}}
    for arch in SAMPLE:
        built = build(arch, all_photos)
        float_path = out / f"{arch.name}.float.onnx"
        ox.export(built.model, built.input_shape, float_path)
        shorten_names(float_path)
        calibration = models.photo_inputs(all_photos, SIZE, built.mean, built.std, crops_per_photo=CALIBRATION_CROPS,
                                          seed=1)
        inputs = normalized(pixels, built.mean, built.std)
        assert np.array_equal(inputs, models.photo_inputs(photos, SIZE, built.mean, built.std))
        references, fixtures, verdicts, refused = {}, [], set(), set()
        for mode_name in arch.modes:
            data = ox.quantize(float_path, ox.MODES_BY_NAME[mode_name], calibration)
            file = f"{arch.name}_{mode_name}.onnx"
            (out / file).write_bytes(data)
            session = ReferenceSession(data, uint8_mul_add=True)
            outputs = [session.run({ox.INPUT_NAME: x[None]}) for x in inputs]
            for p, per_photo in enumerate(outputs):
                for k, o in enumerate(per_photo):
                    references[f"{mode_name}/{p}/{k}"] = o
            verdict = qnnweb_verdict(data, inputs, outputs)
            verdicts.add(verdict["qnnweb"])
            refused.update(verdict.get("refused_ops", ()))
            fixtures.append({"mode": mode_name, "file": file, "bytes": len(data), "sha256": sha256(data),
                             "qnnweb": verdict["qnnweb"]})
            log(f"{arch.name} {mode_name}: {len(data)} bytes, qnnweb {verdict}")
        float_path.unlink()
        np.savez_compressed(out / f"{arch.name}.npz", **references)
        today = "exact" if verdicts == {"exact"} else "refused" if verdicts == {"refused"} else "mixed"
        manifest["architectures"][arch.name] = {
            "expect": kept.get(arch.name, {}).get("expect", today), "refused_ops": sorted(refused),
            "model": built.timm_name, "input_shape": list(built.input_shape), "mean": list(built.mean),
            "std": list(built.std), "reference": f"{arch.name}.npz", "fixtures": fixtures}
        manifest_path.write_text(manifest_text(manifest))
    return manifest
