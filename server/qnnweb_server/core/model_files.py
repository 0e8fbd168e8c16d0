"""The models folder: which files are models (by suffix), their sidecars, and the names an upload may take."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from qnnweb_server.core import sidecars
from qnnweb_server.core.safe_files import is_plain_name, scanned
from qnnweb_server.core.versions import computed, open_version

MODEL_SUFFIXES = {".tflite": "tflite", ".onnx": "onnx", ".qnn": "qnn"}  # .qnn: compiled by qnnweb.compile
MAX_NAME_BYTES = 200


def model_name_problem(name: str) -> str | None:
    """Why ``name`` cannot be the file name of an uploaded model, or None."""
    suffix = os.path.splitext(name)[1].lower()
    if not is_plain_name(name) or name.startswith(".") or any(ord(c) < 32 or ord(c) == 127 for c in name):
        return f"{name!r} is not a plain file name (no folders, no leading dot, no control characters)"
    if suffix not in MODEL_SUFFIXES or name[: -len(suffix)] == "":
        return f"{name!r}: a model's name ends with {', '.join(MODEL_SUFFIXES)}"
    if len(name.encode("utf-8")) > MAX_NAME_BYTES:
        return f"the name is longer than {MAX_NAME_BYTES} bytes"
    return None


@dataclass(frozen=True)
class ModelFile:
    name: str  # stem, e.g. "visual_wake_words"
    file: str  # file name, e.g. "visual_wake_words.tflite"
    path: Path
    format: str
    sidecar: Path | None = None  # <stem>.json in the same folder, if there is one


def list_models(models_dir: Path) -> list[ModelFile]:
    """Models in the folder, sorted by name; .tflite before .onnx when two share a stem (cached with
    the folder's scan)."""
    found = scanned(models_dir)
    if found is None:
        return []
    files, root, key, stable = found
    return computed.get("models", root, key, lambda: _models(files), stable)


def _models(files: dict[str, Path]) -> list[ModelFile]:
    models = []
    for f, p in files.items():
        stem, suffix = os.path.splitext(f)
        if suffix.lower() in MODEL_SUFFIXES:
            sidecar = files.get(stem + ".json")
            models.append(ModelFile(name=stem, file=f, path=p, format=MODEL_SUFFIXES[suffix.lower()], sidecar=sidecar))
    order = list(MODEL_SUFFIXES.values())
    return sorted(models, key=lambda m: (m.name, order.index(m.format), m.file))


def find_model(models_dir: Path, name: str) -> ModelFile | None:
    """A model by file name (``x.tflite``) or by stem (``x``); None if there is no such model."""
    if not is_plain_name(name):
        return None
    models = list_models(models_dir)
    for m in models:
        if m.file == name:
            return m
    for m in models:
        if m.name == name:
            return m
    return None


def read_sidecar(model: ModelFile) -> tuple[dict[str, Any], str | None]:
    """The model's sidecar (labels, description, preprocess...) and why it is unusable, if it is."""
    if model.sidecar is None:
        return {}, None
    version = open_version(model.sidecar)
    if version is None:
        return {}, None  # removed since the folder was listed
    with version:
        return sidecars.parse(version)
