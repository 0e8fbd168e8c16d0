"""qnnweb's version, kept in one place: pyproject.toml's ``[project] version``. An installed qnnweb
(wheel, editable, Pyodide) reads it from its distribution's metadata; a source checkout on sys.path
reads the checkout's own pyproject.toml, which is right even when another qnnweb is installed."""

import functools
import importlib.metadata
import tomllib
from pathlib import Path

# py_frontend/qnnweb/version.py -> the checkout's root
CHECKOUT_PYPROJECT = Path(__file__).resolve().parents[2] / "pyproject.toml"


@functools.cache
def package_version():
    if CHECKOUT_PYPROJECT.is_file():
        project = tomllib.loads(CHECKOUT_PYPROJECT.read_text(encoding="utf-8")).get("project", {})
        if project.get("name") == "qnnweb":
            return project["version"]
    try:
        return importlib.metadata.version("qnnweb")
    except importlib.metadata.PackageNotFoundError:
        raise ImportError("qnnweb's version is unknown: neither installed nor in a checkout with its pyproject.toml") from None
