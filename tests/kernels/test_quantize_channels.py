"""Per-axis (per-channel) QUANTIZE float32 -> int8 and DEQUANTIZE int8 -> float32: every variant
bit-exact against the reference; the ONNX importer allows them only at a model's edges."""

import numpy as np
import onnx
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import harness as H
import qnnweb
from qnnweb_dev.reference import int8 as ref


def quantize_per_axis(variant, x, scales, zero_points, axis, out_dtype="int8"):
    g = H.GraphBuilder()
    xi = g.input(x.shape, "float32")
    yi = g.tensor(x.shape, "int8", scales, zero_points, quantized_dimension=axis)
    outputs = [yi]
    g.op("QUANTIZE", [xi], [yi])
    if out_dtype == "uint8":
        ui = g.tensor(x.shape, "uint8", scales, np.asarray(zero_points) + 128, quantized_dimension=axis)
        g.op("QUANTIZE", [yi], [ui])
        outputs = [ui]
    g.outputs = outputs
    return H.run(g, variant, np.ascontiguousarray(x, dtype=np.float32))[0]


def dequantize_per_axis(variant, x, scales, zero_points, axis):
    g = H.GraphBuilder()
    xi = g.input(x.shape, "int8", scales, zero_points)
    g.tensors[xi].quantized_dimension = axis
    yi = g.output(x.shape, "float32")
    g.op("DEQUANTIZE", [xi], [yi])
    return H.run(g, variant, x)[0]


@st.composite
def per_axis_cases(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.lists(st.integers(1, 9), min_size=rank, max_size=rank)))
    axis = draw(st.integers(0, rank - 1))
    rng = np.random.default_rng(draw(H.seeds))
    channels = shape[axis]
    scales = [H.f32(s) for s in 2.0 ** rng.uniform(-12, 4, size=channels)]
    zero_points = [int(z) for z in rng.integers(-128, 128, size=channels)]
    q = rng.uniform(-300, 300, size=shape)
    if draw(st.booleans()):   # ties: round half to even decides
        q = np.floor(q) + 0.5
    x = (q * ref.channel_view(scales, shape, axis)).astype(np.float32)
    return x, scales, zero_points, axis, rng


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(80))
@given(case=per_axis_cases())
def test_quantize_dequantize_per_axis_match_reference(variant, case):
    x, scales, zero_points, axis, rng = case
    if len(scales) == 1:  # one channel is a per-tensor QUANTIZE, which LiteRT's XNNPACK kernel runs
        expected = ref.quantize_litert(x, scales[0], zero_points[0])
    else:
        expected = ref.quantize_per_axis(x, scales, zero_points, axis)
    np.testing.assert_array_equal(quantize_per_axis(variant, x, scales, zero_points, axis), expected)
    uint8 = quantize_per_axis(variant, x, scales, zero_points, axis, "uint8")
    np.testing.assert_array_equal(uint8, (expected.view(np.uint8) ^ 0x80))
    q = H.int8_array(rng, x.shape)
    got = dequantize_per_axis(variant, q, scales, zero_points, axis)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, ref.dequantize_per_axis(q, scales, zero_points, axis))


def test_per_axis_tensor_cannot_feed_int8_ops():
    g = H.GraphBuilder()
    xi = g.input((1, 2, 3), "float32")
    qi = g.tensor((1, 2, 3), "int8", (0.5, 0.25), (1, 2), quantized_dimension=1)
    g.op("QUANTIZE", [xi], [qi])
    bi = g.input((1, 2, 3), "int8", 0.5, 0)
    yi = g.output((1, 2, 3), "int8", 0.5, 0)
    g.op("ADD", [qi, bi], [yi])
    with pytest.raises(qnnweb.UnsupportedModelError, match="per tensor"):
        H.run(g, "scalar", np.zeros((1, 2, 3), np.float32), np.zeros((1, 2, 3), np.int8))


# ----------------------------------------------------------------------------- ONNX importer

def onnx_model(nodes, inputs, outputs, initializers):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)]).SerializeToString()


def test_onnx_per_axis_round_trip_in_nchw():
    """Q (axis 1) of a float NCHW input, then DQ into a model output: ONNX layout, no transposition."""
    scales = np.array([0.5, 0.25, 2.0], np.float32)
    zero_points = np.array([0, 100, 255], np.uint8)
    model = onnx_model(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
         helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=1)],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4, 5])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4, 5]),
         helper.make_tensor_value_info("q", TensorProto.UINT8, [2, 3, 4, 5])],
        [numpy_helper.from_array(scales, "s"), numpy_helper.from_array(zero_points, "z")])
    x = np.random.default_rng(0).uniform(-200, 200, size=(2, 3, 4, 5)).astype(np.float32)
    q = ref.quantize_per_axis(x, scales, zero_points.astype(np.int32) - 128, 1).view(np.uint8) ^ 0x80
    y = ref.dequantize_per_axis((q ^ 0x80).view(np.int8), scales, zero_points.astype(np.int32) - 128, 1)
    for variant in H.VARIANTS:
        got_y, got_q = qnnweb.load(model, variant=variant).run(x)
        np.testing.assert_array_equal(got_q, q)
        np.testing.assert_array_equal(got_y, y)


def test_onnx_per_axis_activation_feeding_an_int8_op_is_unsupported():
    scales = np.array([0.5, 0.25], np.float32)
    zero_points = np.array([1, 2], np.int8)
    model = onnx_model(
        [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=1),
         helper.make_node("QLinearSigmoid", ["q", "t", "u", "t", "u"], ["y"], domain="com.microsoft")],
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 3])],
        [helper.make_tensor_value_info("y", TensorProto.INT8, [1, 2, 3])],
        [numpy_helper.from_array(scales, "s"), numpy_helper.from_array(zero_points, "z"),
         numpy_helper.from_array(np.array(0.5, np.float32), "t"), numpy_helper.from_array(np.array(1, np.int8), "u")])
    with pytest.raises(qnnweb.UnsupportedModelError, match="quantized per axis"):
        qnnweb.load(model, variant="scalar")
