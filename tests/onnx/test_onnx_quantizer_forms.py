"""Forms onnxruntime's quantizer writes that the demo models do not show, each against onnxruntime
(tools/qnnweb_dev/reference/onnxruntime_session.py): constant operands in uint8 with any zero point, constants
broadcast onto feature maps (an NHWC tensor inside qnnweb), error reports of whole models."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb

RNG = np.random.default_rng(3)


def feeds(shape, count=8, seed=0):
    rng = np.random.default_rng(seed)
    return [{"x": rng.uniform(-1, 1, shape).astype(np.float32)} for _ in range(count)]


def assert_matches(data, x, variant):
    """Within one quantum (the scale of the tensor the float output is dequantized from) everywhere."""
    model = qnnweb.load(data, variant=variant)
    graph = model._graph
    tensor = graph.outputs[0]
    while not graph.tensors[tensor].scale:  # back through the layout ops to the DEQUANTIZE's int8 input
        tensor = next(op for op in graph.ops if tensor in op.outputs).inputs[0]
    quantum = graph.tensors[tensor].scale[0]
    (ours,) = model.run(x)
    (theirs,) = ReferenceSession(data).run({"x": x})
    steps = np.abs(np.round((ours - theirs) / quantum))
    assert steps.max() <= 1, f"{variant}: up to {steps.max()} quanta off onnxruntime ({(steps > 1).sum()} elements)"


@pytest.mark.parametrize("bias_sign", [-1, 1], ids=["zero-point-above-128", "zero-point-below-128"])
@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_matmul_plus_uint8_constant_bias(bias_sign, variant):
    """Conv -> Relu -> GlobalAveragePool -> Flatten -> MatMul -> Add(constant): the Add's constant is a
    uint8 tensor whose zero point is above 128 (mostly negative values) or below it."""
    w = RNG.normal(0, 0.5, (6, 3, 3, 3)).astype(np.float32)
    m = RNG.normal(0, 0.5, (6, 5)).astype(np.float32)
    bias = (bias_sign * np.abs(RNG.normal(0.5, 0.3, 5)) - bias_sign * 0.1).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]), helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("MatMul", ["f", "m"], ["mm"]), helper.make_node("Add", ["mm", "bias"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 8, 8])], [("y", [1, 5])], {"w": w, "m": m, "bias": bias})
    data = quantized(model, feeds([1, 3, 8, 8]))
    assert_matches(data, feeds([1, 3, 8, 8], 1, seed=9)[0]["x"], variant)


@pytest.mark.parametrize("shape", [[1], [4, 1, 1], [1, 4, 1, 1], [6], [5, 1], [1, 4, 5, 6]],
                         ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("op", ["Add", "Mul"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_constant_broadcast_onto_feature_map(shape, op, activation):
    """Conv (its output lives NHWC inside qnnweb) then Add/Mul of a constant of any broadcasting shape."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    constant = RNG.uniform(-1.5, 1.5, shape).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node(op, ["c", "k"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", [1, 4, 5, 6])], {"w": w, "k": constant})
    data = quantized(model, feeds([1, 3, 5, 6]), activation=activation)
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 3, 5, 6], 1, seed=5)[0]["x"], variant)


