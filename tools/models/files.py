"""File helpers shared by the model-preparation tools."""

from pathlib import Path


def write_if_changed(path: Path, data: bytes) -> bool:
    """Write atomically, and only when the content differs: unchanged files keep their mtime (and
    so the server's ETag and the build's up-to-date checks)."""
    if path.exists() and path.read_bytes() == data:
        return False
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    tmp.replace(path)
    return True
