"""The Pyodide memory snapshot, served only when it was made of the files served beside it."""

from __future__ import annotations

import json
import os
from pathlib import Path

from qnnweb_server.core.safe_files import open_safe_file, safe_file
from qnnweb_server.static import package_version

PYODIDE_SNAPSHOT = "qnnweb-snapshot.bin"  # ./build.sh build pyodide-snapshot, in the Pyodide folder


def pyodide_snapshot(pyodide_dir: Path, wheels: list[tuple[str, str]]) -> str | None:
    """The name of the Pyodide memory snapshot in ``pyodide_dir`` if it was made of exactly this
    Pyodide, its bytecode stdlib and these wheels (``(name, sha256)`` in install order), as its
    ``.json`` says (tools/build/pyodide_snapshot.mjs); else None: a page then starts Python itself. A
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
