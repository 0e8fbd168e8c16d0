"""Batch > 1: an ONNX model with a symbolic batch loads with batch 1 by default and with any batch
through ``input_shapes``; a TFLite model's batch changes the same way. Every op then runs the whole
batch: each sample's output equals the batch-1 output of that sample, and the reference runtime's."""

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter
from onnx import helper
from qnnweb_dev.onnx_quantized import float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb


def symbolic_batch_model():
    """Conv, depthwise Conv, Add (residual), MaxPool, AveragePool, GlobalAveragePool, Flatten, Gemm."""
    rng = np.random.default_rng(11)
    nodes = [helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c1"], ["r1"]),
             helper.make_node("Conv", ["r1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=6),
             helper.make_node("Add", ["c2", "r1"], ["a"]),
             helper.make_node("MaxPool", ["a"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("AveragePool", ["m"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1]),
             helper.make_node("GlobalAveragePool", ["ap"], ["g"]),
             helper.make_node("Flatten", ["g"], ["f"]),
             helper.make_node("Gemm", ["f", "fc", "fcb"], ["y"], transB=1)]
    init = {"w1": rng.normal(0, 0.4, (6, 3, 3, 3)), "b1": rng.normal(0, 0.1, 6), "w2": rng.normal(0, 0.4, (6, 1, 3, 3)),
            "fc": rng.normal(0, 0.5, (5, 6)), "fcb": rng.normal(0, 0.1, 5)}
    model = float_model(nodes, [("x", ["N", 3, 8, 8])], [("y", ["N", 5])],
                        {k: v.astype(np.float32) for k, v in init.items()})
    feeds = [{"x": rng.uniform(-1, 1, (1, 3, 8, 8)).astype(np.float32)} for _ in range(8)]
    return quantized(model, feeds, per_channel=True)


def test_symbolic_batch_is_one_by_default():
    model = qnnweb.load(symbolic_batch_model())
    assert model.inputs[0].shape == (1, 3, 8, 8) and model.outputs[0].shape == (1, 5)


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_onnx_batch_of_four(variant):
    data = symbolic_batch_model()
    x = np.random.default_rng(2).uniform(-1, 1, (4, 3, 8, 8)).astype(np.float32)
    model = qnnweb.load(data, variant=variant, input_shapes={"x": [4, 3, 8, 8]})
    assert model.outputs[0].shape == (4, 5)
    (ours,) = model.run(x)
    single = qnnweb.load(data, variant=variant)
    for i in range(4):
        np.testing.assert_array_equal(ours[i:i + 1], single.run(x[i:i + 1])[0])
    (theirs,) = ReferenceSession(data).run({"x": x})
    graph = model._graph
    quantum = graph.tensors[next(op for op in graph.ops if graph.outputs[0] in op.outputs).inputs[0]].scale[0]
    assert np.abs(ours - theirs).max() <= quantum * 1.0001


def test_input_shapes_are_checked():
    data = symbolic_batch_model()
    with pytest.raises(ValueError, match="not inputs of the model"):
        qnnweb.load(data, input_shapes={"image": [2, 3, 8, 8]})
    with pytest.raises(ValueError, match="fixed at 8"):
        qnnweb.load(data, input_shapes={"x": [2, 3, 8, 9]})
    with pytest.raises(ValueError, match="rank"):
        qnnweb.load(data, input_shapes={"x": [2, 3, 8]})


@pytest.mark.parametrize("name", ["visual_wake_words", "image_classification"])
def test_tflite_batch_of_three(name, model_path):
    path = model_path(name)
    info = qnnweb.describe(path.read_bytes())["inputs"][0]
    shape = [3] + info["shape"][1:]
    rng = np.random.default_rng(5)
    x = (rng.integers(0, 256, shape).astype(np.float32) if info["dtype"] == "float32"
         else rng.integers(-128, 128, shape).astype(np.int8))
    interpreter = Interpreter(model_path=str(path), num_threads=1)
    interpreter.resize_tensor_input(interpreter.get_input_details()[0]["index"], shape)
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    theirs = interpreter.get_tensor(interpreter.get_output_details()[0]["index"])
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(path, variant=variant, input_shapes={info["name"]: shape})
        (ours,) = model.run(x)
        assert ours.shape == theirs.shape
        single = qnnweb.load(path, variant=variant)
        for i in range(3):
            np.testing.assert_array_equal(ours[i:i + 1], single.run(x[i:i + 1])[0])
        quantum = 1 / 256 if ours.dtype == np.float32 else 1
        assert np.abs(ours.astype(np.float64) - theirs).max() <= quantum + 1e-6
