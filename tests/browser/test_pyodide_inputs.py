"""model.run in Pyodide takes a page's JavaScript typed arrays as they are: the host copies them into
the kernels' memory in JavaScript (no Python bytes made of them); a wrong type or size is a ValueError
naming the input, as for Python buffers."""

from __future__ import annotations

import json
import urllib.request

from browser_pages import evaluate_in_fresh_page

RUN = """async (model) => {
  const { startPyodide } = await import("/static/pyodide-start.js");
  const pyodide = await startPyodide();
  const ns = pyodide.globals.get("dict")();
  ns.set("url", model);
  await pyodide.runPythonAsync(`
import js, json, qnnweb
m = await qnnweb.load_async(url, variant="scalar")
def out(x):
    return bytes(memoryview(m.run(x)[0]).cast("B"))
def check(x):
    as_bytes = bytes(x.to_py())   # the same values as Python bytes
    errors = []
    for bad in (x.subarray(1), js.Int32Array.new(x.length), js.Uint8Array.new(x.byteLength - 4)):
        try:
            m.run(bad)
        except ValueError as e:
            errors.append(str(e))
    return json.dumps({"same": out(x) == out(as_bytes), "by_name": out({m.inputs[0].name: x}) == out(as_bytes),
                       "raw": out(js.Uint8Array.new(x.buffer)) == out(as_bytes), "errors": errors})
`, { globals: ns });
  const x = new Float32Array(3 * 224 * 224).map((_, i) => ((i * 7919 + 13) % 251) / 251 - 0.5);
  return ns.get("check")(x);
}"""


def test_typed_array_inputs(browser, server_url):
    with urllib.request.urlopen(f"{server_url}/api/models/efficientnet_lite0_u8s8.onnx") as r:
        compiled_url = json.loads(r.read())["compiled_url"]
    got, _, errors = evaluate_in_fresh_page(browser, server_url, RUN, arg=compiled_url)
    got = json.loads(got)
    assert got["same"] and got["by_name"] and got["raw"], got
    name = "input"
    assert got["errors"] == [
        f"input '{name}': expected 150528 elements ([1, 3, 224, 224]), got 150527",
        f"input '{name}': expected dtype float32, got int32 (a Int32Array)",
        f"input '{name}': expected 602112 bytes (float32 [1, 3, 224, 224]), got 602108 bytes",
    ], got["errors"]
    assert not errors
