"""Files the server hands out by name: models (with metadata), wheels and sample photos.

Safety rule for every name that comes from a URL: the name must be *exactly* the name of a
regular file found by listing the folder, and that file's resolved path must lie inside the
folder's resolved path (so a symlink pointing outside is not served). Nothing derived from the
request is ever joined onto a path before it has matched the listing.
"""

from __future__ import annotations

import hashlib
import json
import threading
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

MODEL_SUFFIXES = {".tflite": "tflite", ".onnx": "onnx"}
SAMPLE_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp"}

Describer = Callable[[bytes], dict[str, Any]]


def list_files(folder: Path, suffixes: set[str] | dict[str, str]) -> dict[str, Path]:
    """``{file name: resolved path}`` of the regular files directly in ``folder`` whose suffix is
    in ``suffixes`` and whose real location is inside ``folder``. Missing folder: empty."""
    try:
        root = folder.resolve(strict=True)
        entries = sorted(root.iterdir())
    except OSError:
        return {}
    found: dict[str, Path] = {}
    for entry in entries:
        name = entry.name
        if name.startswith(".") or entry.suffix.lower() not in suffixes:
            continue
        try:
            real = entry.resolve(strict=True)
        except OSError:
            continue  # dangling symlink
        if real.parent != root and root not in real.parents:
            continue  # symlink pointing outside the folder
        if not real.is_file():
            continue
        found[name] = real
    return found


def safe_file(folder: Path, name: str, suffixes: set[str] | dict[str, str]) -> Path | None:
    """The file called exactly ``name`` in ``folder`` (see ``list_files``), else None."""
    if not name or "/" in name or "\\" in name or "\x00" in name:
        return None
    return list_files(folder, suffixes).get(name)


# ---- models -------------------------------------------------------------------------------


@dataclass(frozen=True)
class ModelFile:
    name: str  # stem, e.g. "visual_wake_words"
    file: str  # file name, e.g. "visual_wake_words.tflite"
    path: Path
    format: str


def list_models(models_dir: Path) -> list[ModelFile]:
    """Models in the folder, sorted by name; .tflite before .onnx when two share a stem."""
    files = list_files(models_dir, MODEL_SUFFIXES)
    models = [
        ModelFile(name=Path(f).stem, file=f, path=p, format=MODEL_SUFFIXES[Path(f).suffix.lower()])
        for f, p in files.items()
    ]
    order = list(MODEL_SUFFIXES.values())
    return sorted(models, key=lambda m: (m.name, order.index(m.format), m.file))


def find_model(models_dir: Path, name: str) -> ModelFile | None:
    """A model by file name (``x.tflite``) or by stem (``x``); None if there is no such model."""
    if not name or "/" in name or "\\" in name or "\x00" in name:
        return None
    models = list_models(models_dir)
    for m in models:
        if m.file == name:
            return m
    for m in models:
        if m.name == name:
            return m
    return None


