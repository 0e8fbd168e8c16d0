"""onnxruntime quantizer outputs whose arithmetic is not one int8 op after another, each against
onnxruntime (tools/qnnweb_dev/reference/onnxruntime_session.py): grouped convolutions, asymmetric weights quantized
per channel (QLinearConv, depthwise too), float ops the QOperator form leaves at the model's end or
before its first QuantizeLinear, runs of them (through reshapes, transposes and slices, with a PRelu, a Pad
after them, one read both quantized and by the next float op), and MaxPool with dilations."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession
from test_onnx_quantizer_forms import assert_matches, feeds

import qnnweb

RNG = np.random.default_rng(11)
MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]
MODE_IDS = ["-".join(m) for m in MODES]


def conv_model(group, channels=8, out_channels=8, kernel=3):
    w = RNG.normal(0, 0.5, (out_channels, channels // group, kernel, kernel)).astype(np.float32)
    b = RNG.normal(0, 0.2, out_channels).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1], group=group),
             helper.make_node("Relu", ["c"], ["y"])]
    return float_model(nodes, [("x", [1, channels, 6, 7])], [("y", [1, out_channels, 6, 7])], {"w": w, "b": b})


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("group", [2, 4])
def test_grouped_convolution(mode, group):
    data = quantized(conv_model(group), feeds([1, 8, 6, 7]), quant_format=mode[0], activation=mode[1])
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 8, 6, 7], 1, seed=2)[0]["x"], variant)


# (format, activations, weights): the quantizer refuses int8 activations with uint8 weights
WEIGHT_MODES = [m + (w,) for m in MODES for w in ("QInt8", "QUInt8") if (m[1], w) != ("QInt8", "QUInt8")]


@pytest.mark.parametrize("mode", WEIGHT_MODES, ids=["-".join(m) for m in WEIGHT_MODES])
@pytest.mark.parametrize("group", [1, 8], ids=["conv", "depthwise"])
def test_asymmetric_per_channel_weights(mode, group):
    """per_channel=True without WeightSymmetric: one weight zero point per output channel."""
    weight = mode[2]
    data = quantized(conv_model(group), feeds([1, 8, 6, 7]), quant_format=mode[0], activation=mode[1], weight=weight,
                     per_channel=True, WeightSymmetric=False)
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 8, 6, 7], 1, seed=3)[0]["x"], variant)


def assert_bit_exact(data, x):
    """The model's float outputs equal onnxruntime's, bit for bit, in every variant."""
    (theirs,) = ReferenceSession(data).run({"x": x})
    for variant in qnnweb.VARIANTS:
        (ours,) = qnnweb.load(data, variant=variant).run(x)
        np.testing.assert_array_equal(ours, theirs, err_msg=variant)


def assert_run_matches(data, x, at_end):
    """A float run at the model's end (float output): bit for bit; between convolutions: as
    assert_matches checks int8 models."""
    if at_end:
        assert_bit_exact(data, x)
    else:
        for variant in qnnweb.VARIANTS:
            assert_matches(data, x, variant)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("op", ["Tanh", "HardSigmoid", "HardSwish", "Sigmoid"])
def test_float_op_at_the_end_of_a_qoperator_model(activation, op):
    """QOperator leaves the last Tanh / HardSigmoid / HardSwish in float: qnnweb's float32 result must be
    onnxruntime's, bit for bit (its float32 kernels, MLAS's Tanh included, applied to each dequantized value)."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node(op, ["c"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", [1, 4, 5, 6])], {"w": w}, opset=14)
    data = quantized(model, feeds([1, 3, 5, 6]), quant_format="QOperator", activation=activation)
    assert_bit_exact(data, feeds([1, 3, 5, 6], 1, seed=6)[0]["x"])


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("tail", ["Transpose", "Reshape", "Transpose+Flatten"])
@pytest.mark.parametrize("op", ["HardSwish", "PRelu"])
def test_float_op_then_layout_ops_to_the_output(activation, tail, op):
    """The last float op's result reaching the output through a Transpose / Reshape (a detector's head
    laid out as [N, anchors, values]): moved in float32, bit for bit (difftest s20261205-c98)."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    init = {"w": w}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])]
    if op == "PRelu":
        init["slope"] = RNG.uniform(0.05, 0.3, (4, 1, 1)).astype(np.float32)
        nodes.append(helper.make_node("PRelu", ["c", "slope"], ["a"]))
    else:
        nodes.append(helper.make_node(op, ["c"], ["a"]))
    if tail == "Reshape":
        init["shape"] = np.array([1, 4, 30], np.int64)
        nodes.append(helper.make_node("Reshape", ["a", "shape"], ["y"]))
        out = [1, 4, 30]
    else:
        nodes.append(helper.make_node("Transpose", ["a"], ["t" if "Flatten" in tail else "y"], perm=[0, 2, 3, 1]))
        out = [1, 5, 6, 4]
        if "Flatten" in tail:
            nodes.append(helper.make_node("Flatten", ["t"], ["y"], axis=1))
            out = [1, 120]
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", out)], init, opset=14)
    data = quantized(model, feeds([1, 3, 5, 6]), quant_format="QOperator", activation=activation)
    assert_bit_exact(data, feeds([1, 3, 5, 6], 1, seed=7)[0]["x"])


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("tail", ["Slice", "Gather", "Transpose+Slice", "DepthToSpace", "MaxPool"])
@pytest.mark.parametrize("op", ["HardSwish", "Tanh"])
def test_float_op_then_moves_of_int8_tensors_to_the_output(activation, tail, op):
    """The last float op's result reaching the output through ops that move int8 tensors only (Slice,
    Gather, DepthToSpace; MaxPool after a function that never decreases on the input's values, Tanh: max
    commutes with it): they move the int8 input first, the float32 table comes last; bit for bit
    (difftest s20261211-c218, -c423, -c318). MaxPool after HardSwish, which dips below zero, is refused."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    init = {"w": w, "starts": np.array([1, 2], np.int64), "ends": np.array([4, 6], np.int64),
            "axes": np.array([2, 3], np.int64), "indices": np.array([3, 0, 2], np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node(op, ["c"], ["a"])]
    if tail == "Slice":
        nodes.append(helper.make_node("Slice", ["a", "starts", "ends", "axes"], ["y"]))
        out = [1, 4, 3, 4]
    elif tail == "Gather":
        nodes.append(helper.make_node("Gather", ["a", "indices"], ["y"], axis=1))
        out = [1, 3, 5, 6]
    elif tail == "DepthToSpace":
        nodes.append(helper.make_node("DepthToSpace", ["a"], ["y"], blocksize=2, mode="CRD"))
        out = [1, 1, 10, 12]
    elif tail == "MaxPool":
        nodes.append(helper.make_node("MaxPool", ["a"], ["y"], kernel_shape=[2, 2], pads=[1, 0, 0, 1]))
        out = [1, 4, 5, 6]
    else:
        init["axes"] = np.array([1, 2], np.int64)
        nodes += [helper.make_node("Transpose", ["a"], ["t"], perm=[0, 2, 3, 1]),
                  helper.make_node("Slice", ["t", "starts", "ends", "axes"], ["y"])]
        out = [1, 3, 4, 4]
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", out)], init, opset=14)
    data = quantized(model, feeds([1, 3, 5, 6]), quant_format="QOperator", activation=activation)
    if tail == "MaxPool" and op == "HardSwish":
        with pytest.raises(qnnweb.UnsupportedModelError, match="MaxPool: input 'a' is a float32 result read in float"):
            qnnweb.load(data)
        return
    assert_bit_exact(data, feeds([1, 3, 5, 6], 1, seed=9)[0]["x"])


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
@pytest.mark.parametrize("first", ["Relu", "MaxPool"])
def test_float_op_before_the_first_quantize(mode, first):
    """Relu / MaxPool on the model's float input, quantized after it: they commute with quantization."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    head = (helper.make_node("Relu", ["x"], ["h"]) if first == "Relu"
            else helper.make_node("MaxPool", ["x"], ["h"], kernel_shape=[2, 2], strides=[1, 1]))
    size = 6 if first == "Relu" else 5
    nodes = [head, helper.make_node("Conv", ["h", "w"], ["y"], pads=[1, 1, 1, 1])]
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [("y", [1, 4, size, size])], {"w": w})
    data = quantized(model, feeds([1, 3, 6, 6]), quant_format=mode[0], activation=mode[1])
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 3, 6, 6], 1, seed=7)[0]["x"], variant)


def test_global_average_pool_on_the_float_input_runs_in_float():
    """A GlobalAveragePool on the float input runs in float32 as onnxruntime's does (MLAS's global pooling sums,
    the MEAN's "onnxruntime_pool" arithmetic), then is quantized for the QLinearConv after it."""
    w = RNG.normal(0, 0.5, (4, 3, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("GlobalAveragePool", ["x"], ["h"]), helper.make_node("Conv", ["h", "w"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [("y", [1, 4, 1, 1])], {"w": w})
    data = quantized(model, feeds([1, 3, 6, 6]), quant_format="QOperator")
    assert "MEAN" in {op.type for op in qnnweb.load(data)._graph.ops}
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 3, 6, 6], 1, seed=9)[0]["x"], variant)


