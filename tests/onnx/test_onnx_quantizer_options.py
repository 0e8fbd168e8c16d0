"""quantize_static options that change the graph it writes, each against onnxruntime, bit-exact, every variant.
A sweep of the quantizer's modes over tools/models/converters/architectures.py (2026-12-05) found qnnweb refusing
these forms on real architectures (each test below fails on the importer before that session):

- AddQDQPairToWeight: the weights stay float behind QuantizeLinear -> DequantizeLinear; onnxruntime folds the
  QuantizeLinear of the constant with its QuantizeLinear kernel's arithmetic, and so does the importer.
- QuantizeBias=False: a Conv's / Gemm's bias stays float; onnxruntime's BiasQuantization transformer rounds
  it to int32 at input scale x weight scale before it fuses the op (a ConvTranspose's: added in float).
- DedicatedQDQPair: a Shape (torch.chunk's) reads a float output itself, beside the QuantizeLinear nodes.
- QOperator with ActivationSymmetric or ForceQuantizeNoInputCheck: a float Relu / MaxPool after a
  DequantizeLinear is read by a QuantizeLinear and by another float op (a GlobalAveragePool, the next MaxPool
  of YOLO's SPPF), or quantized with several parameters. Such a result is exactly a dequantized int8 tensor
  of its input's quantization: the importer keeps it int8 and its float readers read it dequantized."""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

import qnnweb

RNG = np.random.default_rng(11)


def feeds(shape, count=8, seed=0):
    rng = np.random.default_rng(seed)
    return [{"x": rng.uniform(-1, 1, shape).astype(np.float32)} for _ in range(count)]


def op_types(data):
    return [n.op_type for n in onnx.load_from_string(data).graph.node]


def float_initializers(data):
    return {i.name for i in onnx.load_from_string(data).graph.initializer if i.data_type == onnx.TensorProto.FLOAT}


