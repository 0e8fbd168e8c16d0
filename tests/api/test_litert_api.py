"""qnnweb.litert: the same ai-edge-litert scripts, run against the real ``Interpreter`` and against
qnnweb's (parametrized over the class), give the same answers on the committed TF-made fixtures
(litert-torch + ai-edge-quantizer): outputs within one quantum, identical tensor details, signatures
and errors of the same kind."""

import array
from pathlib import Path

import numpy as np
import pytest
import qnnweb.litert
from ai_edge_litert.interpreter import Interpreter as LiteRTInterpreter

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "tflite"
MODELS = ["mobilenet_v2", "efficientnet_lite0", "mobilenet_v3_small"]
INTERPRETERS = [pytest.param(LiteRTInterpreter, id="ai_edge_litert"), pytest.param(qnnweb.litert.Interpreter,
                                                                                     id="qnnweb.litert")]


def comparable(details):
    """A details dict with its arrays as lists (numpy's == on arrays is not a bool)."""
    out = {}
    for key, value in details.items():
        if isinstance(value, dict):
            value = comparable(value)
        elif isinstance(value, np.ndarray):
            value = value.tolist()
        out[key] = value
    return out


def user_script(Interpreter, path, x):
    """What an ai-edge-litert user writes: details, set_tensor / invoke / get_tensor, the signature
    runner, and a batch of two by resize_tensor_input."""
    interpreter = Interpreter(model_path=str(path), num_threads=1)
    interpreter.allocate_tensors()
    inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
    interpreter.set_tensor(inp["index"], x[:1])
    interpreter.invoke()
    y = interpreter.get_tensor(out["index"])
    signatures = interpreter.get_signature_list()
    runner = interpreter.get_signature_runner()
    (name,) = signatures["serving_default"]["inputs"]
    by_signature = runner(**{name: x[:1]})
    runner_details = comparable(runner.get_input_details()[name])
    batched = Interpreter(model_content=path.read_bytes(), num_threads=1)
    batched.resize_tensor_input(inp["index"], [2, *x.shape[1:]])
    batched.allocate_tensors()
    batched.set_tensor(inp["index"], x)
    batched.invoke()
    return {"inputs": [comparable(d) for d in interpreter.get_input_details()],
            "outputs": [comparable(d) for d in interpreter.get_output_details()],
            "signatures": signatures, "runner_input": runner_details,
            "y": y, "by_signature": by_signature, "batch": batched.get_tensor(out["index"]),
            "batch_shape": batched.get_input_details()[0]["shape"].tolist()}


@pytest.fixture(scope="module", params=MODELS)
def answers(request):
    name = request.param
    path = FIXTURES / f"{name}.tflite"
    inputs = np.load(FIXTURES / f"{name}.npz")["input_0"]  # [samples, 1, H, W, C] int8
    x = np.concatenate([inputs[0], inputs[-1]])
    return {cls: user_script(cls, path, x) for cls in (LiteRTInterpreter, qnnweb.litert.Interpreter)}


def within_a_quantum(ours, theirs):
    steps = np.abs(ours.astype(np.int32) - theirs.astype(np.int32))
    assert (steps <= 1).mean() >= 0.999, f"{(steps > 1).sum()} of {steps.size} outputs more than a quantum off"


def test_the_same_script_gives_the_same_answers(answers):
    theirs, ours = answers[LiteRTInterpreter], answers[qnnweb.litert.Interpreter]
    for key in ("inputs", "outputs", "signatures", "runner_input", "batch_shape"):
        assert ours[key] == theirs[key], key
    assert ours["y"].dtype == theirs["y"].dtype and ours["y"].shape == theirs["y"].shape
    within_a_quantum(ours["y"], theirs["y"])
    assert list(ours["by_signature"]) == list(theirs["by_signature"])
    for name, value in ours["by_signature"].items():
        np.testing.assert_array_equal(value, ours["y"])
        within_a_quantum(value, theirs["by_signature"][name])
    assert ours["batch"].shape == theirs["batch"].shape == (2, *ours["y"].shape[1:])
    np.testing.assert_array_equal(ours["batch"][:1], ours["y"])
    within_a_quantum(ours["batch"], theirs["batch"])


