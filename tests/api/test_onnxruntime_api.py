"""qnnweb.onnxruntime: the same onnxruntime scripts, run against the real onnxruntime and against
qnnweb's façade (parametrized over the module), give the same answers: outputs within one quantum,
identical input/output descriptions, model metadata and providers, the same kinds of errors."""

import array

import numpy as np
import onnx
import onnxruntime
import pytest
import qnnweb
import qnnweb.onnxruntime
from onnx import helper
from qnnweb_dev.onnx_quantized import float_model, output_quantum, quantized

MODULES = [pytest.param(onnxruntime, id="onnxruntime"), pytest.param(qnnweb.onnxruntime, id="qnnweb.onnxruntime")]


def dynamic_batch_model():
    """Conv, Relu, GlobalAveragePool, Flatten, Gemm with a symbolic batch 'batch', int8 QDQ (s8s8), with
    a model version, a doc string and custom metadata."""
    rng = np.random.default_rng(5)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fcb"], ["scores"], transB=1)]
    init = {"w": rng.normal(0, 0.4, (8, 3, 3, 3)), "b": rng.normal(0, 0.1, 8), "fc": rng.normal(0, 0.5, (4, 8)),
            "fcb": rng.normal(0, 0.1, 4)}
    model = float_model(nodes, [("x", ["batch", 3, 6, 6])], [("scores", ["batch", 4])],
                        {k: v.astype(np.float32) for k, v in init.items()})
    feeds = [{"x": rng.uniform(-1, 1, (1, 3, 6, 6)).astype(np.float32)} for _ in range(8)]
    data = quantized(model, feeds, activation="QInt8", per_channel=True)
    model = onnx.load_from_string(data)
    model.model_version = 3
    model.doc_string = "a test model"
    helper.set_model_props(model, {"author": "qnnweb tests", "labels": "a,b,c,d"})
    return model.SerializeToString()


def user_script(ort, model, x):
    """What an onnxruntime user writes: options, providers, descriptions, run(None, ...) and by name."""
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.add_session_config_entry("session.qdqisint8allowed", "1")
    session = ort.InferenceSession(model, sess_options=options, providers=["CPUExecutionProvider"])
    inputs, outputs = session.get_inputs(), session.get_outputs()
    meta = session.get_modelmeta()
    (y,) = session.run(None, {inputs[0].name: x})
    (y_named,) = session.run([outputs[0].name], {inputs[0].name: x}, ort.RunOptions())
    return {
        "inputs": [(a.name, a.shape, a.type) for a in inputs],
        "outputs": [(a.name, a.shape, a.type) for a in outputs],
        "meta": (meta.producer_name, meta.graph_name, meta.domain, meta.description, meta.version,
                 meta.custom_metadata_map),
        "providers": session.get_providers(),
        "available": "CPUExecutionProvider" in ort.get_available_providers(),
        "option": session.get_session_options().get_session_config_entry("session.qdqisint8allowed"),
        "y": y, "same": np.array_equal(y, y_named),
    }


@pytest.fixture(scope="module")
def answers(data_dir):
    """Both modules' answers to user_script on the demo's s8s8 EfficientNet-Lite0 (a real-tool model
    from onnxruntime's quantize_static) and on a symbolic-batch model with batch 1 and 4."""
    rng = np.random.default_rng(0)
    efficientnet = data_dir / "models" / "efficientnet_lite0_s8s8.onnx"
    cases = {"efficientnet": (str(efficientnet), rng.normal(0, 1, (1, 3, 224, 224)).astype(np.float32))}
    dynamic = dynamic_batch_model()
    for batch in (1, 4):
        cases[f"batch {batch}"] = (dynamic, rng.uniform(-1, 1, (batch, 3, 6, 6)).astype(np.float32))
    return {(module.__name__, case): user_script(module, model, x)
            for module in (onnxruntime, qnnweb.onnxruntime) for case, (model, x) in cases.items()}, {
        "efficientnet": efficientnet.read_bytes(), "batch 1": dynamic, "batch 4": dynamic}


@pytest.mark.parametrize("case", ["efficientnet", "batch 1", "batch 4"])
def test_the_same_script_gives_the_same_answers(answers, case):
    results, models = answers
    theirs, ours = results[("onnxruntime", case)], results[("qnnweb.onnxruntime", case)]
    for key in ("inputs", "outputs", "meta", "providers", "available", "option", "same"):
        assert ours[key] == theirs[key], key
    assert isinstance(ours["y"], np.ndarray) and ours["y"].dtype == theirs["y"].dtype
    assert ours["y"].shape == theirs["y"].shape
    quantum = output_quantum(qnnweb.load(models[case], variant="scalar")._graph)
    steps = np.abs(np.round((ours["y"] - theirs["y"]) / quantum))
    assert (steps <= 1).mean() >= 0.999, f"{(steps > 1).sum()} of {steps.size} outputs more than a quantum off"