def conv_then_gemm(bias):
    """Conv (+ bias) -> Relu -> GlobalAveragePool -> Flatten -> Gemm (+ bias): both ops onnxruntime fuses."""
    w = RNG.normal(0, 0.5, (6, 3, 3, 3)).astype(np.float32)
    fc = RNG.normal(0, 0.4, (5, 6)).astype(np.float32)
    inits = {"w": w, "fc": fc}
    if bias:
        inits.update(b=RNG.normal(0, 0.2, 6).astype(np.float32), fb=RNG.normal(0, 0.2, 5).astype(np.float32))
    nodes = [helper.make_node("Conv", ["x", "w"] + (["b"] if bias else []), ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Relu", ["c"], ["r"]), helper.make_node("GlobalAveragePool", ["r"], ["p"]),
             helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"] + (["fb"] if bias else []), ["y"], transB=1)]
    return float_model(nodes, [("x", [1, 3, 8, 8])], [("y", [1, 5])], inits)


@pytest.mark.parametrize("per_channel", [True, False], ids=["per-channel", "per-tensor"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_float_weights_behind_a_quantize_dequantize_pair(per_channel, activation):
    data = quantized(conv_then_gemm(bias=True), feeds([1, 3, 8, 8]), activation=activation, per_channel=per_channel,
                     AddQDQPairToWeight=True)
    graph = onnx.load_from_string(data).graph
    floats = float_initializers(data)
    assert {"w", "fc"} <= floats and sum(n.op_type == "QuantizeLinear" and n.input[0] in floats
                                         for n in graph.node) == 2
    assert_matches_onnxruntime(data, feeds([1, 3, 8, 8], 1, seed=7)[0]["x"], {"CONV_2D"}, exact=True)


def onnxruntime_conv_bias(data, tmp_path):
    """The int32 bias of the QLinearConv onnxruntime makes of the model's QDQ Conv (its optimized graph)."""
    options = onnxruntime.SessionOptions()
    options.add_session_config_entry("session.qdqisint8allowed", "1")
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    graph = onnx.load(options.optimized_model_filepath).graph
    conv = next(n for n in graph.node if n.op_type == "QLinearConv")
    bias = next(i for i in graph.initializer if i.name == conv.input[8])
    return onnx.numpy_helper.to_array(bias)


@pytest.mark.parametrize("per_channel", [True, False], ids=["per-channel", "per-tensor"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_float_bias_quantized_as_onnxruntime_does(per_channel, activation, tmp_path):
    data = quantized(conv_then_gemm(bias=True), feeds([1, 3, 8, 8]), activation=activation, per_channel=per_channel,
                     QuantizeBias=False)
    assert {"b", "fb"} <= float_initializers(data)
    ours = next(t for t in qnnweb.load(data)._graph.tensors if t.name == "b")
    np.testing.assert_array_equal(np.frombuffer(bytes(ours.data), "<i4"), onnxruntime_conv_bias(data, tmp_path))
    assert_matches_onnxruntime(data, feeds([1, 3, 8, 8], 1, seed=6)[0]["x"], {"CONV_2D"}, exact=True)


@pytest.mark.parametrize("bad", [np.inf, np.nan, 1e38], ids=["inf", "nan", "beyond-int32"])
def test_a_float_bias_without_an_int32_value_is_refused_by_name(bad):
    """A float bias that is infinite, NaN or beyond int32 at input scale x weight scale (a corrupt file, as the
    fuzz campaign makes them) is a clean refusal naming the bias, not an OverflowError / ValueError."""
    model = onnx.load_from_string(quantized(conv_then_gemm(bias=True), feeds([1, 3, 8, 8]), QuantizeBias=False))
    bias = next(i for i in model.graph.initializer if i.name == "b")
    values = onnx.numpy_helper.to_array(bias).copy()
    values[0] = bad
    bias.CopyFrom(onnx.numpy_helper.from_array(values, "b"))
    with pytest.raises(qnnweb.UnsupportedModelError, match="float bias 'b' is not finite or does not fit in int32"):
        qnnweb.load(model.SerializeToString())


def test_a_float_conv_transpose_bias():
    """onnxruntime quantizes a float bias for Conv and Gemm only; its ConvTranspose runs in float32, bias and all:
    rounded as a Conv's bias here, within one quantum (as the op itself: test_onnx_conv_transpose.py)."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    wt = RNG.normal(0, 0.3, (4, 2, 2, 2)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("ConvTranspose", ["c", "wt", "tb"], ["y"], strides=[2, 2])]
    model = float_model(nodes, [("x", [1, 3, 4, 4])], [("y", [1, 2, 8, 8])],
                        {"w": w, "wt": wt, "tb": np.array([0.1, -0.2], np.float32)})
    data = quantized(model, feeds([1, 3, 4, 4]), QuantizeBias=False)
    assert "tb" in float_initializers(data)
    assert_matches_onnxruntime(data, feeds([1, 3, 4, 4], 1, seed=1)[0]["x"], {"TRANSPOSE_CONV"}, min_exact=0.99)


@pytest.mark.parametrize("dedicated", [False, True], ids=["shared-pair", "dedicated-pairs"])
def test_shape_reads_a_float_output(dedicated):
    """torch.chunk's split as tiny YOLO's C2f writes it: Shape -> Gather -> Div -> two Slices of a SiLU's
    output. With DedicatedQDQPair the Shape reads the Mul's float output itself."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["sg"]), helper.make_node("Mul", ["c", "sg"], ["m"]),
             helper.make_node("Shape", ["m"], ["s"]), helper.make_node("Gather", ["s", "one"], ["ch"], axis=0),
             helper.make_node("Div", ["ch", "two"], ["half"]),
             helper.make_node("Unsqueeze", ["half", "axes"], ["h1"]),
             helper.make_node("Slice", ["m", "zero", "h1", "axes1"], ["a"]),
             helper.make_node("Slice", ["m", "h1", "big", "axes1"], ["b"]),
             helper.make_node("Add", ["a", "b"], ["y"])]
    inits = {"w": w, "one": np.array(1, np.int64), "two": np.array(2, np.int64), "axes": np.array([0], np.int64),
             "zero": np.array([0], np.int64), "big": np.array([1 << 30], np.int64), "axes1": np.array([1], np.int64)}
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [("y", [1, 2, 6, 6])], inits)
    data = quantized(model, feeds([1, 3, 6, 6]), **({"DedicatedQDQPair": True} if dedicated else {}))
    graph = onnx.load_from_string(data).graph
    shape_reads = next(n for n in graph.node if n.op_type == "Shape").input[0]
    assert (shape_reads == "m") == dedicated   # the float output itself, or a DequantizeLinear's
    assert_matches_onnxruntime(data, feeds([1, 3, 6, 6], 1, seed=9)[0]["x"], {"ADD"}, exact=True)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_float_relu_read_by_a_float_average_pool(activation):
    """QOperator + ActivationSymmetric cannot fold the Relu into QLinearConv: QLinearConv -> DequantizeLinear ->
    Relu -> {QuantizeLinear, GlobalAveragePool (float) -> QuantizeLinear} (MobileNetV3's squeeze-excite)."""
    w = RNG.normal(0, 0.5, (8, 3, 3, 3)).astype(np.float32)
    w2 = RNG.normal(0, 0.5, (8, 8, 1, 1)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]), helper.make_node("Conv", ["p", "w2"], ["s"]),
             helper.make_node("Sigmoid", ["s"], ["g"]), helper.make_node("Mul", ["r", "g"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 16, 16])], [("y", [1, 8, 16, 16])], {"w": w, "w2": w2})
    data = quantized(model, feeds([1, 3, 16, 16]), quant_format="QOperator", activation=activation,
                     ActivationSymmetric=True)
    assert {"Relu", "GlobalAveragePool"} <= set(op_types(data))   # both left in float
    for seed in (3, 4):
        assert_matches_onnxruntime(data, feeds([1, 3, 16, 16], 1, seed=seed)[0]["x"], {"AVERAGE_POOL_2D"}, exact=True)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_float_max_pools_in_a_row_each_quantized_differently(activation):
    """QOperator + ForceQuantizeNoInputCheck on YOLO's SPPF (three chained MaxPools, all four tensors
    concatenated): each float MaxPool feeds the next one and a QuantizeLinear of its own parameters."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    w2 = RNG.normal(0, 0.5, (4, 16, 1, 1)).astype(np.float32)
    pool = dict(kernel_shape=[5, 5], strides=[1, 1], pads=[2, 2, 2, 2])
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Sigmoid", ["c"], ["sg"]), helper.make_node("Mul", ["c", "sg"], ["r"]),
             helper.make_node("MaxPool", ["r"], ["m1"], **pool), helper.make_node("MaxPool", ["m1"], ["m2"], **pool),
             helper.make_node("MaxPool", ["m2"], ["m3"], **pool),
             helper.make_node("Concat", ["r", "m1", "m2", "m3"], ["k"], axis=1),
             helper.make_node("Conv", ["k", "w2"], ["y"])]
    model = float_model(nodes, [("x", [1, 3, 8, 8])], [("y", [1, 4, 8, 8])], {"w": w, "w2": w2})
    data = quantized(model, feeds([1, 3, 8, 8]), quant_format="QOperator", activation=activation,
                     ForceQuantizeNoInputCheck=True)
    assert op_types(data).count("MaxPool") == 3 and op_types(data).count("QuantizeLinear") >= 3
    assert_matches_onnxruntime(data, feeds([1, 3, 8, 8], 1, seed=9)[0]["x"], {"MAX_POOL_2D"}, exact=True)


def test_qoperator_float_conv_transpose_is_refused_with_the_reason():
    """onnxruntime's QOperator form has no quantized ConvTranspose: the quantizer leaves it float, float weights
    and all (CartoonGAN's upsampling). The refusal says so and names the way out (its QDQ form runs)."""
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    wt = RNG.normal(0, 0.3, (4, 4, 4, 4)).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["a"], pads=[1, 1, 1, 1]),
             helper.make_node("ConvTranspose", ["a", "wt"], ["y"], strides=[2, 2], pads=[1, 1, 1, 1])]
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [("y", [1, 4, 12, 12])], {"w": w, "wt": wt})
    data = quantized(model, feeds([1, 3, 6, 6]), quant_format="QOperator")
    with pytest.raises(qnnweb.ModelError, match="ConvTranspose: weights 'wt' are float.*quant_format=QDQ"):
        qnnweb.load(data)
    qdq = quantized(model, feeds([1, 3, 6, 6]))
    assert_matches_onnxruntime(qdq, feeds([1, 3, 6, 6], 1, seed=2)[0]["x"], {"TRANSPOSE_CONV"})