@pytest.mark.parametrize("Interpreter", INTERPRETERS)
def test_set_tensor_errors_say_expected_and_got(Interpreter):
    interpreter = Interpreter(model_path=str(FIXTURES / "mobilenet_v3_small.tflite"))
    interpreter.allocate_tensors()
    index = interpreter.get_input_details()[0]["index"]
    with pytest.raises(ValueError, match="Cannot set tensor: Got value of type FLOAT32 but expected type INT8 "
                                         "for input 0, name: serving_default_args_0"):
        interpreter.set_tensor(index, np.zeros((1, 224, 224, 3), np.float32))
    with pytest.raises(ValueError, match="Cannot set tensor: Dimension mismatch. Got 5 but expected 4 for input 0"):
        interpreter.set_tensor(index, np.zeros((1, 1, 224, 224, 3), np.int8))
    with pytest.raises(ValueError, match="Cannot set tensor: Dimension mismatch. Got 200 but expected 224 for "
                                         "dimension 1 of input 0"):
        interpreter.set_tensor(index, np.zeros((1, 200, 224, 3), np.int8))
    with pytest.raises(ValueError):
        Interpreter()
    with pytest.raises(ValueError, match="num_threads should >= 1"):
        Interpreter(model_path=str(FIXTURES / "mobilenet_v3_small.tflite"), num_threads=-2)


def test_the_input_view_and_preserved_intermediates():
    """``interpreter.tensor(i)()[...] = x`` writes the input invoke reads; with
    experimental_preserve_all_tensors an intermediate activation is readable by index."""
    path = FIXTURES / "mobilenet_v3_small.tflite"
    x = np.load(FIXTURES / "mobilenet_v3_small.npz")["input_0"][0]
    interpreter = qnnweb.litert.Interpreter(model_path=str(path), experimental_preserve_all_tensors=True)
    interpreter.allocate_tensors()
    index = interpreter.get_input_details()[0]["index"]
    interpreter.tensor(index)()[...] = x
    interpreter.invoke()
    out = interpreter.get_output_details()[0]["index"]
    reference = LiteRTInterpreter(model_path=str(path), experimental_preserve_all_tensors=True)
    reference.allocate_tensors()
    reference.set_tensor(index, x)
    reference.invoke()
    within_a_quantum(interpreter.get_tensor(out), reference.get_tensor(out))
    stored = interpreter._model._compiled.intermediates
    activation = next(t.index for t in interpreter._graph.tensors if t.name in stored and t.index not in (index, out))
    ours, theirs = interpreter.get_tensor(activation), reference.get_tensor(activation)
    assert ours.shape == theirs.shape and ours.dtype == theirs.dtype
    within_a_quantum(ours, theirs)
    plain = qnnweb.litert.Interpreter(model_path=str(path))
    plain.allocate_tensors()
    plain.set_tensor(index, x)
    plain.invoke()
    with pytest.raises(ValueError, match="experimental_preserve_all_tensors=True"):
        plain.get_tensor(activation)


def test_buffers_without_numpy_and_clear_misuse_errors():
    path = FIXTURES / "mobilenet_v3_small.tflite"
    x = np.load(FIXTURES / "mobilenet_v3_small.npz")["input_0"][0]
    interpreter = qnnweb.litert.Interpreter(model_path=str(path))
    index = interpreter.get_input_details()[0]["index"]
    with pytest.raises(RuntimeError, match="allocate_tensors"):
        interpreter.invoke()
    interpreter.allocate_tensors()
    interpreter.set_tensor(index, array.array("b", x.tobytes()))
    interpreter.invoke()
    out = interpreter.get_output_details()[0]["index"]
    expected = qnnweb.load(path.read_bytes()).run(x)[0]
    np.testing.assert_array_equal(interpreter.get_tensor(out), expected)
    with pytest.raises(ValueError, match="holds 150528"):
        interpreter.set_tensor(index, bytes(10))
    with pytest.raises(ValueError, match="is not an input of the model"):
        interpreter.set_tensor(out, x)
    with pytest.raises(ValueError, match="runs TFLite models"):
        qnnweb.litert.Interpreter(model_content=qnnweb.compile(path))
