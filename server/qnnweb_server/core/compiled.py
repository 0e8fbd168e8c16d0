"""Compiled models (``.qnn``): each model of the models folder compiled once by the qnnweb frontend
(in this process, CPython) and kept on disk, keyed by the model's sha256 and the frontend's own
fingerprint, so that a new qnnweb (another lowering, another ABI) never serves an old compilation.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from functools import lru_cache
from importlib import util
from pathlib import Path
from urllib.parse import quote

from qnnweb_server.core import model_files
from qnnweb_server.core.versions import FileVersion, open_version

COMPILED_MAGIC = b"QNNW"  # qnnweb.compiled.MAGIC: the first bytes of a .qnn file


def is_compiled_model(data: bytes) -> bool:
    return data[:4] == COMPILED_MAGIC


class CompileError(ValueError):
    """The model cannot be compiled (unsupported, corrupt): the message says why."""


@lru_cache
def frontend_fingerprint() -> str:
    """sha256 of the qnnweb package's Python sources: a changed frontend compiles again."""
    spec = util.find_spec("qnnweb")
    if spec is None or not spec.submodule_search_locations:
        raise CompileError("the qnnweb package is not installed in the server's environment")
    root = Path(spec.submodule_search_locations[0])
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode() + b"\0" + path.read_bytes())
    return digest.hexdigest()[:16]


_locks: dict[str, threading.Lock] = {}
_locks_guard = threading.Lock()


def _lock(key: str) -> threading.Lock:
    with _locks_guard:
        return _locks.setdefault(key, threading.Lock())


def cache_key(version: FileVersion, metadata: dict) -> str:
    """The compiled model's key: the model version's sha256, the frontend's fingerprint and the
    sidecar's (``metadata``: its labels and preprocessing are in the file)."""
    sidecar = hashlib.sha256(json.dumps(metadata, sort_keys=True).encode()).hexdigest()[:8]
    return f"{version.sha256}-{frontend_fingerprint()}-{sidecar}"


def compiled_url(model: model_files.ModelFile, version: FileVersion, metadata: dict) -> str:
    """The URL of the compiled model, versioned by its key: a page that got it from the listing can
    cache the file for good (the response is `immutable` when `v` is the current key)."""
    if model.format == "qnn":  # compiled already: the file itself
        return f"/models/{quote(model.file, safe='')}?v={version.sha256}"
    url = f"/models/{quote(model.file, safe='')}.qnn"
    try:
        return f"{url}?v={cache_key(version, metadata)}"
    except CompileError:
        return url


def compiled_path(model: model_files.ModelFile, cache_dir: Path) -> tuple[Path, str] | None:
    """The .qnn file of ``model`` (compiling it first if needed) and its cache key (the ETag); None
    if the model is gone. One compilation per model version at a time: concurrent requests wait."""
    version = open_version(model.path)
    if version is None:
        return None
    with version:
        metadata, _ = model_files.read_sidecar(model)
        key = cache_key(version, metadata)
        path = cache_dir / f"{key}.qnn"
        failed = cache_dir / f"{key}.error"
        with _lock(key):
            if path.is_file():
                return path, key
            if failed.is_file():
                raise CompileError(failed.read_text(encoding="utf-8"))
            import qnnweb  # lazily, as the describer: the server runs even if qnnweb is broken

            cache_dir.mkdir(parents=True, exist_ok=True)
            try:
                data = qnnweb.compile(version.read(), metadata=metadata)
            except (ValueError, MemoryError) as exc:   # ModelError is a ValueError
                _write_atomically(failed, f"{type(exc).__name__}: {exc}".encode())
                raise CompileError(f"{type(exc).__name__}: {exc}") from None
            _write_atomically(path, data)
            return path, key


def _write_atomically(path: Path, data: bytes) -> None:
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=".tmp-", suffix=path.suffix)
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def precompile_all(settings) -> dict[str, str | None]:
    """Compile every model of the models folder now (what ``python -m qnnweb_server`` does in the
    background at start-up): {file: None, or why it cannot be compiled}."""
    outcome: dict[str, str | None] = {}
    for model in model_files.list_models(settings.models_dir):
        if model.format == "qnn":
            continue
        try:
            outcome[model.file] = None if compiled_path(model, settings.compiled_dir) else "the model is gone"
        except (CompileError, OSError) as exc:
            outcome[model.file] = str(exc)
    return outcome
