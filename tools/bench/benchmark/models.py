"""The models a run measures: the file each engine loads (an ONNX model's TFLite twin for LiteRT.js, and
a float-edged twin of a TFLite file with int8 inputs or outputs, which LiteRT.js's JavaScript tensors
cannot carry), the input tensor every engine gets, and reading the outputs as scores."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np

import qnnweb
import qnnweb.image

from .common import MODERN_MODELS, PHOTO, QNNWEB_ENGINES, REPO, BenchError, log


class TensorSpec:
    """What qnnweb.image.rgb_to_input needs from a tensor, from qnnweb.describe()."""

    def __init__(self, d):
        self.name, self.shape, self.dtype = d["name"], tuple(d["shape"]), d["dtype"]
        self.scale, self.zero_point = d.get("scale"), d.get("zero_point")
        self.size = math.prod(self.shape)


def _sidecar(path: Path) -> dict:
    side = path.with_suffix(".json")
    if side.is_file():
        try:
            data = json.loads(side.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}
    return {}


def _photo_rgb(width: int, height: int, pre: dict | None) -> bytes:
    """coffee.png as width*height*3 RGB bytes: the sidecar's resize (shorter side) + centre crop,
    or straight to the input size (Pillow bilinear, as the demo page)."""
    from PIL import Image

    img = Image.open(PHOTO).convert("RGB")
    resize = (pre or {}).get("resize")
    if isinstance(resize, (int, float)) and not isinstance(resize, bool):
        w, h = img.size
        if w <= h:
            rw, rh = int(resize), int(resize * h / w)
        else:
            rw, rh = int(resize * w / h), int(resize)
        img = img.resize((rw, rh), Image.BILINEAR)
        crop = (pre or {}).get("crop") or min(width, height)
        cw, ch = (crop, crop) if isinstance(crop, (int, float)) else tuple(crop)
        x0, y0 = round((rw - cw) / 2), round((rh - ch) / 2)
        img = img.crop((x0, y0, x0 + int(cw), y0 + int(ch)))
        if img.size != (width, height):
            img = img.resize((width, height), Image.BILINEAR)
    else:
        img = img.resize((width, height), Image.BILINEAR)
    return img.tobytes()


def _pattern(spec: TensorSpec) -> bytes:
    """A deterministic input for a model whose input is not an RGB image."""
    rng = np.random.default_rng(1234)
    if spec.dtype == "float32":
        return rng.uniform(-1, 1, spec.size).astype("<f4").tobytes()
    if spec.dtype in ("int8", "uint8"):
        return rng.integers(0, 256, spec.size, dtype=np.uint8).tobytes()
    if spec.dtype == "int32":
        return rng.integers(0, 10, spec.size).astype("<i4").tobytes()
    raise ValueError(f"no deterministic input for dtype {spec.dtype}")


def model_input(spec: TensorSpec, sidecar: dict) -> tuple[bytes, str]:
    """(input bytes, how they were made) for one model file."""
    shape = spec.shape
    if len(shape) == 4 and (shape[1] == 3 or shape[3] == 3) and spec.dtype in ("float32", "int8"):
        nchw = qnnweb.image.is_nchw(shape)
        h, w = (shape[2], shape[3]) if nchw else (shape[1], shape[2])
        pre = sidecar.get("preprocess") if isinstance(sidecar.get("preprocess"), dict) else None
        if pre and pre.get("mean") is not None and pre.get("std") is not None:
            mean, std, how = pre["mean"], pre["std"], "preprocess from the model's sidecar"
        else:
            mean, std, how = [127.5] * 3, [127.5] * 3, "no sidecar: resized to the input, (p - 127.5) / 127.5"
        rgb = _photo_rgb(w, h, pre)
        x = qnnweb.image.rgb_to_input(rgb, spec, mean, std)
        return bytes(memoryview(x).cast("B")), f"{PHOTO.name}, {how}"
    return _pattern(spec), "deterministic pattern (input is not an RGB image)"


class ModelFileInfo:
    """One model file the engines load (the user's file or a TFLite twin)."""

    def __init__(self, path: Path, sidecar: dict):
        self.path = path
        self.bytes = path.read_bytes()
        self.sha256 = hashlib.sha256(self.bytes).hexdigest()
        self.format = "onnx" if path.suffix.lower() == ".onnx" else "tflite"
        self.error = None
        self.input = self.output = None
        self.input_bytes = None
        self.input_how = None
        try:
            d = qnnweb.describe(self.bytes)
            self.input = TensorSpec(d["inputs"][0])
            self.output = TensorSpec(d["outputs"][0])
            self.input_bytes, self.input_how = model_input(self.input, sidecar)
        except Exception as exc:  # a model qnnweb cannot parse: other engines may still read it
            self.error = f"{type(exc).__name__}: {exc}"


class BenchModel:
    def __init__(self, index: int, given: str):
        self.given = given
        self.path = Path(given)
        if not self.path.is_absolute() and not self.path.exists():
            self.path = REPO / given
        if not self.path.is_file():
            maker = "./build.sh bench --modern, which makes the modern set" if given in MODERN_MODELS else \
                "./build.sh build for the demo models"
            raise BenchError(f"--model {given}: no such file (run {maker})")
        self.format = {".onnx": "onnx", ".tflite": "tflite"}.get(self.path.suffix.lower())
        if self.format is None:
            raise BenchError(f"--model {given}: expected a .onnx or .tflite file")
        self.index = index
        self.sidecar = _sidecar(self.path)
        self.labels = self.sidecar.get("labels") if isinstance(self.sidecar.get("labels"), list) else None
        meaning = str((self.sidecar.get("output") or {}).get("meaning", "")) if isinstance(
            self.sidecar.get("output"), dict) else ""
        self.logits = "logit" in meaning.lower()
        self.file = ModelFileInfo(self.path, self.sidecar)
        self.twin: ModelFileInfo | None = None
        self.twin_path: Path | None = None
        self.twin_error: str | None = None
        self.twin_check: dict | None = None
        self.twin_origin = "written by qnnweb.exporters.export_tflite"

    @property
    def name(self):
        return self.path.stem

    def make_twin(self, out_dir: Path) -> None:
        """The TFLite file LiteRT.js runs when it cannot run this one: the TFLite file an ONNX model's sidecar
        names (``tflite_twin``: the same torch model converted by litert-torch and ai-edge-quantizer), else an
        ONNX model's int8 TFLite twin, or a TFLite file with int8 edges given float32 ones
        (qnnweb.exporters.export_tflite)."""
        if self.format == "onnx" and "tflite_twin" in self.sidecar:
            self._named_twin()
            return
        if self.format == "tflite" and not self.file.error and "int8" not in (self.file.input.dtype,
                                                                               self.file.output.dtype):
            return
        try:
            from qnnweb.exporters import export_tflite
            from qnnweb.importers import import_model

            graph = import_model(self.file.bytes)
            data = export_tflite(float_edges(graph) if self.format == "tflite" else graph)
        except Exception as exc:
            self.twin_error = f"the TFLite exporter failed: {type(exc).__name__}: {exc}"
            log(f"{self.name}: {self.twin_error}")
            return
        out_dir.mkdir(parents=True, exist_ok=True)
        self.twin_path = out_dir / f"{self.name}.tflite"
        self.twin_path.write_bytes(data)
        self.twin = ModelFileInfo(self.twin_path, self.sidecar)
        if self.twin.error:
            self.twin_error = f"qnnweb cannot describe the exported twin: {self.twin.error}"

    def _named_twin(self) -> None:
        """The sidecar's ``tflite_twin`` (a file next to the model), or why there is none: the converter's
        reason (``tflite_twin_error``) or the missing file."""
        path = self.path.parent / str(self.sidecar["tflite_twin"])
        if not path.is_file():
            self.twin_error = self.sidecar.get("tflite_twin_error") or (
                f"{path.name} is missing (./build.sh bench --modern makes it: tools/models/converters/bench_models.py)")
            log(f"{self.name}: {self.twin_error}")
            return
        self.twin_path, self.twin_origin = path, "litert-torch + ai-edge-quantizer, from the same torch model"
        self.twin = ModelFileInfo(path, self.sidecar)
        if self.twin.error:
            self.twin_error = f"qnnweb cannot describe {path.name}: {self.twin.error}"
        elif "int8" in (self.twin.input.dtype, self.twin.output.dtype):
            self.twin_error = f"{path.name} has int8 edges, which LiteRT.js's tensors cannot carry"

    def file_for(self, engine: str) -> tuple[ModelFileInfo | None, str | None]:
        """(the file this engine loads, None) or (None, why it cannot run this model)."""
        if engine in QNNWEB_ENGINES:
            return self.file, None
        if engine in ("ort", "native-onnxruntime"):
            if self.format != "onnx":
                return None, "onnxruntime reads only ONNX models (this is a .tflite file)"
            return self.file, None
        if engine in ("litert", "native-litert"):
            if self.format == "tflite" and engine == "litert" and self.twin_error:
                return None, f"no float-edged twin for LiteRT.js: {self.twin_error}"
            if self.format == "tflite":
                # LiteRT.js's tensors are float32 / int32 / uint8 only: int8 edges run as the float-edged twin
                return (self.twin if engine == "litert" and self.twin is not None else self.file), None
            if self.twin is None or self.twin_error:
                return None, f"no TFLite twin for this ONNX model: {self.twin_error}"
            return self.twin, None
        raise ValueError(engine)

    def scores(self, raw: bytes, dtype: str, file: ModelFileInfo) -> np.ndarray:
        """The output as float scores (dequantized, softmax for logits)."""
        dt = {"float32": "<f4", "int8": "i1", "uint8": "u1", "int32": "<i4"}[dtype]
        v = np.frombuffer(raw, dtype=dt).astype(np.float64)
        out = file.output
        if dtype in ("int8", "uint8") and out is not None and out.scale:
            scale = out.scale[0] if isinstance(out.scale, (list, tuple)) else out.scale
            zp = out.zero_point[0] if isinstance(out.zero_point, (list, tuple)) else out.zero_point
            v = (v - zp) * scale
        if self.logits:
            e = np.exp(v - v.max())
            v = e / e.sum()
        return v

    def top5(self, scores: np.ndarray):
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:5]
        return [[int(i), round(float(scores[i]), 6)] for i in order]

    def label(self, i):
        if self.labels and 0 <= i < len(self.labels):
            return self.labels[i]
        return str(i)