def test_float_op_on_the_float_input_is_named():
    """A PRelu on the float input (QOperator has no QLinearPRelu) cannot run as int8 (nor in float32:
    test_onnx_float32_path.py runs the element ops there): the report says so (not a generic dtype message)."""
    w = RNG.normal(0, 0.5, (4, 3, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("PRelu", ["x", "slope"], ["h"]), helper.make_node("Conv", ["h", "w"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [("y", [1, 4, 6, 6])],
                        {"w": w, "slope": np.full((3, 1, 1), 0.1, np.float32)})
    data = quantized(model, feeds([1, 3, 6, 6]), quant_format="QOperator")
    with pytest.raises(qnnweb.UnsupportedModelError, match="computes in float on the model's float input 'x'"):
        qnnweb.load(data)


@pytest.mark.parametrize("mode", MODES, ids=MODE_IDS)
def test_dilated_max_pool(mode):
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("MaxPool", ["c"], ["y"], kernel_shape=[2, 3], dilations=[2, 2], pads=[1, 0, 1, 1])]
    model = float_model(nodes, [("x", [1, 3, 7, 8])], [("y", [1, 4, 7, 5])], {"w": w}, opset=13)
    data = quantized(model, feeds([1, 3, 7, 8]), quant_format=mode[0], activation=mode[1])
    for variant in qnnweb.VARIANTS:
        assert_matches(data, feeds([1, 3, 7, 8], 1, seed=8)[0]["x"], variant)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("at_end", [False, True], ids=["between-convolutions", "at-the-end"])
def test_float_ops_in_a_row(activation, at_end):
    """QOperator leaves Tanh -> HardSigmoid -> HardSwish all in float: one table of their composition,
    in onnxruntime's float32 arithmetic (bit-exact at the end, where the output is float)."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    w2 = RNG.normal(0, 0.5, (5, 4, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Tanh", ["c"], ["t"]),
             helper.make_node("HardSigmoid", ["t"], ["h"], alpha=0.3, beta=0.4),
             helper.make_node("HardSwish", ["h"], ["y" if at_end else "s"])]
    if not at_end:
        nodes.append(helper.make_node("Conv", ["s", "w2"], ["y"]))
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", [1, 4 if at_end else 5, 5, 6])],
                        {"w": w, **({} if at_end else {"w2": w2})}, opset=14)
    data = quantized(model, feeds([1, 3, 5, 6]), quant_format="QOperator", activation=activation)
    x = feeds([1, 3, 5, 6], 1, seed=12)[0]["x"]
    assert_run_matches(data, x, at_end)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("at_end", [False, True], ids=["between-convolutions", "at-the-end"])
@pytest.mark.parametrize("chain", ["reshape-between", "prelu-after-unary", "prelu-then-reshape", "two-prelus",
                                   "prelu-tanh-prelu"])
def test_float_ops_in_a_row_through_reshapes_and_prelu(activation, at_end, chain):
    """QOperator's float runs with a Reshape inside (Tanh -> Reshape -> HardSigmoid: one table, computed
    before the reshape, which commutes with it) or per-channel PRelus (HardSwish -> PRelu -> Tanh,
    PRelu -> Reshape -> HardSwish, PRelu -> PRelu, PRelu (one slope) -> Tanh -> PRelu: one table per
    channel); bit-exact where the output is float (difftest s20261210-c409, s20261211-c66)."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    w2 = RNG.normal(0, 0.5, (5, 4, 1, 1)).astype(np.float32)
    init = {"w": w, "slope": RNG.uniform(-0.5, 0.9, (4, 1, 1)).astype(np.float32),
            "slope2": RNG.uniform(-1.5, 0.5, (4, 1, 1)).astype(np.float32), "one": np.array([0.3], np.float32),
            "shape": np.array([1, 4, 30, 1], np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])]
    if chain == "reshape-between":
        nodes += [helper.make_node("Tanh", ["c"], ["t"]), helper.make_node("Reshape", ["t", "shape"], ["r"]),
                  helper.make_node("HardSigmoid", ["r"], ["f"], alpha=0.3, beta=0.4)]
    elif chain == "prelu-after-unary":
        nodes += [helper.make_node("HardSwish", ["c"], ["h"]), helper.make_node("PRelu", ["h", "slope"], ["p"]),
                  helper.make_node("Tanh", ["p"], ["f"])]
    elif chain == "prelu-then-reshape":
        nodes += [helper.make_node("PRelu", ["c", "slope"], ["p"]), helper.make_node("Reshape", ["p", "shape"], ["r"]),
                  helper.make_node("HardSwish", ["r"], ["f"])]
    elif chain == "two-prelus":
        nodes += [helper.make_node("PRelu", ["c", "slope"], ["p"]), helper.make_node("PRelu", ["p", "slope2"], ["f"])]
    else:
        nodes += [helper.make_node("PRelu", ["c", "one"], ["p"]), helper.make_node("Tanh", ["p"], ["t"]),
                  helper.make_node("PRelu", ["t", "slope2"], ["f"])]
    height, width = (30, 1) if "reshape" in chain else (5, 6)
    if not at_end:
        nodes.append(helper.make_node("Conv", ["f", "w2"], ["y"]))
        init["w2"] = w2
    else:
        nodes[-1].output[0] = "y"
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", [1, 4 if at_end else 5, height, width])], init, opset=14)
    data = quantized(model, feeds([1, 3, 5, 6]), quant_format="QOperator", activation=activation)
    x = feeds([1, 3, 5, 6], 1, seed=13)[0]["x"]
    assert_run_matches(data, x, at_end)


