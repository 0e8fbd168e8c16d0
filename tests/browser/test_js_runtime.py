"""web/qnnweb.js, the JavaScript runtime, in headless Chromium: it loads the server's compiled
models (.qnn) in every variant and gives the very bytes CPython (wasmtime) and the page's Pyodide
give for the same file; it refuses damaged files and files of another ABI with a ModelError."""

from __future__ import annotations

import base64
import struct
import urllib.request
import zlib

import numpy as np
import pytest
import qnnweb
from browser_pages import DATA_DIR
from qnnweb.compiled import CompiledModel
from qnnweb.records import ABI_VERSION

MODEL = "efficientnet_lite0_u8s8.onnx"
RUN_JS = """async ([source, variant, input]) => {
    const qnnweb = await import("/static/qnnweb.js");
    const model = await qnnweb.load(source, { variant });
    const bytes = Uint8Array.from(atob(input), (c) => c.charCodeAt(0));
    const [out] = model.run(new Float32Array(bytes.buffer));
    const raw = new Uint8Array(out.buffer);
    let s = "";
    for (const b of raw) s += String.fromCharCode(b);
    return { output: btoa(s), info: model.info() };
}"""


@pytest.fixture(scope="module")
def compiled_bytes(server_url):
    with urllib.request.urlopen(f"{server_url}/models/{MODEL}.qnn") as r:
        return r.read()


def model_input(model):
    return np.random.default_rng(3).uniform(-2, 2, model.inputs[0].shape).astype(np.float32)


@pytest.mark.parametrize("variant", ["scalar", "simd128", "relaxed"])
def test_same_bytes_in_javascript_cpython_and_pyodide(blank_page, page_for, compiled_bytes, variant):
    cpython = qnnweb.load(compiled_bytes, variant)
    x = model_input(cpython)
    expected = cpython.run(x)[0].tobytes()
    assert expected == qnnweb.load(_model_file(), variant).run(x)[0].tobytes()   # the server compiled it right
    encoded = base64.b64encode(x.tobytes()).decode()
    js = blank_page.evaluate(RUN_JS, [f"/models/{MODEL}.qnn", variant, encoded])
    assert base64.b64decode(js["output"]) == expected
    assert js["info"]["variant"] == variant and js["info"]["host"].startswith("browser")
    assert js["info"]["kernels"] == cpython.kernels or variant == "relaxed"   # the relaxed probe is the engine's
    if js["info"]["kernels"] == cpython.kernels:  # the same kernels pack the same bytes (2x16c4 and 4x8c2s4 do not)
        assert js["info"]["weight_bytes"] == cpython.weight_bytes

    # the page's Pyodide, on the same compiled file from the same URL
    out = page_for(variant).run_python(
        f"""
import base64, qnnweb
model = await qnnweb.load_async("/models/{MODEL}.qnn", variant="{variant}")
(y,) = model.run(base64.b64decode(x))
print(base64.b64encode(bytes(y)).decode())
""", {"x": encoded})
    assert base64.b64decode(out.strip()) == expected


def _model_file():
    return DATA_DIR / "models" / MODEL


def test_default_variant_is_the_best_the_engine_validates(blank_page):
    """Same rule as Python: relaxed, then simd128, then scalar, by what WebAssembly.validate says
    of the real modules (qnnweb.js decides from few-byte probes, and downloads only the one)."""
    got = blank_page.evaluate("""async () => {
        const qnnweb = await import("/static/qnnweb.js");
        const real = [];
        for (const v of qnnweb.VARIANTS) {
            const bytes = await (await fetch(`/kernels/qnnweb-${v}.wasm`)).arrayBuffer();
            if (WebAssembly.validate(bytes)) real.push(v);
        }
        return { probed: qnnweb.supportedVariants(), real };
    }""")
    assert got["probed"] == got["real"] and got["real"][0] == "relaxed"


