"""Assemble the npm package `qnnweb` in a folder, for `npm pack` (./build.sh build npm).

web/package.json says what ships: every file its `exports` name under lib/ is web's file of that
name (the modules and their hand-written .d.ts), the kernel modules go to kernels/ (qnnweb.js
finds them at ../kernels/ from its own URL, as on the qnnweb server: /static/qnnweb.js and
/kernels/), web/README.md is the package's README. The version is pyproject.toml's, written in
here so it lives in one place.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tomllib
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
WEB = REPO / "web"


def export_targets(exports: dict) -> list[str]:
    """The files (package-relative, without "./") the `exports` map names, patterns left out."""
    targets = []
    for target in exports.values():
        for path in (target.values() if isinstance(target, dict) else [target]):
            if "*" not in path:
                targets.append(path.removeprefix("./"))
    return targets


def assemble(out: Path, kernels: list[Path]) -> Path:
    manifest = json.loads((WEB / "package.json").read_text())
    manifest.pop("//", None)  # a note about this very assembly, not for the package's users
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    manifest = {"name": manifest.pop("name"), "version": version, **manifest}
    if out.exists():
        shutil.rmtree(out)
    (out / "lib").mkdir(parents=True)
    (out / "kernels").mkdir()
    for target in export_targets(manifest["exports"]):
        if target.startswith("lib/"):
            shutil.copy(WEB / target.removeprefix("lib/"), out / target)
    for kernel in kernels:
        if not kernel.is_file():
            sys.exit(f"{kernel} is missing: run ./build.sh build kernels")
        shutil.copy(kernel, out / "kernels" / kernel.name)
    shutil.copy(WEB / "README.md", out / "README.md")
    (out / "package.json").write_text(json.dumps(manifest, indent=2) + "\n")
    missing = [t for t in export_targets(manifest["exports"]) if not (out / t).is_file()]
    if missing:
        sys.exit(f"web/package.json exports files the package lacks: {missing}")
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to make (emptied first)")
    parser.add_argument("kernels", type=Path, nargs="+", help="the kernel modules (qnnweb-VARIANT[-threads].wasm)")
    args = parser.parse_args()
    assemble(args.out, args.kernels)


if __name__ == "__main__":
    main()