class _FileCache:
    """Results computed from a file's bytes, keyed by (path, mtime_ns, size, what)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[tuple, Any] = {}

    def get(self, path: Path, what: Any, compute: Callable[[bytes], Any]) -> Any:
        st = path.stat()
        key = (str(path), st.st_mtime_ns, st.st_size, what)
        with self._lock:
            if key in self._data:
                return self._data[key]
        data = path.read_bytes()
        value = compute(data)
        with self._lock:
            # drop stale entries for the same path and purpose
            for old in [k for k in self._data if k[0] == key[0] and k[3] == what and k != key]:
                del self._data[old]
            self._data[key] = value
        return value


_cache = _FileCache()


def sha256_of(path: Path) -> str:
    return _cache.get(path, "sha256", lambda data: hashlib.sha256(data).hexdigest())


def _tensor_record(t: dict[str, Any]) -> dict[str, Any]:
    rec = {"name": t.get("name"), "shape": list(t.get("shape") or []), "dtype": t.get("dtype")}
    if t.get("scale") is not None:
        rec["scale"] = t.get("scale")
        rec["zero_point"] = t.get("zero_point")
    return rec


def _describe_or_error(describe: Describer) -> Callable[[bytes], dict[str, Any]]:
    def compute(data: bytes) -> dict[str, Any]:
        try:
            d = describe(data)
        except Exception as exc:  # any parse failure is reported, never raised
            return {"error": f"{type(exc).__name__}: {exc}"}
        return {
            "format": d.get("format"),
            "inputs": [_tensor_record(t) for t in d.get("inputs", [])],
            "outputs": [_tensor_record(t) for t in d.get("outputs", [])],
            "ops": list(d.get("ops", [])),
        }

    return compute


def read_sidecar(model: ModelFile) -> tuple[dict[str, Any], str | None]:
    """The model's ``<stem>.json`` (labels, description, preprocess) and an error, if any."""
    side = safe_file(model.path.parent, model.name + ".json", {".json"})
    if side is None:
        return {}, None
    try:
        data = json.loads(side.read_text(encoding="utf-8"))
        if not isinstance(data, dict):
            raise ValueError("top level is not an object")
        return data, None
    except (OSError, ValueError) as exc:
        return {}, f"sidecar {side.name}: {exc}"


def _compiled_url(model: ModelFile, sidecar: dict[str, Any]) -> str:
    from qnnweb_server.core.compiled import compiled_url  # (compiled.py builds on this module)

    return compiled_url(model, sidecar)


def model_record(model: ModelFile, describe: Describer) -> dict[str, Any]:
    """Everything the API says about one model. Never raises for a bad file."""
    side, side_err = read_sidecar(model)
    rec: dict[str, Any] = {
        "name": model.name,
        "file": model.file,
        "url": f"/models/{quote(model.file)}",
        "compiled_url": _compiled_url(model, side),
        "format": model.format,
        "size": model.path.stat().st_size,
        "sha256": sha256_of(model.path),
    }
    desc = _cache.get(model.path, ("describe", describe), _describe_or_error(describe))
    errors = []
    if "error" in desc:
        errors.append(desc["error"])
        rec.update({"inputs": [], "outputs": [], "ops": []})
    else:
        rec.update({k: v for k, v in desc.items() if v is not None})
    if side_err:
        errors.append(side_err)
    rec["labels"] = side.get("labels")
    rec["description"] = side.get("description")
    rec["source"] = side.get("source")
    rec["preprocess"] = side.get("preprocess")
    rec["output"] = side.get("output") if isinstance(side.get("output"), dict) else None
    rec["error"] = "; ".join(errors) if errors else None
    return rec


# ---- wheels and samples ---------------------------------------------------------------------


class WheelsError(RuntimeError):
    pass


def wheel_names(wheels_dir: Path) -> list[str]:
    """Wheel file names in install order: from ``manifest.json``, else the dependencies first
    and ``qnnweb-*.whl`` last. Raises ``WheelsError`` when something is missing."""
    present = list_files(wheels_dir, {".whl"})
    manifest = safe_file(wheels_dir, "manifest.json", {".json"})
    if manifest is not None:
        try:
            names = json.loads(manifest.read_text(encoding="utf-8"))["wheels"]
            if not isinstance(names, list) or not all(isinstance(n, str) for n in names):
                raise ValueError('"wheels" is not a list of file names')
        except (OSError, ValueError, KeyError, TypeError) as exc:
            raise WheelsError(f"bad {manifest}: {exc}") from exc
        missing = [n for n in names if n not in present]
        if missing:
            raise WheelsError(f"{manifest} lists wheels that are not in {wheels_dir}: {missing}")
    else:
        names = sorted(present, key=lambda n: (n.lower().startswith("qnnweb-"), n))
    if not names:
        raise WheelsError(f"no wheels in {wheels_dir}: run ./build.sh build")
    return names