def test_the_symbolic_dimension_keeps_its_name(answers):
    results, _ = answers
    assert results[("qnnweb.onnxruntime", "batch 4")]["inputs"] == [("x", ["batch", 3, 6, 6], "tensor(float)")]
    assert results[("qnnweb.onnxruntime", "batch 4")]["outputs"] == [("scores", ["batch", 4], "tensor(float)")]
    assert results[("qnnweb.onnxruntime", "batch 4")]["meta"][4:] == (3, {"author": "qnnweb tests",
                                                                          "labels": "a,b,c,d"})


@pytest.mark.parametrize("ort", MODULES)
def test_feed_errors_say_what_the_model_takes(ort):
    session = ort.InferenceSession(dynamic_batch_model())
    x = np.zeros((1, 3, 6, 6), np.float32)
    # a missing input: onnxruntime's own words (a ValueError in both)
    with pytest.raises(ValueError, match=r"Required inputs \(\['x'\]\) are missing from input feed \(\['image'\]\)"):
        session.run(None, {"image": x})
    with pytest.raises(Exception, match=r"Unexpected input data type. Actual: \(tensor\(double\)\) , "
                                        r"expected: \(tensor\(float\)\)"):
        session.run(None, {"x": x.astype(np.float64)})
    with pytest.raises(Exception, match=r"Got invalid dimensions for input: x for the following indices\s+"
                                        r"index: 2 Got: 5 Expected: 6"):
        session.run(None, {"x": np.zeros((1, 3, 5, 6), np.float32)})
    with pytest.raises(Exception, match="Invalid rank for input: x Got: 3 Expected: 4"):
        session.run(None, {"x": np.zeros((3, 6, 6), np.float32)})
    with pytest.raises(Exception, match="Invalid output name:nope"):
        session.run(["nope"], {"x": x})
    with pytest.raises(Exception, match="Invalid input name: y"):
        session.run(None, {"x": x, "y": x})
    # nested lists become arrays of the input's type
    assert session.run(None, {"x": x.tolist()})[0].shape == (1, 4)


def test_feed_errors_are_value_errors_naming_the_inputs():
    session = qnnweb.onnxruntime.InferenceSession(dynamic_batch_model())
    with pytest.raises(ValueError, match=r"the model's inputs: x \(tensor\(float\) \['batch', 3, 6, 6\]\)"):
        session.run(None, {"image": np.zeros((1, 3, 6, 6), np.float32)})
    with pytest.raises(ValueError, match="Load model from /no/such/model.onnx failed"):
        qnnweb.onnxruntime.InferenceSession("/no/such/model.onnx")
    with pytest.raises(qnnweb.ModelError):
        qnnweb.onnxruntime.InferenceSession(b"not a model")


def test_buffers_without_numpy_shapes():
    """Pyodide without numpy: a flat array.array of the input's dtype and size; the same numbers."""
    data = dynamic_batch_model()
    x = np.random.default_rng(3).uniform(-1, 1, (1, 3, 6, 6)).astype(np.float32)
    session = qnnweb.onnxruntime.InferenceSession(data)
    (expected,) = session.run(None, {"x": x})
    (flat,) = session.run(None, {"x": array.array("f", x.tobytes())})
    np.testing.assert_array_equal(flat, expected)


def test_thread_count_from_the_session_options():
    options = qnnweb.onnxruntime.SessionOptions()
    options.intra_op_num_threads = 2
    session = qnnweb.onnxruntime.InferenceSession(dynamic_batch_model(), sess_options=options)
    assert session._model.info()["threads"] == 2
    x = np.random.default_rng(4).uniform(-1, 1, (4, 3, 6, 6)).astype(np.float32)
    single = qnnweb.onnxruntime.InferenceSession(dynamic_batch_model())
    np.testing.assert_array_equal(session.run(None, {"x": x})[0], single.run(None, {"x": x})[0])


def test_an_nchw_output_keeps_the_models_name():
    """A 4-D output (qnnweb computes it NHWC and moves it back to ONNX's NCHW at the end) is named as in
    the model, in qnnweb's description and through the onnxruntime façade (it was 'y/transposed')."""
    rng = np.random.default_rng(3)
    w = rng.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    model = float_model([helper.make_node("Conv", ["x", "w"], ["y"], pads=[1, 1, 1, 1])],
                        [("x", [1, 3, 6, 6])], [("y", [1, 4, 6, 6])], {"w": w})
    feeds = [{"x": rng.uniform(-1, 1, (1, 3, 6, 6)).astype(np.float32)} for _ in range(4)]
    data = quantized(model, feeds)
    loaded = qnnweb.load(data)
    assert [(t.name, tuple(t.shape)) for t in loaded.outputs] == [("y", (1, 4, 6, 6))]
    session = qnnweb.onnxruntime.InferenceSession(data)
    theirs = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    assert [o.name for o in session.get_outputs()] == [o.name for o in theirs.get_outputs()] == ["y"]
    (ours,) = session.run(["y"], feeds[0])
    assert ours.shape == (1, 4, 6, 6)