# (chain, at the model's end): a Pad after a float run only between convolutions (at the end its
# float result would need a float Pad)
MOVE_CHAINS = [(chain, at_end) for chain in ("transpose-between", "slice-between") for at_end in (False, True)] + \
    [("pad-after", False), ("transpose-pad-after", False)]


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("chain, at_end", MOVE_CHAINS, ids=[f"{c}-{'end' if e else 'between'}" for c, e in MOVE_CHAINS])
def test_float_runs_through_moves_and_a_pad(activation, chain, at_end):
    """Moves inside a float run (HardSigmoid -> Transpose -> Tanh, HardSwish -> Slice -> Tanh: one table,
    computed before the move, which commutes with it; difftest s20261215-c1685) and a Pad after one
    (Tanh -> Pad -> Conv: quantized first, then padded with the quantized zero, as onnxruntime's float
    Pad of a float 0 quantizes; s20261215-c25). Were refused: "its float output is used in float"."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    init = {"w": w, "starts": np.array([1], np.int64), "ends": np.array([4], np.int64),
            "axes": np.array([1], np.int64), "pads": np.array([0, 0, 1, 2, 0, 0, 1, 0], np.int64)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])]
    channels, height, width = 4, 5, 6
    if chain == "transpose-between":
        nodes += [helper.make_node("HardSigmoid", ["c"], ["h"], alpha=0.3, beta=0.4),
                  helper.make_node("Transpose", ["h"], ["t"], perm=[0, 1, 3, 2]), helper.make_node("Tanh", ["t"], ["f"])]
        height, width = width, height
    elif chain == "slice-between":
        nodes += [helper.make_node("HardSwish", ["c"], ["h"]), helper.make_node("Slice", ["h", "starts", "ends", "axes"], ["t"]),
                  helper.make_node("Tanh", ["t"], ["f"])]
        channels = 3
    elif chain == "pad-after":
        nodes += [helper.make_node("Tanh", ["c"], ["t"]), helper.make_node("Pad", ["t", "pads"], ["f"])]
        height, width = height + 2, width + 2
    else:
        nodes += [helper.make_node("Tanh", ["c"], ["t"]), helper.make_node("Transpose", ["t"], ["r"], perm=[0, 1, 3, 2]),
                  helper.make_node("Pad", ["r", "pads"], ["f"])]
        height, width = width + 2, height + 2
    if at_end:
        nodes[-1].output[0] = "y"
    else:
        init["w2"] = RNG.normal(0, 0.5, (5, channels, 1, 1)).astype(np.float32)
        nodes.append(helper.make_node("Conv", ["f", "w2"], ["y"]))
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", [1, channels if at_end else 5, height, width])], init,
                        opset=14)
    data = quantized(model, feeds([1, 3, 5, 6]), quant_format="QOperator", activation=activation)
    x = feeds([1, 3, 5, 6], 1, seed=14)[0]["x"]
    assert_run_matches(data, x, at_end)


def test_composed_float_runs_have_no_tflite_twin():
    """A PRelu with float ops composed before it (or after it) is one table: the TFLite exporter (the
    bench's twins) refuses it with the reason instead of writing a model that computes something else."""
    from qnnweb.exporters import export_tflite
    from qnnweb.importers.onnx import import_onnx

    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("HardSwish", ["c"], ["h"]),
             helper.make_node("PRelu", ["h", "slope"], ["y"])]
    init = {"w": w, "slope": RNG.uniform(-0.5, 0.9, (4, 1, 1)).astype(np.float32)}
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", [1, 4, 5, 6])], init, opset=14)
    data = quantized(model, feeds([1, 3, 5, 6]), quant_format="QOperator", activation="QInt8")
    with pytest.raises(qnnweb.ModelError, match="PRELU: a chain of float ops composed into one has no TFLite form"):
        export_tflite(import_onnx(data))


