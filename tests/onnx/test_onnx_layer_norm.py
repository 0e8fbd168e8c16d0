"""ONNX LayerNormalization and InstanceNormalization as onnxruntime's quantize_static leaves them: in float
between a DequantizeLinear and a QuantizeLinear (QDQ u8s8 and s8s8, QOperator), gamma and beta int8 constants
dequantized (QDQ) or float initializers (QOperator), per-tensor and per-channel weights; LayerNormalization
over the last axis and mid axes of rank-3 and rank-4 tensors, with and without a bias; timm's GroupNorm with
one group (Reshape -> InstanceNormalization -> Reshape -> Mul -> Add). Bit-exact with onnxruntime in every
variant: qnnweb's LAYER_NORM computes onnxruntime's float arithmetic (wasm_kernels/src/operators/layer_norm.c)."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb

RNG = np.random.default_rng(1717)
MODES = {"qdq-u8s8": dict(quant_format="QDQ", activation="QUInt8"),
         "qdq-s8s8": dict(quant_format="QDQ", activation="QInt8"),
         "qoperator-u8": dict(quant_format="QOperator", activation="QUInt8")}


def feeds(shape, count=8):
    return [{"x": RNG.normal(0, 1, shape).astype(np.float32)} for _ in range(count)]


def conv_layer_norm(shape, axis, bias=True):
    """Conv 1x1 -> LayerNormalization(axis) -> Conv 1x1 on an NCHW tensor."""
    n, c, h, w = shape
    normalized = [n, 8, h, w][axis:]
    inputs = ["c", "g", "b"] if bias else ["c", "g"]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]),
             helper.make_node("LayerNormalization", inputs, ["l"], axis=axis, epsilon=1e-5),
             helper.make_node("Conv", ["l", "w2"], ["y"])]
    init = {"w": RNG.normal(0, 0.5, (8, c, 1, 1)).astype(np.float32),
            "g": RNG.normal(1, 0.3, normalized).astype(np.float32),
            "w2": RNG.normal(0, 0.5, (4, 8, 1, 1)).astype(np.float32)}
    if bias:
        init["b"] = RNG.normal(0, 0.3, normalized).astype(np.float32)
    return float_model(nodes, [("x", shape)], [("y", [n, 4, h, w])], init, opset=17)


def tokens_layer_norm(shape, axis):
    """Add (a constant) -> LayerNormalization(axis) -> Mul (a constant) on a [batch, tokens, channels] tensor."""
    nodes = [helper.make_node("Add", ["x", "a"], ["s"]),
             helper.make_node("LayerNormalization", ["s", "g", "b"], ["l"], axis=axis, epsilon=1e-6),
             helper.make_node("Mul", ["l", "m"], ["y"])]
    normalized = shape[axis:]
    init = {"a": RNG.normal(0, 0.5, shape[-1:]).astype(np.float32),
            "g": RNG.normal(1, 0.3, normalized).astype(np.float32),
            "b": RNG.normal(0, 0.3, normalized).astype(np.float32),
            "m": np.float32(1.5)}
    return float_model(nodes, [("x", shape)], [("y", shape)], init, opset=17)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("axis", [-1, 1, 2])
def test_layer_norm_feature_map(mode, axis):
    shape = [2, 3, 5, 6]
    data = quantized(conv_layer_norm(shape, axis), feeds(shape), **MODES[mode])
    assert_matches_onnxruntime(data, RNG.normal(0, 1, shape).astype(np.float32), ["LAYER_NORM"], exact=True)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("per_channel", [False, True])
def test_layer_norm_tokens(mode, per_channel):
    """Rows of 7 (onnxruntime's inline Welford arithmetic) and of 24 (its MLAS kernel)."""
    for shape in ([1, 10, 7], [2, 5, 24]):
        data = quantized(tokens_layer_norm(shape, -1), feeds(shape), per_channel=per_channel, **MODES[mode])
        assert_matches_onnxruntime(data, RNG.normal(0, 1, shape).astype(np.float32), ["LAYER_NORM"], exact=True)


def test_layer_norm_over_tokens_and_channels():
    shape = [2, 6, 9]
    data = quantized(tokens_layer_norm(shape, 1), feeds(shape), **MODES["qdq-s8s8"])
    assert_matches_onnxruntime(data, RNG.normal(0, 1, shape).astype(np.float32), ["LAYER_NORM"], exact=True)


@pytest.mark.parametrize("mode", ["qdq-u8s8", "qoperator-u8"])
def test_layer_norm_without_bias(mode):
    shape = [1, 3, 4, 4]
    data = quantized(conv_layer_norm(shape, -1, bias=False), feeds(shape), **MODES[mode])
    assert_matches_onnxruntime(data, RNG.normal(0, 1, shape).astype(np.float32), ["LAYER_NORM"], exact=True)


def group_norm_one_group(n, c, h, w):
    """timm's GroupNorm(1, C) as torch.onnx exports it: Reshape [N, 1, -1] -> InstanceNormalization (scale 1,
    bias 0) -> Reshape back -> Mul gamma -> Add beta, between two convolutions."""
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Reshape", ["c", "s1"], ["r"]),
             helper.make_node("InstanceNormalization", ["r", "one", "zero"], ["i"], epsilon=1e-5),
             helper.make_node("Reshape", ["i", "s2"], ["r2"]), helper.make_node("Mul", ["r2", "g"], ["m"]),
             helper.make_node("Add", ["m", "b"], ["a"]), helper.make_node("Conv", ["a", "w2"], ["y"])]
    init = {"w": RNG.normal(0, 0.5, (c, 3, 1, 1)).astype(np.float32), "s1": np.array([n, 1, -1], np.int64),
            "one": np.ones(1, np.float32), "zero": np.zeros(1, np.float32), "s2": np.array([n, c, h, w], np.int64),
            "g": RNG.normal(1, 0.3, (c, 1, 1)).astype(np.float32), "b": RNG.normal(0, 0.3, (c, 1, 1)).astype(np.float32),
            "w2": RNG.normal(0, 0.5, (4, c, 1, 1)).astype(np.float32)}
    return float_model(nodes, [("x", [n, 3, h, w])], [("y", [n, 4, h, w])], init, opset=17)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("size", [(2, 8, 4, 5), (3, 5, 3, 7)])   # rows of 160 and of 105 (unaligned rows)