def _with_header(data, abi=None, flip=None):
    data = bytearray(data)
    if flip is not None:
        data[flip] ^= 0x40
    if abi is not None:
        struct.pack_into("<I", data, 8, abi)
    struct.pack_into("<I", data, 12, zlib.crc32(bytes(data[16:])))
    return bytes(data)


@pytest.mark.parametrize("case,expected", [
    ("old-abi", "made for kernel ABI version 0"),
    ("checksum", "checksum does not match"),
    ("truncated", "truncated"),
    ("not-qnn", "not a compiled qnnweb model"),
])
def test_bad_files_are_model_errors(blank_page, compiled_bytes, case, expected):
    data = {"old-abi": _with_header(compiled_bytes, abi=0),
            "checksum": compiled_bytes[:-3] + b"\xff\xff\xff",
            "truncated": compiled_bytes[:1000],
            "not-qnn": b"TFL3" * 100}[case]
    got = blank_page.evaluate("""async (input) => {
        const qnnweb = await import("/static/qnnweb.js");
        const bytes = Uint8Array.from(atob(input), (c) => c.charCodeAt(0));
        try {
            await qnnweb.load(bytes);
            return { name: "none" };
        } catch (err) {
            return { name: err.name, message: err.message, isModelError: err instanceof qnnweb.ModelError };
        }
    }""", base64.b64encode(data).decode())
    assert got["name"] == "ModelError" and got["isModelError"], got
    assert expected in got["message"], got
    with pytest.raises(qnnweb.ModelError, match=expected):   # the Python reader says the same
        CompiledModel.from_bytes(data)


def test_wrong_inputs_are_clear_errors(blank_page):
    got = blank_page.evaluate(f"""async () => {{
        const qnnweb = await import("/static/qnnweb.js");
        const model = await qnnweb.load("/models/{MODEL}.qnn");
        const tries = {{
            shape: () => model.run(new Float32Array(10)),
            dtype: () => model.run(new Int32Array(model.inputs[0].size)),
            name: () => model.run({{ nope: new Float32Array(model.inputs[0].size) }}),
            count: () => model.run([]),
        }};
        const out = {{}};
        for (const [k, f] of Object.entries(tries)) {{
            try {{ f(); out[k] = "no error"; }} catch (err) {{ out[k] = `${{err.name}}: ${{err.message}}`; }}
        }}
        out.ok = model.run({{ [model.inputs[0].name]: new Float32Array(model.inputs[0].size) }})[0].length;
        return out;
    }}""")
    assert got["shape"].startswith("RangeError") and "expected 150528 float32 values" in got["shape"], got
    assert got["dtype"].startswith("TypeError") and "Float32Array" in got["dtype"], got
    assert "unknown input(s) nope" in got["name"], got
    assert "the model has 1 input(s), got 0" in got["count"], got
    assert got["ok"] == 1000


def test_run_fills_the_output_arrays_it_is_given(blank_page):
    """run(inputs, outputs) writes into the caller's arrays (listed or by name), returns them, gives the
    bytes a plain run() gives, and refuses arrays of another type, size or name."""
    got = blank_page.evaluate(f"""async () => {{
        const qnnweb = await import("/static/qnnweb.js");
        const model = await qnnweb.load("/models/{MODEL}.qnn");
        const x = new Float32Array(model.inputs[0].size).map((_, i) => Math.sin(i));
        const [fresh] = model.run(x);
        const mine = new Float32Array(1000);
        const [filled] = model.run(x, [mine]);
        const byName = new Float32Array(1000);
        model.run(x, {{ [model.outputs[0].name]: byName }});
        const tries = {{
            size: () => model.run(x, [new Float32Array(999)]),
            dtype: () => model.run(x, [new Int8Array(1000)]),
            name: () => model.run(x, {{ nope: new Float32Array(1000) }}),
        }};
        const out = {{ same: filled === mine, equal: fresh.every((v, i) => Object.is(v, mine[i]) && Object.is(v, byName[i])) }};
        for (const [k, f] of Object.entries(tries)) {{
            try {{ f(); out[k] = "no error"; }} catch (err) {{ out[k] = `${{err.name}}: ${{err.message}}`; }}
        }}
        return out;
    }}""")
    assert got["same"] and got["equal"], got
    assert got["size"].startswith("RangeError") and "output" in got["size"], got
    assert got["dtype"].startswith("TypeError") and "Float32Array" in got["dtype"], got
    assert "unknown output(s) nope" in got["name"], got


