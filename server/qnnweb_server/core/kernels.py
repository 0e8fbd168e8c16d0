"""The kernel modules (.wasm) as one versioned set."""

from __future__ import annotations

import hashlib
from pathlib import Path

from qnnweb_server.core.safe_files import list_files
from qnnweb_server.core.versions import open_version


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
