"""SOFTMAX over the innermost dimension: within 1 of a float64 softmax, quantized."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb_dev.reference import int8 as ref
from qnnweb_dev.reference.onnxruntime_session import session_options


def check_softmax(variant, x, x_scale, x_zp, y_scale, y_zp, beta):
    got = H.softmax(variant, x, x_scale, x_zp, y_scale, y_zp, beta)
    expected = ref.softmax(x, x_scale, y_scale, y_zp, beta)
    assert got.shape == expected.shape
    diff = np.abs(got.astype(np.int32) - expected)
    assert diff.max(initial=0) <= 1, f"max difference {diff.max()} at {np.unravel_index(diff.argmax(), diff.shape)}"


@st.composite
def softmax_cases(draw):
    columns = draw(st.one_of(st.integers(1, 40), st.sampled_from([100, 255, 1000, 1001])))
    lead = draw(st.sampled_from([(), (1,), (3,), (2, 5)]))
    rows = max(1, min(int(np.prod(lead, dtype=np.int64)) if lead else 1, 20_000 // columns))
    shape = (lead[:-1] + (rows,) if lead else ()) + (columns,)
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, shape, draw(H.data_kinds))
    if draw(st.booleans()):
        y_scale, y_zp = H.f32(1 / 256), -128        # TFLite's fixed int8 softmax output quantization
    else:
        y_scale, y_zp = draw(H.log_uniform(-10, -4)), draw(H.zero_points)
    return dict(x=x, x_scale=draw(H.log_uniform(-8, 1)), x_zp=draw(H.zero_points), y_scale=y_scale, y_zp=y_zp,
                beta=draw(st.sampled_from([1.0, 1.0, 0.5, 2.0, 0.1])))


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(300))
@given(case=softmax_cases())
def test_softmax_close_to_float(variant, case):
    check_softmax(variant, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_softmax_edge_rows(variant):
    """One column (p = 1), all-equal rows, one hot, the full int8 range in one row."""
    for x in [np.array([[5], [-128], [127]], np.int8), np.full((2, 10), 3, np.int8),
              np.array([[127] + [-128] * 9], np.int8), np.arange(-128, 128, dtype=np.int8).reshape(1, 256)]:
        for x_scale in (H.f32(1 / 16), H.f32(1.0), H.f32(0.004)):
            check_softmax(variant, x, x_scale, 0, H.f32(1 / 256), -128, 1.0)


# ---------------------------------------------------------------------- onnxruntime's arithmetic

@st.composite
def onnx_softmax_cases(draw):
    columns = draw(st.one_of(st.integers(1, 40), st.sampled_from([16, 32, 33, 100, 1000])))
    rows = draw(st.integers(1, max(1, min(8, 4000 // columns))))
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, (rows, columns), draw(H.data_kinds))
    kind = draw(st.sampled_from(["u8", "s8", "sym", "other"]))
    # onnxruntime's quantizer gives Softmax outputs [0, 1]: 1/255 with zp 0 (uint8, here -128) or -128 (int8)
    y_scale, y_zp = {"u8": (H.f32(1 / 255), -128), "s8": (H.f32(1 / 255), -128), "sym": (H.f32(1 / 127), 0),
                     "other": (draw(H.log_uniform(-10, -4)), draw(H.zero_points))}[kind]
    return dict(x=x, x_scale=draw(H.log_uniform(-8, 1)), x_zp=draw(H.zero_points), y_scale=y_scale, y_zp=y_zp)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=onnx_softmax_cases())
def test_softmax_onnx_arithmetic(variant, case):
    c = case
    got = H.softmax(variant, c["x"], c["x_scale"], c["x_zp"], c["y_scale"], c["y_zp"], fmt="onnx")
    np.testing.assert_array_equal(got, ref.softmax_onnxruntime(c["x"], c["x_scale"], c["y_scale"], c["y_zp"]))


def onnxruntime_softmax(x, x_scale, x_zp, y_scale, y_zp, unsigned=False):
    """onnxruntime's CPU provider on DequantizeLinear -> Softmax -> QuantizeLinear (fused into
    QLinearSoftmax), int8, or uint8 with every value and zero point 128 higher."""
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    shift, dtype, onnx_type = (128, np.uint8, TensorProto.UINT8) if unsigned else (0, np.int8, TensorProto.INT8)
    inits = [numpy_helper.from_array(np.array(x_scale, np.float32), "xs"),
             numpy_helper.from_array(np.array(x_zp + shift, dtype), "xz"),
             numpy_helper.from_array(np.array(y_scale, np.float32), "ys"),
             numpy_helper.from_array(np.array(y_zp + shift, dtype), "yz")]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("Softmax", ["xf"], ["yf"], axis=-1),
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    shape = list(x.shape)
    graph = helper.make_graph(nodes, "softmax", [helper.make_tensor_value_info("x", onnx_type, shape)],
                              [helper.make_tensor_value_info("y", onnx_type, shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), session_options(),
                                           providers=["CPUExecutionProvider"])
    (theirs,) = session.run(None, {"x": (x.astype(np.int32) + shift).astype(dtype)})
    return (theirs.astype(np.int32) - shift).astype(np.int8)


@settings(max_examples=H.examples(80), deadline=None)
@given(case=onnx_softmax_cases(), unsigned=st.booleans())
def test_softmax_onnx_reference_is_onnxruntime(case, unsigned):
    """The reference is bit-exact with onnxruntime's CPU provider, int8 and uint8."""
    c = case
    theirs = onnxruntime_softmax(c["x"], c["x_scale"], c["x_zp"], c["y_scale"], c["y_zp"], unsigned)
    np.testing.assert_array_equal(theirs, ref.softmax_onnxruntime(c["x"], c["x_scale"], c["y_scale"], c["y_zp"]))


# Exact halves: n equal maxima where floor(1 / y_scale) / n ends in .5 (difftest s20261221-c359: four
# with 1/255 give 63.5, onnxruntime 64). A float32 reciprocal or sum there lands on either side.
TIES = [(4, 1 / 255), (16, 1 / 248.5), (8, 1 / 252.5), (24, 1 / 252.5), (32, 1 / 240.5), (2, 1 / 255), (14, 1 / 133.5)]


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("columns, y_scale", TIES)
def test_softmax_onnx_exact_halves(variant, columns, y_scale):
    y_scale = H.f32(y_scale)
    rng = np.random.default_rng(columns)
    x = rng.integers(-128, 128, (6, columns), dtype=np.int8)
    x[:4] = x[:4, :1]  # rows of equal values: every probability exactly 1 / columns
    for x_scale in (H.f32(0.05), H.f32(0.2386101484298706)):
        theirs = onnxruntime_softmax(x, x_scale, 0, y_scale, -128, unsigned=True)
        np.testing.assert_array_equal(H.softmax(variant, x, x_scale, 0, y_scale, -128, fmt="onnx"), theirs)
