"""An onnxruntime script and an ai-edge-litert script, unchanged but for their import, run in the page's
Pyodide (no numpy there: array.array in and out) and give the bytes qnnweb gives in CPython."""

from __future__ import annotations

import base64
import urllib.request
from pathlib import Path

import numpy as np
import qnnweb

TESTS = Path(__file__).resolve().parents[1]
ONNX_SCRIPT = """
import array, base64
from pyodide.http import pyfetch

with open("/tmp/model.onnx", "wb") as f:  # the page's own setup: the model into Pyodide's file system
    f.write(await (await pyfetch(url)).bytes())
x = array.array("f", base64.b64decode(x))

# --- the user's onnxruntime script; only the import differs
import qnnweb.onnxruntime as ort

options = ort.SessionOptions()
options.intra_op_num_threads = 1
session = ort.InferenceSession("/tmp/model.onnx", sess_options=options, providers=["CPUExecutionProvider"])
inp = session.get_inputs()[0]
(scores,) = session.run(None, {inp.name: x})
# ---
print(inp.name, inp.type, ",".join(map(str, inp.shape)), session.get_providers()[0], type(scores).__name__,
      base64.b64encode(scores.tobytes()).decode())
"""

LITERT_SCRIPT = """
import array, base64
model_content = base64.b64decode(model)  # the page's own setup: the model's bytes, the input
x = array.array("b", base64.b64decode(x))

# --- the user's ai-edge-litert script; only the import differs
from qnnweb.litert import Interpreter

interpreter = Interpreter(model_content=model_content, num_threads=1)
interpreter.allocate_tensors()
inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
interpreter.set_tensor(inp["index"], x)
interpreter.invoke()
scores = interpreter.get_tensor(out["index"])
by_signature = interpreter.get_signature_runner()(args_0=x)["output_0"]
# ---
print(inp["name"], inp["dtype"], ",".join(map(str, inp["shape"])), inp["quantization"][1], type(scores).__name__,
      scores == by_signature, base64.b64encode(scores.tobytes()).decode())
"""


def test_an_onnxruntime_script_runs_unchanged_in_pyodide(page_for, server_url):
    name = "efficientnet_lite0_u8s8.onnx"
    with urllib.request.urlopen(f"{server_url}/models/{name}") as r:
        data = r.read()
    x = np.random.default_rng(7).normal(0, 1, (1, 3, 224, 224)).astype(np.float32)
    (expected,) = qnnweb.load(data, variant="scalar").run(x)
    out = page_for("simd128").run_python(ONNX_SCRIPT, {"url": f"/models/{name}",
                                                         "x": base64.b64encode(x.tobytes()).decode()})
    input_name, input_type, shape, provider, kind, scores = out.split()
    assert (input_name, input_type, shape, provider, kind) == ("input", "tensor(float)", "1,3,224,224",
                                                                "CPUExecutionProvider", "array")
    assert base64.b64decode(scores) == expected.tobytes()


def test_a_litert_script_runs_unchanged_in_pyodide(page_for):
    """On a committed TF-made fixture (litert-torch + ai-edge-quantizer: it has a signature)."""
    data = (TESTS / "data" / "tflite" / "mobilenet_v3_small.tflite").read_bytes()
    model = qnnweb.load(data, variant="scalar")
    info = model.inputs[0]
    x = np.random.default_rng(8).integers(-128, 128, info.shape, dtype=np.int8)
    (expected,) = model.run(x)
    out = page_for("simd128").run_python(LITERT_SCRIPT, {"model": base64.b64encode(data).decode(),
                                                           "x": base64.b64encode(x.tobytes()).decode()})
    input_name, dtype, shape, zero_point, kind, same, scores = out.split()
    assert (dtype, shape, zero_point, kind, same) == ("int8", ",".join(map(str, info.shape)), str(info.zero_point),
                                                      "array", "True")
    assert input_name == info.name
    assert base64.b64decode(scores) == expected.tobytes()