def test_a_float_run_in_a_cycle_ends_with_an_error():
    """A malformed graph whose float run feeds back into itself (HardSigmoid's output is Tanh's input):
    following the run stops at a node met before, and the model is refused, not looped over forever."""
    import threading

    from onnx import TensorProto, numpy_helper

    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["a"]),
             helper.make_node("Tanh", ["a"], ["t"]),
             helper.make_node("Reshape", ["t", "shape"], ["r"]),
             helper.make_node("HardSigmoid", ["r"], ["a"]),
             helper.make_node("Identity", ["q"], ["y"])]
    init = [numpy_helper.from_array(np.array(0.05, np.float32), "s"), numpy_helper.from_array(np.array(3, np.int8), "z"),
            numpy_helper.from_array(np.array([1, 8], np.int64), "shape")]
    graph = helper.make_graph(nodes, "cycle", [helper.make_tensor_value_info("q", TensorProto.INT8, [1, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 8])], init)
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()
    outcome = []

    def load():
        try:
            qnnweb.load(data)
            outcome.append("loaded")
        except qnnweb.ModelError as e:   # UnsupportedModelError included
            outcome.append(e)

    worker = threading.Thread(target=load, daemon=True)
    worker.start()
    worker.join(60)
    assert outcome, "qnnweb.load did not return within 60 s"
    assert isinstance(outcome[0], qnnweb.ModelError), outcome


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("first, second", [("Tanh", "Relu"), ("HardSwish", "Clip"), ("HardSigmoid", "HardSwish"),
                                           ("PRelu", "HardSwish")])
