"""Pyodide restored from the server's memory snapshot (tools/build/pyodide_snapshot.mjs, web/pyodide-start.js):
qnnweb imported already, the wheels' files back in place, its own random state per visit — and Python
still starts the usual way when the snapshot is missing or broken."""

from __future__ import annotations

import base64
import json
import urllib.request

import qnnweb
from browser_pages import REPO, evaluate_in_fresh_page, open_page

START = """async () => {
  const { startPyodide } = await import("/static/pyodide-start.js");
  const pyodide = await startPyodide();
  return pyodide.runPython(`
import importlib.metadata, json, random, sys
import qnnweb, qnnweb.importers.tflite  # a lazy import: its files and its dependencies' from the wheels
from importlib import resources
json.dumps({
    "snapshot": "_qnnweb_snapshot" in sys.modules,
    "version": importlib.metadata.version("qnnweb"),
    "runtime": len(resources.files("qnnweb").joinpath("js", "qnnweb.js").read_bytes()),
    "random": random.random(),
})`);
}"""

RUN = """async (model) => {
  const { startPyodide } = await import("/static/pyodide-start.js");
  const pyodide = await startPyodide();
  const ns = pyodide.globals.get("dict")();
  ns.set("url", model);
  return await pyodide.runPythonAsync(`
import base64, qnnweb
m = await qnnweb.load_async(url, variant="scalar")
x = bytes((i * 7919 + 13) % 251 for i in range(m.inputs[0].nbytes))
base64.b64encode(bytes(memoryview(m.run(x)[0]).cast("B"))).decode()`, { globals: ns });
}"""


def _start(browser, server_url, route=None):
    got, warnings, errors = evaluate_in_fresh_page(browser, server_url, START, *([route] if route else []))
    return json.loads(got), warnings, errors


def test_python_starts_from_the_snapshot_with_its_files_and_own_random_state(browser, server_url):
    first, warnings, errors = _start(browser, server_url)
    second, _, _ = _start(browser, server_url)
    assert first["snapshot"] and second["snapshot"], warnings
    assert first["version"] == qnnweb.__version__
    assert first["runtime"] == len((REPO / "web" / "qnnweb.js").read_bytes())
    assert first["random"] != second["random"]  # reseeded: the snapshot froze one state for everyone
    assert not errors and not warnings


def test_a_broken_snapshot_falls_back_to_starting_python(browser, server_url):
    broken = ("**/pyodide/qnnweb-snapshot.bin", lambda route: route.fulfill(status=200, body=b"\x00" * 65536))
    got, warnings, errors = _start(browser, server_url, broken)
    assert not got["snapshot"] and got["version"] == qnnweb.__version__
    assert any("snapshot not used" in w for w in warnings), warnings
    missing = ("**/pyodide/qnnweb-snapshot.bin", lambda route: route.fulfill(status=404, body=b"gone"))
    got, warnings, _ = _start(browser, server_url, missing)
    assert not got["snapshot"] and any("HTTP 404" in w for w in warnings), warnings


def test_a_model_runs_from_the_snapshot_as_in_cpython(browser, server_url, demo_folders):
    """The restored Python loads the server's compiled model and gives CPython's bytes."""
    name = "visual_wake_words.tflite"
    with urllib.request.urlopen(f"{server_url}/api/models/{name}") as r:
        compiled_url = json.loads(r.read())["compiled_url"]
    context, page, errors = open_page(browser, server_url)
    try:
        got = base64.b64decode(page.evaluate(RUN, compiled_url))
        assert not errors
    finally:
        context.close()
    model = qnnweb.load(demo_folders["models"] / name, variant="scalar")
    x = bytes((i * 7919 + 13) % 251 for i in range(model.inputs[0].nbytes))
    assert got == bytes(memoryview(model.run(x)[0]).cast("B"))
