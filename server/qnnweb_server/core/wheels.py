"""The pure-Python wheels Pyodide installs: their install order and the lock file naming them."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from qnnweb_server.core.safe_files import list_files, open_safe_file, safe_file


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