def test_float_op_read_quantized_and_by_another_float_op(activation, first, second):
    """QOperator quantizes a float op's result for one reader (a QLinearConcat here) and hands it in float to
    the next float op: Tanh -> [QuantizeLinear, Relu -> QuantizeLinear]. Each path is a table of its own on
    the convolution's int8 output (the second one of both ops composed; per channel after a PRelu), as
    onnxruntime computes them in float32: bit-exact (difftest s20261247-c4723, -c8566; refused before: "its
    float output is used in float")."""
    from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime

    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    w2 = RNG.normal(0, 0.5, (5, 8, 1, 1)).astype(np.float32)
    init = {"w": w, "w2": w2, "lo": np.array(-0.2, np.float32), "hi": np.array(0.7, np.float32),
            "slope": RNG.uniform(-0.5, 0.9, (4, 1, 1)).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node(first, ["c", "slope"] if first == "PRelu" else ["c"], ["f"]),
             helper.make_node(second, ["f", "lo", "hi"] if second == "Clip" else ["f"], ["g"]),
             helper.make_node("Concat", ["f", "g"], ["j"], axis=1), helper.make_node("Conv", ["j", "w2"], ["y"])]
    used = {name for node in nodes for name in node.input}
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", [1, 5, 5, 6])], {k: v for k, v in init.items() if k in used},
                        opset=14)
    data = quantized(model, feeds([1, 3, 5, 6]), quant_format="QOperator", activation=activation)
    for x in feeds([1, 3, 5, 6], 2, seed=14):
        assert_matches_onnxruntime(data, x["x"], ["CONV_2D"], exact=True)