@pytest.mark.parametrize("quant_format", ["QDQ", "QOperator"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_hard_swish_as_torch_exports_it(quant_format, activation):
    """torch's exporter writes hard-swish as x * HardSigmoid(x) (and squeeze-excite's gate as HardSigmoid)."""
    w = RNG.normal(0, 0.6, (4, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("HardSigmoid", ["c"], ["h"], alpha=1 / 6, beta=0.5),
             helper.make_node("Mul", ["c", "h"], ["s"]),
             helper.make_node("GlobalAveragePool", ["s"], ["p"]),
             helper.make_node("HardSigmoid", ["p"], ["g"], alpha=1 / 6, beta=0.5),
             helper.make_node("Mul", ["s", "g"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [("y", [1, 4, 6, 6])], {"w": w})
    data = quantized(model, feeds([1, 3, 6, 6]), quant_format=quant_format, activation=activation)
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 3, 6, 6], 1, seed=4)[0]["x"], variant)


@pytest.mark.parametrize("quant_format", ["QDQ", "QOperator"])
def test_shape_arithmetic_feeding_reshape_is_folded(quant_format):
    """torch's ``x.view(x.size(0), -1)``: Shape -> Gather -> Unsqueeze -> Concat(-1) -> Reshape, plus a
    Cast and a ConstantOfShape-made shape, all static: folded at import, so the model loads and matches."""
    from onnx import TensorProto

    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    fc = RNG.normal(0, 0.3, (64, 5)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("Shape", ["r"], ["shape"]),
             helper.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
             helper.make_node("Unsqueeze", ["batch", "axes"], ["batch1"]),
             helper.make_node("ConstantOfShape", ["one"], ["minus"],
                              value=helper.make_tensor("v", TensorProto.INT64, [1], [-1])),
             helper.make_node("Concat", ["batch1", "minus"], ["target64"], axis=0),
             helper.make_node("Cast", ["target64"], ["target32"], to=TensorProto.INT32),
             helper.make_node("Cast", ["target32"], ["target"], to=TensorProto.INT64),
             helper.make_node("Reshape", ["r", "target"], ["flat"]),
             helper.make_node("MatMul", ["flat", "fc"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 4, 4])], [("y", [1, 5])],
                        {"w": w, "fc": fc, "zero": np.array(0, np.int64), "axes": np.array([0], np.int64),
                         "one": np.array([1], np.int64)})
    data = quantized(model, feeds([1, 3, 4, 4]), quant_format=quant_format)
    import onnx

    assert {"Shape", "Gather", "ConstantOfShape", "Cast"} <= {n.op_type for n in onnx.load_from_string(data).graph.node}
    assert [op["type"] for op in qnnweb.describe(data)["ops"]][-3:] == ["RESHAPE", "FULLY_CONNECTED", "DEQUANTIZE"]
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 3, 4, 4], 1, seed=8)[0]["x"], variant)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("quant_format", ["QDQ", "QOperator"])
def test_maxpool_and_transpose_on_quantized_tensors(quant_format, activation):
    """QOperator runs MaxPool and Transpose on the uint8/int8 tensor itself (no Q/DQ around them)."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    fc = RNG.normal(0, 0.3, (4, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
             helper.make_node("Transpose", ["m"], ["t"], perm=[0, 2, 3, 1]),
             helper.make_node("MatMul", ["t", "fc"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [("y", [1, 3, 3, 3])], {"w": w, "fc": fc})
    data = quantized(model, feeds([1, 3, 6, 6]), quant_format=quant_format, activation=activation)
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 3, 6, 6], 1, seed=2)[0]["x"], variant)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("quant_format", ["QDQ", "QOperator"])
def test_softmax_over_a_middle_axis(quant_format, activation):
    """Softmax over an axis that is neither the last one nor a feature map's channels (after a Transpose the
    tensor is no feature map): onnxruntime moves the axis last, takes each row's softmax and moves it back;
    qnnweb too, bit-exact (difftest s20261245-c2268, -c2404 ...)."""
    w = RNG.normal(0, 0.5, (5, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Transpose", ["c"], ["t"], perm=[0, 2, 1, 3]),
             helper.make_node("Softmax", ["t"], ["s"], axis=1), helper.make_node("Softmax", ["s"], ["y"], axis=2)]
    model = float_model(nodes, [("x", [1, 3, 4, 6])], [("y", [1, 4, 5, 6])], {"w": w})
    data = quantized(model, feeds([1, 3, 4, 6]), quant_format=quant_format, activation=activation)
    for x in feeds([1, 3, 4, 6], 3, seed=5):
        assert_matches_onnxruntime(data, x["x"], ["SOFTMAX"], exact=True)


@pytest.mark.parametrize("quant_format", ["QDQ", "QOperator"])
def test_softmax_forms_and_two_activations_in_a_row(quant_format):
    """Softmax over a feature map's channels and over a last axis (QOperator: QLinearSoftmax), and
    LeakyRelu followed by Relu (one table with the second as its clamp)."""
    import onnx

    w = RNG.normal(0, 0.5, (5, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("LeakyRelu", ["c"], ["l"], alpha=0.2), helper.make_node("Relu", ["l"], ["r"]),
             helper.make_node("Softmax", ["r"], ["s"], axis=1),
             helper.make_node("Softmax", ["s"], ["y"], axis=-1)]
    model = float_model(nodes, [("x", [1, 3, 4, 6])], [("y", [1, 5, 4, 6])], {"w": w})
    data = quantized(model, feeds([1, 3, 4, 6]), quant_format=quant_format)
    if quant_format == "QOperator":
        assert "QLinearSoftmax" in {n.op_type for n in onnx.load_from_string(data).graph.node}
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 3, 4, 6], 1, seed=3)[0]["x"], variant)
