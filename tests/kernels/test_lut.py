"""Unary ops through the 256-entry table (lut record): LOGISTIC, TANH, HARD_SWISH, RELU, RELU6,
RELU_N1_TO_1, LEAKY_RELU, CLIP, and QUANTIZE between uint8 and int8; uint8 model inputs and outputs.
Tables: the float64 function of the dequantized input, rounded half to even (reference.int8.unary_table).
HARD_SWISH runs as an ONNX graph's here: a TFLite graph's follows TFLite's int16 fixed-point kernel,
tested against LiteRT in tests/tflite/test_tflite_int8_arithmetic.py."""

import array
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb.model import Model
from qnnweb_dev.reference import int8 as ref


def _logistic(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


FUNCTIONS = {
    "LOGISTIC": (_logistic, {}),
    "TANH": (math.tanh, {}),
    "HARD_SWISH": (lambda x: x * min(max(x + 3.0, 0.0), 6.0) / 6.0, {}),
    "RELU": (lambda x: max(x, 0.0), {}),
    "RELU6": (lambda x: min(max(x, 0.0), 6.0), {}),
    "RELU_N1_TO_1": (lambda x: min(max(x, -1.0), 1.0), {}),
    "LEAKY_RELU": (lambda x: x if x >= 0 else 0.1 * x, {"alpha": 0.1}),
    "CLIP": (lambda x: min(max(x, -0.5), 2.0), {"min": -0.5, "max": 2.0}),
}


@st.composite
def unary_cases(draw):
    op_type = draw(st.sampled_from(sorted(FUNCTIONS)))
    x_dtype, y_dtype = draw(st.sampled_from([("int8", "int8")] * 3 + [("uint8", "uint8"), ("int8", "uint8")]))
    shape = draw(st.one_of(st.tuples(st.integers(1, 300)), st.tuples(st.integers(1, 4), st.integers(1, 9),
                                                                      st.integers(1, 9), H.channels)))
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, shape, draw(H.data_kinds))
    if x_dtype == "uint8":
        x = x.view(np.uint8)
    x_scale, y_scale = draw(H.log_uniform(-8, 0)), draw(H.log_uniform(-9, 0))
    zp = {"int8": H.zero_points, "uint8": st.integers(0, 255)}
    return dict(op_type=op_type, x=x, x_scale=x_scale, x_zp=draw(zp[x_dtype]), y_scale=y_scale,
                y_zp=draw(zp[y_dtype]), x_dtype=x_dtype, y_dtype=y_dtype)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=unary_cases())
