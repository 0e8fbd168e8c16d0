"""Files the server hands out by name: the regular files found by listing a folder.

Safety rule for every name that comes from a URL: the name must be *exactly* the name of a
regular file found by listing the folder, and that file's resolved path must lie inside the
folder's resolved path (so a symlink pointing outside is not served). Nothing derived from the
request is ever joined onto a path before it has matched the listing.
"""

from __future__ import annotations

import os
from pathlib import Path

from qnnweb_server.core.versions import (
    FileVersion,
    computed,
    identity,
    open_version,
    settled,
)


def list_files(folder: Path, suffixes: set[str] | dict[str, str]) -> dict[str, Path]:
    """``{file name: resolved path}`` of the regular files directly in ``folder`` whose suffix is
    in ``suffixes`` and whose real location is inside ``folder``. Missing folder: empty. The
    folder's scan is cached per version of the folder (an added, removed or renamed entry changes
    its mtime)."""
    found = scanned(folder)
    if found is None:
        return {}
    files = found[0]
    return {name: path for name, path in files.items() if os.path.splitext(name)[1].lower() in suffixes}


def scanned(folder: Path) -> tuple[dict[str, Path], str, tuple, bool] | None:
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
