"""QUANTIZE (float32 -> int8), DEQUANTIZE (int8 -> float32) and QUANTIZE int8 -> int8 (requantize)."""

import numpy as np
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import harness as H
from qnnweb_dev.reference import int8 as ref

sizes = st.integers(1, 3000)


@st.composite
def float_inputs(draw):
    scale, zp = draw(H.log_uniform(-12, 4)), draw(H.zero_points)
    rng = np.random.default_rng(draw(H.seeds))
    n = draw(sizes)
    kind = draw(st.sampled_from(["range", "ties", "wide", "special"]))
    if kind == "range":          # the int8 range and a bit beyond
        q = rng.uniform(-300, 300, size=n)
    elif kind == "ties":         # k + 0.5 steps: round half to even decides
        q = rng.integers(-200, 200, size=n) + 0.5
    elif kind == "wide":
        q = rng.standard_normal(n) * 10.0 ** rng.uniform(-3, 6, size=n)
    else:
        q = rng.choice(np.array([0.0, -0.0, 1e30, -1e30, np.inf, -np.inf, 0.5, -0.5, 1.5, 126.5, 127.5, -128.5]),
                       size=n)
    x = (q * scale).astype(np.float32)
    return x, scale, zp


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(300))
@given(case=float_inputs())
def test_quantize_matches_reference(variant, case):
    """TFLite models as LiteRT's default kernels quantize (times the reciprocal), ONNX ones by division."""
    x, scale, zp = case
    np.testing.assert_array_equal(H.quantize(variant, x, scale, zp), ref.quantize_litert(x, scale, zp))
    np.testing.assert_array_equal(H.quantize(variant, x, scale, zp, fmt="onnx"), ref.quantize(x, scale, zp))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_quantize_where_division_and_reciprocal_differ(variant):
    """-7.5499997 / 0.1 = -75.49999 but -7.5499997 * 10 = -75.5: LiteRT gives -76 (tools/bench/op_models.py found it)."""
    x = np.array([-7.5499997] * 17, dtype=np.float32)
    assert H.quantize(variant, x, 0.1, 0)[0] == -76 == ref.quantize_litert(x, 0.1, 0)[0]
    assert H.quantize(variant, x, 0.1, 0, fmt="onnx")[0] == -75 == ref.quantize(x, 0.1, 0)[0]


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_quantize_rounds_half_to_even(variant):
    x = np.array([0.5, 1.5, 2.5, -0.5, -1.5, -2.5, 126.5, -127.5, 1000, -1000], dtype=np.float32)
    got = H.quantize(variant, x, 1.0, 0)
    np.testing.assert_array_equal(got, np.array([0, 2, 2, 0, -2, -2, 126, -128, 127, -128], dtype=np.int8))


@st.composite
def int8_inputs(draw):
    n = draw(sizes)
    rng = np.random.default_rng(draw(H.seeds))
    return H.int8_array(rng, (n,), draw(H.data_kinds)), draw(H.log_uniform(-12, 4)), draw(H.zero_points)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=int8_inputs())
def test_dequantize_matches_reference(variant, case):
    x, scale, zp = case
    got = H.dequantize(variant, x, scale, zp)
    assert got.dtype == np.float32
    np.testing.assert_array_equal(got, ref.dequantize(x, scale, zp))


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(300))
@given(case=int8_inputs(), y_scale_ratio=st.floats(-8, 8), y_zp=H.zero_points)
def test_requantize_matches_reference(variant, case, y_scale_ratio, y_zp):
    x, x_scale, x_zp = case
    y_scale = H.f32(x_scale * 2.0 ** y_scale_ratio)
    np.testing.assert_array_equal(H.requantize(variant, x, x_scale, x_zp, y_scale, y_zp),
                                  ref.requantize(x, x_scale, x_zp, y_scale, y_zp))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_requantize_every_int8_value(variant):
    x = np.arange(-128, 128, dtype=np.int8)
    for x_scale, x_zp, y_scale, y_zp in [(0.1, 0, 0.1, 0), (0.1, 3, 0.2, -3), (0.3, -128, 0.1, 127), (1.0, 0, 2.0, 0)]:
        np.testing.assert_array_equal(H.requantize(variant, x, x_scale, x_zp, y_scale, y_zp),
                                      ref.requantize(x, x_scale, x_zp, y_scale, y_zp))


def test_quantize_nan_same_in_every_variant():
    """NaN has no int8 value; whatever the kernels give, every variant gives the same (and no trap): the zero
    point for TFLite's (XNNPACK's conversion), -128 for ONNX's, as onnxruntime's QuantizeLinear gives (an x / 0
    of 0 in a LayerNorm written out: tiny_vit's zero-padded windows)."""
    x = np.array([np.nan, -np.nan, 1.0, np.nan] * 9, dtype=np.float32)
    for fmt, reference in (("tflite", ref.quantize_litert), ("onnx", ref.quantize)):
        results = {v: H.quantize(v, x, 0.1, 7, fmt=fmt) for v in H.VARIANTS}
        for v in H.VARIANTS:
            np.testing.assert_array_equal(results[v], results[H.VARIANTS[0]], err_msg=v)
            np.testing.assert_array_equal(results[v], reference(x, 0.1, 7), err_msg=v)
    assert (ref.quantize(x, 0.1, 7)[np.isnan(x)] == -128).all()


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_quantize_nan_as_onnxruntime(dtype):
    """onnxruntime's QuantizeLinear of NaN gives the type's lowest value (-128, or 0 for uint8: -128 in its int8
    twin), which the ONNX reference above assumes."""
    kind = TensorProto.INT8 if dtype == np.int8 else TensorProto.UINT8
    graph = helper.make_graph([helper.make_node("QuantizeLinear", ["x", "s", "z"], ["y"])], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [36])],
                              [helper.make_tensor_value_info("y", kind, [36])],
                              [helper.make_tensor("s", TensorProto.FLOAT, [], [0.1]), helper.make_tensor("z", kind, [], [7])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    x = np.array([np.nan, -np.nan, 1.0, np.nan] * 9, dtype=np.float32)
    got = session.run(None, {"x": x})[0]
    assert (got[np.isnan(x)] == np.iinfo(dtype).min).all() and (got[~np.isnan(x)] == 17).all()
