"""The files a command reads: the model, its metadata (a sidecar JSON, or what a ``.qnn`` holds)."""

import json
from pathlib import Path

from ..compiled import CompiledModel, is_compiled
from .errors import InputFileError


def read_bytes(path, what="model"):
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise InputFileError(f"cannot read the {what} {path}: {error.strerror or error}") from None


def sidecar_path(model_path):
    """The sidecar the server would pair with the model, ``<stem>.json`` beside it, or ``MODEL.json``."""
    model_path = Path(model_path)
    for candidate in (model_path.with_suffix(".json"), model_path.with_name(model_path.name + ".json")):
        if candidate.is_file():
            return candidate
    return None


def read_metadata(model_path, data, explicit=None):
    """``--metadata`` if given, else the sidecar beside the model, else a compiled model's own; {} if none."""
    path = Path(explicit) if explicit else sidecar_path(model_path)
    if path is None:
        return CompiledModel.from_bytes(data).metadata if is_compiled(data) else {}
    try:
        metadata = json.loads(read_bytes(path, "metadata").decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as error:
        raise InputFileError(f"metadata {path} is not JSON: {error}") from None
    if not isinstance(metadata, dict):
        raise InputFileError(f"metadata {path}: the top level is not a JSON object")
    return metadata
