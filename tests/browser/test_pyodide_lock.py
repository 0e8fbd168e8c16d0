"""Pyodide installs qnnweb by name from the server's lock file (/api/wheels/pyodide-lock.json: Pyodide's
lock file plus the wheels, made by pyodide-lock at build time): what a JupyterLite / PyScript page or
our own pages do, and web/pyodide-start.js's way when there is no snapshot to restore."""

from __future__ import annotations

import json
import re

import qnnweb
from browser_pages import evaluate_in_fresh_page

BY_NAME = """async () => {
  const { PYODIDE_VERSION } = await import("/static/pyodide-start.js");
  const indexURL = new URL(`/pyodide/${PYODIDE_VERSION}/`, location.href).href;
  const { loadPyodide } = await import(indexURL + "pyodide.mjs");
  // (an absolute lockFileURL: Pyodide 314 does not resolve a path against the page's URL)
  const lockFileURL = new URL("/api/wheels/pyodide-lock.json", location.href).href;
  const pyodide = await loadPyodide({ indexURL, lockFileURL, packages: ["qnnweb"] });
  return JSON.stringify({
    version: pyodide.runPython("import qnnweb, qnnweb.importers.onnx; qnnweb.__version__"),
    loaded: Object.fromEntries(Object.entries(pyodide.loadedPackages)),
  });
}"""

START = """async () => {
  const { startPyodide } = await import("/static/pyodide-start.js");
  const pyodide = await startPyodide();
  return JSON.stringify({
    version: pyodide.runPython("import qnnweb; qnnweb.__version__"),
    loaded: Object.fromEntries(Object.entries(pyodide.loadedPackages)),
  });
}"""

NO_SNAPSHOT = ("**/pyodide/qnnweb-snapshot.bin", lambda route: route.fulfill(status=404, body=b"gone"))
NO_LOCK = ("**/api/wheels/pyodide-lock.json", lambda route: route.fulfill(status=503, body=b"{}"))


def _run(browser, server_url, script, *routes):
    got, warnings, errors = evaluate_in_fresh_page(browser, server_url, script, *routes)
    return json.loads(got), warnings, errors


def test_loadpyodide_installs_qnnweb_by_name(browser, server_url):
    """qnnweb and its dependencies from the lock file's entries (Pyodide checks each wheel's sha256
    against it), and not tflite's declared numpy, which qnnweb never imports."""
    got, _, errors = _run(browser, server_url, BY_NAME)
    assert got["version"] == qnnweb.__version__
    assert got["loaded"] == {name: "default channel" for name in ("flatbuffers", "protobuf", "qnnweb", "tflite")}
    assert not errors


def test_the_pages_install_by_name_and_by_url_without_the_lock_file(browser, server_url):
    """web/pyodide-start.js without a snapshot: by name from the lock file; without the lock file too,
    Pyodide starts with its own and installs the wheels by their URLs (/api/wheels), saying so."""
    got, warnings, errors = _run(browser, server_url, START, NO_SNAPSHOT)
    assert got["version"] == qnnweb.__version__ and got["loaded"]["qnnweb"] == "default channel"
    assert not any("pyodide-lock.json" in w for w in warnings)
    assert [e for e in errors if "qnnweb-snapshot.bin" not in e] == [], errors
    got, warnings, _ = _run(browser, server_url, START, NO_SNAPSHOT, NO_LOCK)
    assert got["version"] == qnnweb.__version__
    # the wheel compiled to Pyodide's bytecode, tagged with its Python (./build.sh build pyodide-bytecode)
    assert re.search(rf"/qnnweb-{qnnweb.__version__}-py3\d+-none-any\.whl$", got["loaded"]["qnnweb"]), got["loaded"]
    assert any("pyodide-lock.json unavailable" in w for w in warnings), warnings