def test_group_norm_one_group(mode, size):
    n, c, h, w = size
    data = quantized(group_norm_one_group(n, c, h, w), feeds([n, 3, h, w]), **MODES[mode])
    assert_matches_onnxruntime(data, RNG.normal(0, 1, (n, 3, h, w)).astype(np.float32), ["LAYER_NORM"], exact=True)


def test_instance_norm_per_channel_scale():
    """InstanceNormalization with its own scale and bias per channel, on a rank-3 tensor."""
    nodes = [helper.make_node("Add", ["x", "a"], ["s"]),
             helper.make_node("InstanceNormalization", ["s", "g", "b"], ["i"], epsilon=1e-5),
             helper.make_node("Mul", ["i", "m"], ["y"])]
    init = {"a": RNG.normal(0, 0.5, (1, 1, 13)).astype(np.float32), "g": RNG.normal(1, 0.3, 4).astype(np.float32),
            "b": RNG.normal(0, 0.3, 4).astype(np.float32), "m": np.float32(0.75)}
    model = float_model(nodes, [("x", [2, 4, 13])], [("y", [2, 4, 13])], init, opset=17)
    data = quantized(model, feeds([2, 4, 13]), **MODES["qdq-s8s8"])
    assert_matches_onnxruntime(data, RNG.normal(0, 1, (2, 4, 13)).astype(np.float32), ["LAYER_NORM"], exact=True)


def test_statistics_outputs_refused():
    """A LayerNormalization whose Mean output is used cannot run: the error names it."""
    model = conv_layer_norm([1, 3, 4, 4], -1)
    node = model.graph.node[1]
    node.output.extend(["mean"])
    model.graph.output.extend([helper.make_tensor_value_info("mean", TensorProto.FLOAT, None)])
    data = quantized(model, feeds([1, 3, 4, 4]), **MODES["qdq-s8s8"])
    with pytest.raises(qnnweb.UnsupportedModelError, match="Mean / InvStdDev"):
        qnnweb.load(data)


def test_gamma_dequantized_per_axis():
    """gamma and beta as int8 and int32 constants behind DequantizeLinear, gamma per axis (one scale per
    element): dequantized as onnxruntime's DequantizeLinear, (q - zero point) * scale in float32."""
    c = 12
    init = [numpy_helper.from_array(np.float32(0.04), "xs"), numpy_helper.from_array(np.int8(3), "xz"),
            numpy_helper.from_array(np.float32(0.03), "ys"), numpy_helper.from_array(np.int8(-7), "yz"),
            numpy_helper.from_array(RNG.integers(-127, 128, c).astype(np.int8), "gq"),
            numpy_helper.from_array(RNG.uniform(0.005, 0.02, c).astype(np.float32), "gs"),
            numpy_helper.from_array(RNG.integers(-5, 6, c).astype(np.int8), "gz"),
            numpy_helper.from_array(RNG.integers(-3000, 3000, c).astype(np.int32), "bq"),
            numpy_helper.from_array(np.float32(1e-4), "bs")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("DequantizeLinear", ["gq", "gs", "gz"], ["g"], axis=0),
             helper.make_node("DequantizeLinear", ["bq", "bs"], ["b"]),
             helper.make_node("LayerNormalization", ["xf", "g", "b"], ["yf"], axis=-1, epsilon=1e-5),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.INT8, [3, 4, c])],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, [3, 4, c])], init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    data = model.SerializeToString()
    x = RNG.integers(-128, 128, (3, 4, c)).astype(np.int8)
    want = ReferenceSession(data).run({"x": x})[0]
    for variant in qnnweb.VARIANTS:
        np.testing.assert_array_equal(qnnweb.load(data, variant=variant).run(x)[0], want, err_msg=variant)