def test_unary_matches_reference(variant, case):
    function, options = FUNCTIONS[case["op_type"]]
    table = ref.unary_table(function, case["x_dtype"], case["x_scale"], case["x_zp"], case["y_dtype"],
                            case["y_scale"], case["y_zp"])
    fmt = "onnx" if case["op_type"] == "HARD_SWISH" else "tflite"
    got = H.unary(variant, **case, **options, fmt=fmt)
    assert got.dtype == np.dtype(case["y_dtype"])
    np.testing.assert_array_equal(got, ref.lut(case["x"], table))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_logistic_every_value(variant):
    """All 256 inputs, 16-byte SIMD blocks plus a tail; TFLite's LOGISTIC output quantization 1/256, -128."""
    x = np.arange(-128, 128, dtype=np.int8)
    x = np.concatenate([x, x[::-1], x[:7]])
    got = H.unary(variant, "LOGISTIC", x, H.f32(0.05), 3, 1.0 / 256, -128)
    table = ref.unary_table(_logistic, "int8", H.f32(0.05), 3, "int8", 1.0 / 256, -128)
    np.testing.assert_array_equal(got, ref.lut(x, table))
    assert got[0] == -128 and got[255] == 127


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("direction", ["uint8->int8", "int8->uint8"])
def test_quantize_uint8_int8_same_scale_is_xor(variant, direction):
    x_dtype, y_dtype = direction.split("->")
    x = np.arange(256).astype(np.uint8).view(x_dtype)
    x_zp, y_zp = (130, 2) if x_dtype == "uint8" else (2, 130)
    got = H.unary(variant, "QUANTIZE", x, H.f32(0.02), x_zp, H.f32(0.02), y_zp, x_dtype, y_dtype)
    np.testing.assert_array_equal(got.view(np.uint8), x.view(np.uint8) ^ 0x80)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_quantize_uint8_int8_other_scale(variant):
    x = np.arange(256).astype(np.uint8)
    got = H.unary(variant, "QUANTIZE", x, H.f32(0.02), 117, H.f32(0.035), -9, "uint8", "int8")
    np.testing.assert_array_equal(got, ref.requantize_table("uint8", H.f32(0.02), 117, "int8", H.f32(0.035), -9))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_uint8_model_inputs_and_outputs(variant):
    """uint8 graph input -> int8 -> RELU6 -> uint8 graph output; numpy uint8, bytes and array('B')."""
    g = H.GraphBuilder()
    xi = g.input((1, 4, 4, 3), "uint8", 0.05, 128)
    hi = g.tensor((1, 4, 4, 3), "int8", 0.05, 0)
    ri = g.tensor((1, 4, 4, 3), "int8", 0.05, 0)
    yi = g.output((1, 4, 4, 3), "uint8", 0.05, 128)
    g.op("QUANTIZE", [xi], [hi])
    g.op("RELU6", [hi], [ri])
    g.op("QUANTIZE", [ri], [yi])
    model = Model.from_graph(g.graph(), variant)
    assert model.inputs[0].dtype == "uint8" and model.outputs[0].dtype == "uint8"
    assert (model.inputs[0].scale, model.inputs[0].zero_point) == (0.05, 128)
    x = np.arange(48, dtype=np.uint8).reshape(1, 4, 4, 3) * 5
    expected = np.clip(x, 128, 128 + 120).astype(np.uint8)
    for feed in (x, x.tobytes(), array.array("B", x.tobytes()), x.ravel()):
        (y,) = model.run(feed)
        assert y.dtype == np.uint8 and y.shape == (1, 4, 4, 3)
        np.testing.assert_array_equal(y, expected)
    with pytest.raises(ValueError, match="expected dtype uint8, got int8"):
        model.run(x.view(np.int8))
    with pytest.raises(ValueError, match="shape"):
        model.run(np.zeros(47, np.uint8))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_large_table_lookups_split_across_threads(variant):
    """A table op over 100,003 elements: tasks of whole 64-element runs plus a short last one (H.run
    compares with 2 or 3 threads)."""
    x = np.random.default_rng(14).integers(-128, 128, (1, 7, 7, 2041), dtype=np.int8)
    got = H.unary(variant, "LOGISTIC", x, H.f32(0.05), 3, 1.0 / 256, -128)
    table = ref.unary_table(_logistic, "int8", H.f32(0.05), 3, "int8", 1.0 / 256, -128)
    np.testing.assert_array_equal(got, ref.lut(x, table))


@st.composite
def prelu_cases(draw):
    channels = draw(st.one_of(H.channels, st.integers(2, 70)))
    pixels = draw(st.integers(1, 300))
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, (1, pixels, 1, channels), draw(H.data_kinds))
    alpha = rng.integers(-128, 128, channels).astype(np.int8)
    scales = [draw(H.log_uniform(-8, 0)) for _ in range(3)]
    zero_points = [draw(H.zero_points) for _ in range(3)]
    return x, alpha, scales, zero_points


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(60))
@given(case=prelu_cases())
def test_prelu_per_channel_tables(variant, case):
    """lut_channels (PRELU with a slope per channel): each channel through its own table, as TFLite's
    reference kernel computes it (reference.int8.prelu)."""
    x, alpha, (x_scale, y_scale, a_scale), (x_zp, y_zp, a_zp) = case
    g = H.GraphBuilder()
    xi = g.input(x.shape, "int8", x_scale, x_zp)
    ai = g.constant(alpha, "int8", a_scale, a_zp)
    yi = g.output(x.shape, "int8", y_scale, y_zp)
    g.op("PRELU", [xi, ai], [yi])
    expected = ref.prelu(x, x_scale, x_zp, alpha, a_scale, a_zp, y_scale, y_zp)
    np.testing.assert_array_equal(H.run(g, variant, x)[0], expected)
