"""File helpers shared by the model-preparation tools."""

import argparse
import json
from collections.abc import Callable
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


def write_model(out: Path, name: str, suffix: str, data: bytes, sidecar: dict) -> bool:
    """``<out>/<name><suffix>`` and its sidecar ``<out>/<name>.json`` (indented JSON), each written only when
    it changed; True if either was."""
    changed = write_if_changed(out / f"{name}{suffix}", data)
    changed |= write_if_changed(out / f"{name}.json", (json.dumps(sidecar, indent=2) + "\n").encode("utf-8"))
    return changed


def main_with_out(doc: str, prepare: Callable[[Path], None], default: Path, argv: list[str] | None = None) -> int:
    """The command line of a tool that prepares models into one folder: ``--out`` (``default``), nothing else."""
    parser = argparse.ArgumentParser(description=doc.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=default, help="models folder")
    prepare(parser.parse_args(argv).out)
    return 0
