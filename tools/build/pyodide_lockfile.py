"""Pyodide's lock file with the qnnweb wheels added, so that Pyodide installs qnnweb by name:

    .venv/bin/python tools/build/pyodide_lockfile.py PYODIDE_DIR WHEELS_DIR

writes WHEELS_DIR/pyodide-lock.json: PYODIDE_DIR/pyodide-lock.json plus one entry per wheel of
WHEELS_DIR/manifest.json (name, version, sha256, imports, dependencies), made by pyodide-lock's
`add_wheels_to_spec` (what `pyodide lockfile add-wheels` runs). The server serves it as
/api/pyodide-lock.json with every file name turned into a URL of its own (the wheels' versioned
ones, Pyodide's under its version), so `loadPyodide({lockFileURL, packages: ["qnnweb"]})` and
`pyodide.loadPackage("qnnweb")` work.

Run after the wheels' last change (./build.sh build pyodide-bytecode rewrites and renames them): the
sha256 recorded here is what Pyodide checks each download against.
"""

import json
import sys
import zipfile
from pathlib import Path

from pyodide_lock import PyodideLockSpec
from pyodide_lock.utils import add_wheels_to_spec

# Requirements the wheels declare that qnnweb never imports: tflite's generated flatbuffer classes
# import numpy only in their *AsNumpy accessors, which qnnweb does not call (it runs without numpy
# in Pyodide), and Pyodide's numpy would add ~3 MB to every first visit.
UNUSED_DEPENDENCIES = {"tflite": {"numpy"}}


def top_level_imports(wheel):
    """The wheel's top-level modules and packages. pyodide-lock looks for .py files, and the wheels
    here hold bytecode only (tools/build/pyodide_bytecode.mjs), so it finds none; Pyodide needs them for
    `loadPackagesFromImports` ("import qnnweb" -> the qnnweb package)."""
    names = set()
    for name in zipfile.ZipFile(wheel).namelist():
        top, in_folder, _ = name.partition("/")
        if name.endswith((".py", ".pyc")) and not top.endswith((".dist-info", ".data")):
            names.add(top if in_folder else top.rsplit(".", 1)[0])
    return sorted(names)


def main():
    pyodide_dir, wheels_dir = Path(sys.argv[1]), Path(sys.argv[2])
    spec = PyodideLockSpec.from_json(pyodide_dir / "pyodide-lock.json")
    names = json.loads((wheels_dir / "manifest.json").read_text())["wheels"]
    spec = add_wheels_to_spec(spec, [wheels_dir / name for name in names])
    for package in spec.packages.values():
        if package.file_name in names and not package.imports:
            package.imports = top_level_imports(wheels_dir / package.file_name)
    for name, unused in UNUSED_DEPENDENCIES.items():
        spec.packages[name].depends = [d for d in spec.packages[name].depends if d not in unused]
    out = wheels_dir / "pyodide-lock.json"
    spec.to_json(out)
    added = ", ".join(f"{p.name} {p.version}" for p in spec.packages.values() if p.file_name in names)
    print(f"[pyodide_lockfile] {out}: Pyodide's {len(spec.packages) - len(names)} packages + {added}", file=sys.stderr)


if __name__ == "__main__":
    main()
