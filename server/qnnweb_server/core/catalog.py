"""Files the server hands out by name: models (with metadata), wheels and sample photos.

Safety rule for every name that comes from a URL: the name must be *exactly* the name of a
regular file found by listing the folder, and that file's resolved path must lie inside the
folder's resolved path (so a symlink pointing outside is not served). Nothing derived from the
request is ever joined onto a path before it has matched the listing.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import quote

from qnnweb_server.core import sidecars
from qnnweb_server.core.versions import (
    FileVersion,
    computed,
    identity,
    open_version,
    settled,
)
from qnnweb_server.static import package_version

MODEL_SUFFIXES = {".tflite": "tflite", ".onnx": "onnx", ".qnn": "qnn"}  # .qnn: compiled by qnnweb.compile
MAX_NAME_BYTES = 200
SAMPLE_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp"}

Describer = Callable[[bytes], dict[str, Any]]


def list_files(folder: Path, suffixes: set[str] | dict[str, str]) -> dict[str, Path]:
    """``{file name: resolved path}`` of the regular files directly in ``folder`` whose suffix is
    in ``suffixes`` and whose real location is inside ``folder``. Missing folder: empty. The
    folder's scan is cached per version of the folder (an added, removed or renamed entry changes
    its mtime)."""
    scanned = _scanned(folder)
    if scanned is None:
        return {}
    files = scanned[0]
    return {name: path for name, path in files.items() if os.path.splitext(name)[1].lower() in suffixes}


def _scanned(folder: Path) -> tuple[dict[str, Path], str, tuple, bool] | None:
    """(the folder's files, its resolved path, its version identity, whether that is settled), or None."""
    try:
        root = folder.resolve(strict=True)
        st = root.stat()
    except OSError:
        return None
    key, stable = identity(st), settled(st)
    return computed.get("scan", str(root), key, lambda: _scan(root), stable), str(root), key, stable


def _scan(root: Path) -> dict[str, Path]:
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return {}
    found: dict[str, Path] = {}
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            real = entry.resolve(strict=True)
        except OSError:
            continue  # dangling symlink
        if real.parent != root and root not in real.parents:
            continue  # symlink pointing outside the folder
        if real.is_file():
            found[entry.name] = real
    return found


def safe_file(folder: Path, name: str, suffixes: set[str] | dict[str, str]) -> Path | None:
    """The file called exactly ``name`` in ``folder`` (see ``list_files``), else None."""
    if not is_plain_name(name):
        return None
    return list_files(folder, suffixes).get(name)


def open_safe_file(folder: Path, name: str, suffixes: set[str] | dict[str, str]) -> FileVersion | None:
    """The current version of ``safe_file(folder, name, suffixes)``, opened; None if there is none."""
    path = safe_file(folder, name, suffixes)
    return None if path is None else open_version(path)


def is_plain_name(name: str) -> bool:
    """A file name alone: no folder part, no NUL."""
    return bool(name) and not any(c in name for c in "/\\\x00")


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


# ---- models -------------------------------------------------------------------------------


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
    scanned = _scanned(models_dir)
    if scanned is None:
        return []
    files, root, key, stable = scanned
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


def _tensor_record(t: dict[str, Any]) -> dict[str, Any]:
    rec = {"name": t.get("name"), "shape": list(t.get("shape") or []), "dtype": t.get("dtype")}
    if t.get("scale") is not None:
        rec["scale"] = t.get("scale")
        rec["zero_point"] = t.get("zero_point")
    return rec


def describe_version(version: FileVersion, describe: Describer) -> dict[str, Any]:
    """``describe`` of the version's bytes, once per version; a parse failure is reported, never raised."""

    def compute(v: FileVersion) -> dict[str, Any]:
        try:
            d = describe(v.read())
        except Exception as exc:  # noqa: BLE001 (any parse failure is the model's error)
            return {"error": f"{type(exc).__name__}: {exc}"}
        return {
            "format": d.get("format"),
            "inputs": [_tensor_record(t) for t in d.get("inputs", [])],
            "outputs": [_tensor_record(t) for t in d.get("outputs", [])],
            "ops": list(d.get("ops", [])),
        }

    return version.cached(("describe", describe), compute)


def model_record(model: ModelFile, describe: Describer, root: str = "") -> dict[str, Any] | None:
    """Everything the API says about one model, all of it from one version of the file (its URLs under
    the app's ``root`` path); None if the model is gone (deleted since the folder was listed). Never
    raises for a bad file or sidecar."""
    from qnnweb_server.core.compiled import (
        compiled_url,  # (compiled.py builds on this module)
    )

    version = open_version(model.path)
    if version is None:
        return None
    with version:
        side, side_err = read_sidecar(model)
        rec: dict[str, Any] = {
            "name": model.name,
            "file": model.file,
            "url": f"{root}/models/{quote(model.file, safe='')}",
            "compiled_url": root + compiled_url(model, version, side),
            "format": model.format,
            "size": version.size,
            "sha256": version.sha256,
        }
        desc = describe_version(version, describe)
    errors = []
    if "error" in desc:
        errors.append(desc["error"])
        rec.update({"inputs": [], "outputs": [], "ops": []})
    else:
        # what the parser found (a file may hold another format than its suffix says), except for a
        # compiled model, which describes the model it was compiled from
        rec.update({k: v for k, v in desc.items() if v is not None and not (k == "format" and model.format == "qnn")})
    if side_err:
        errors.append(side_err)
    for key in ("title", "postprocess", "labels", "description", "source", "preprocess", "output"):
        rec[key] = side.get(key)
    rec["task"] = side.get("task") or "classification"
    rec["speed_only"] = bool(side.get("speed_only"))
    rec["error"] = "; ".join(errors) if errors else None
    return rec


def record_identity(model: ModelFile) -> tuple | None:
    """What a model's record depends on, from two ``stat`` calls: the versions of the model file and
    of its sidecar, and whether both are settled (cacheable); None if the model is gone."""
    try:
        st = os.stat(model.path)
    except OSError:
        return None
    side = None
    if model.sidecar is not None:
        try:
            side = os.stat(model.sidecar)
        except OSError:
            pass
    stable = settled(st) and (side is None or settled(side))
    return identity(st), side and identity(side), stable


# ---- kernels, wheels and samples -------------------------------------------------------------


def kernels_digest(kernels_dir: Path) -> str | None:
    """One sha256 for the kernel modules as they are (of their names and sha256s): the folder name of
    their immutable URLs, ``/kernels/<digest>/``; None when there are none."""
    files = list_files(kernels_dir, {".wasm"})
    digest = hashlib.sha256()
    for name in sorted(files):
        version = open_version(files[name])
        if version is None:
            return None  # being rebuilt: the next request sees the new set
        with version:
            digest.update(f"{name}\0{version.sha256}\n".encode())
    return digest.hexdigest() if files else None


PYODIDE_SNAPSHOT = "qnnweb-snapshot.bin"  # ./build.sh build pyodide-snapshot, in the Pyodide folder


def pyodide_snapshot(pyodide_dir: Path, wheels: list[tuple[str, str]]) -> str | None:
    """The name of the Pyodide memory snapshot in ``pyodide_dir`` if it was made of exactly this
    Pyodide, its bytecode stdlib and these wheels (``(name, sha256)`` in install order), as its
    ``.json`` says (tools/pyodide_snapshot.mjs); else None: a page then starts Python itself. A
    snapshot restored beside other files would run stale code, or not start at all."""
    manifest = safe_file(pyodide_dir, PYODIDE_SNAPSHOT + ".json", {".json"})
    if manifest is None:
        return None
    try:
        made = json.loads(manifest.read_text(encoding="utf-8"))
        made_wheels = [(w["name"], w["sha256"]) for w in made["wheels"]]
        parts = {made["stdlib"]["name"]: made["stdlib"]["sha256"], PYODIDE_SNAPSHOT: made["snapshot"]["sha256"]}
        if made["pyodide"] != package_version(pyodide_dir) or made_wheels != wheels:
            return None
    except (OSError, ValueError, KeyError, TypeError):
        return None
    for name, digest in parts.items():
        version = open_safe_file(pyodide_dir, name, {os.path.splitext(name)[1]})
        if version is None:
            return None
        with version:
            if version.sha256 != digest:
                return None
    return PYODIDE_SNAPSHOT


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
            raise WheelsError(f"bad wheels/{manifest.name}: {exc}") from exc
        missing = [n for n in names if n not in present]
        if missing:
            raise WheelsError(f"wheels/{manifest.name} lists wheels that are not there: {missing}")
    else:
        names = sorted(present, key=lambda n: (n.lower().startswith("qnnweb-"), n))
    if not names:
        raise WheelsError("no wheels built: run ./build.sh build")
    return names


PYODIDE_LOCK = "pyodide-lock.json"


def pyodide_lock(wheels_dir: Path, wheel_url: Callable[[str, str], str], pyodide_url: str) -> dict[str, Any]:
    """The wheels folder's ``pyodide-lock.json`` (Pyodide's lock file plus these wheels: ./build.sh
    build pyodide-lock) with every relative file name made a URL: ``wheel_url(name, sha256)`` for
    the wheels, ``pyodide_url`` + name for Pyodide's packages. Raises ``WheelsError`` when it is
    missing, unreadable or made of other builds of the wheels (Pyodide would refuse their bytes)."""
    names = wheel_names(wheels_dir)
    path = safe_file(wheels_dir, PYODIDE_LOCK, {".json"})
    if path is None:
        raise WheelsError(f"no wheels/{PYODIDE_LOCK}: run ./build.sh build pyodide-lock")
    try:
        lock = json.loads(path.read_text(encoding="utf-8"))
        packages = lock["packages"]
        entries = {p["file_name"]: p for p in packages.values()}
    except (OSError, ValueError, KeyError, TypeError, AttributeError) as exc:
        raise WheelsError(f"bad wheels/{PYODIDE_LOCK}: {exc}") from exc
    urls = {}
    for name in names:
        version = open_safe_file(wheels_dir, name, {".whl"})
        if version is None:
            raise WheelsError(f"wheel {name} disappeared: run ./build.sh build")
        with version:
            if entries.get(name, {}).get("sha256") != version.sha256:
                raise WheelsError(f"wheels/{PYODIDE_LOCK} was made of another build of {name}: "
                                  "run ./build.sh build pyodide-lock")
            urls[name] = wheel_url(name, version.sha256)
    for package in packages.values():
        name = package["file_name"]
        if name in urls:
            package["file_name"] = urls[name]
        elif "://" not in name and not name.startswith("/"):
            package["file_name"] = pyodide_url + name
    return lock