def float_edges(graph):
    """The graph with float32 inputs and outputs where it has int8 ones: a QUANTIZE after each such input
    and a DEQUANTIZE before each such output, with the int8 tensors' own quantization (the arithmetic in
    between is unchanged)."""
    from dataclasses import replace

    from qnnweb.graph import Op, Tensor

    tensors, ops = list(graph.tensors), list(graph.ops)

    def float_twin(index):
        t = tensors[index]
        tensors.append(Tensor(len(tensors), t.name, t.shape, "float32"))
        tensors[index] = replace(t, name=t.name + "/int8")
        return len(tensors) - 1

    inputs = [float_twin(i) if tensors[i].dtype == "int8" else i for i in graph.inputs]
    outputs = [float_twin(i) if tensors[i].dtype == "int8" else i for i in graph.outputs]
    first = [Op(-1, "QUANTIZE", [f], [i]) for f, i in zip(inputs, graph.inputs) if f != i]
    last = [Op(-1, "DEQUANTIZE", [i], [f]) for f, i in zip(outputs, graph.outputs) if f != i]
    return replace(graph, tensors=tensors, ops=first + ops + last, inputs=inputs, outputs=outputs)


def top5_agree(a: np.ndarray, b: np.ndarray, k: int = 5) -> tuple[bool, float]:
    """Do two score vectors give the same top-k? Yes when the k best classes are the same, in
    the same order; or, up to ties, when the vectors differ little (at most 5% of the largest
    score) and each one's top-k classes are within the other's top-k up to twice that
    difference. Returns (agree, max abs difference)."""
    if a.shape != b.shape:
        return False, float("inf")
    eps = float(np.max(np.abs(a - b)))
    ta = sorted(range(len(a)), key=lambda i: (-a[i], i))[:k]
    tb = sorted(range(len(b)), key=lambda i: (-b[i], i))[:k]
    if ta == tb:
        return True, eps
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))), 1e-12)
    if eps > 0.05 * scale:
        return False, eps
    tol = 2 * eps + 1e-9
    ok = all(b[c] >= b[tb[-1]] - tol for c in ta) and all(a[c] >= a[ta[-1]] - tol for c in tb)
    ok = ok and b[ta[0]] >= b[tb[0]] - tol and a[tb[0]] >= a[ta[0]] - tol
    return bool(ok), eps