def _resize_then(ops_after):
    w = RNG.normal(0, 0.5, (4, 3, 3, 3)).astype(np.float32)
    scales = np.array([1, 1, 2, 2], np.float32)
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", ["c", "", "scales"], ["r"], mode="linear"), *ops_after]
    return nodes, {"w": w, "scales": scales}


def test_float_bilinear_resize_then_moves_requantizes_once():
    """QOperator + ForceQuantizeNoInputCheck leaves a linear Resize in float after a DequantizeLinear, here read
    through a nearest Resize and a Reshape by a QuantizeLinear (difftest s20261236-c504): the bilinear sums are
    quantized once, with that QuantizeLinear's parameters (they were quantized with the input's first, and again:
    up to 2 quanta off)."""
    nodes, inits = _resize_then([helper.make_node("Resize", ["r", "", "up"], ["n"], mode="nearest"),
                                 helper.make_node("Reshape", ["n", "flat"], ["f"]),
                                 helper.make_node("MatMul", ["f", "fc"], ["y"])])
    inits.update(up=np.array([1, 1, 2, 2], np.float32), flat=np.array([1, -1], np.int64),
                 fc=RNG.normal(0, 0.1, (4 * 24 * 24, 5)).astype(np.float32))
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [("y", [1, 5])], inits)
    data = quantized(model, feeds([1, 3, 6, 6]), quant_format="QOperator", ForceQuantizeNoInputCheck=True)
    assert op_types(data).count("Resize") == 2
    for seed in (1, 2, 3):
        assert_matches_onnxruntime(data, feeds([1, 3, 6, 6], 1, seed=seed)[0]["x"], {"RESIZE_BILINEAR"}, exact=True)


def test_float_bilinear_resize_read_by_a_float_op_is_refused():
    """The same float Resize read by a float HardSigmoid (difftest s20261236-c108): onnxruntime applies it to the
    bilinear sums themselves, which no int8 table can take; refused (it ran up to 2 quanta off)."""
    nodes, inits = _resize_then([helper.make_node("HardSigmoid", ["r"], ["h"]),
                                 helper.make_node("Conv", ["h", "w2"], ["y"])])
    inits.update(w2=RNG.normal(0, 0.5, (2, 4, 1, 1)).astype(np.float32))
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [("y", [1, 2, 12, 12])], inits)
    data = quantized(model, feeds([1, 3, 6, 6]), quant_format="QOperator", ForceQuantizeNoInputCheck=True)
    assert {"Resize", "HardSigmoid"} <= set(op_types(data))
    with pytest.raises(qnnweb.UnsupportedModelError, match=r"Resize.*its float output 'r' is used in float"):
        qnnweb.load(data)