def test_only_the_javascript_runtime_instantiates_kernels():
    """web/qnnweb.js is the one place kernel modules are instantiated in a browser: the pages, the
    workers and the Python package's Pyodide host all go through it (threads will be added there)."""
    from pathlib import Path

    repo = Path(__file__).resolve().parents[2]
    patterns = ("WebAssembly.Instance", "WebAssembly.instantiate", "instantiateStreaming", "Instance.new")
    offenders = [str(p.relative_to(repo)) for p in [*(repo / "web").rglob("*.js"), *(repo / "web").rglob("*.html"),
                                                    *(repo / "py_frontend").rglob("*.py")]
                 if p.name != "qnnweb.js" and any(pat in p.read_text() for pat in patterns)]
    assert offenders == [], offenders
    packaged = Path(qnnweb.__file__).parent / "js" / "qnnweb.js"
    assert packaged.read_text() == (repo / "web" / "qnnweb.js").read_text(), "stale copy: run ./build.sh build wheel"


def test_pyodide_loads_synchronously_through_the_runtime(page_for, compiled_bytes):
    """In Pyodide the host gets its kernel instances from qnnweb.js (the package's copy), and after
    qnnweb.init() (the page's Python worker calls it) a synchronous qnnweb.load works."""
    out = page_for("simd128").run_python(f"""
import js, qnnweb
from qnnweb.host import pyodide_host
data = (await (await js.fetch("/models/{MODEL}.qnn")).arrayBuffer()).to_bytes()
model = qnnweb.load(data, "simd128")
(y,) = model.run(bytes(model.inputs[0].nbytes))
print("runtime ABI", pyodide_host._runtime.ABI_VERSION, "variant", model.variant, "outputs", len(y))
""")
    assert f"runtime ABI {ABI_VERSION} variant simd128 outputs 1000" in out, out


@pytest.mark.parametrize("name", ["visual_wake_words.tflite", "image_classification.tflite"])
def test_tflite_models_with_float_and_int8_inputs(blank_page, server_url, name):
    """The TFLite demo models (float32 input; int8 input and output) through qnnweb.js, as CPython."""
    with urllib.request.urlopen(f"{server_url}/models/{name}.qnn") as r:
        data = r.read()
    cpython = qnnweb.load(data, "relaxed")
    info = cpython.inputs[0]
    rng = np.random.default_rng(5)
    x = (rng.uniform(0, 255, info.shape).astype(np.float32) if info.dtype == "float32"
         else rng.integers(-128, 128, info.shape).astype(np.int8))
    expected = cpython.run(x)[0]
    got = blank_page.evaluate("""async ([url, input, dtype]) => {
        const qnnweb = await import("/static/qnnweb.js");
        const model = await qnnweb.load(url, { variant: "relaxed" });
        const bytes = Uint8Array.from(atob(input), (c) => c.charCodeAt(0));
        const x = dtype === "float32" ? new Float32Array(bytes.buffer) : new Int8Array(bytes.buffer);
        const [out] = model.run(x);
        return { out: Array.from(out), dtype: model.outputs[0].dtype, type: out.constructor.name };
    }""", [f"/models/{name}.qnn", base64.b64encode(x.tobytes()).decode(), info.dtype])
    assert got["dtype"] == cpython.outputs[0].dtype
    assert got["type"] == {"float32": "Float32Array", "int8": "Int8Array"}[got["dtype"]]
    assert np.array_equal(np.array(got["out"], dtype=expected.dtype), expected.ravel())
