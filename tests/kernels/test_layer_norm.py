"""LAYER_NORM: onnxruntime 1.32's float LayerNormalization (arithmetic "layer") and InstanceNormalization
("instance") on dequantized int8 rows, quantized again. Bit-exact, every variant and thread count, with the
numpy reference (qnnweb_dev.reference.int8.norm), and the reference bit-exact with onnxruntime's CPU
provider on DequantizeLinear -> LayerNormalization / InstanceNormalization -> QuantizeLinear."""

import numpy as np
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import harness as H
from qnnweb_dev.reference import int8 as ref
from qnnweb_dev.reference.onnxruntime_session import session_options

# row lengths around Eigen's packets (4 lanes, blocks of 8) and not multiples of them, where the rows'
# 16-byte alignment in onnxruntime's buffer moves from row to row
COLUMNS = st.one_of(st.integers(1, 40), st.sampled_from([64, 67, 96, 130, 197, 768]))


@st.composite
def norm_cases(draw, arithmetic):
    columns = draw(COLUMNS)
    rng = np.random.default_rng(draw(H.seeds))
    if arithmetic == "layer":
        shape, parameters = (draw(st.integers(1, max(1, 600 // columns))), columns), columns
    else:
        batch, channels = draw(st.integers(1, 3)), draw(st.integers(1, 5))
        shape, parameters = (batch, channels, columns), channels
    x = H.int8_array(rng, shape, draw(H.data_kinds))
    gamma = rng.normal(1.0, 0.5, parameters).astype(np.float32)
    beta = rng.normal(0.0, 0.5, parameters).astype(np.float32) if draw(st.booleans()) else np.zeros(parameters, np.float32)
    return dict(x=x, x_scale=draw(H.log_uniform(-10, 2)), x_zp=draw(H.zero_points), gamma=gamma, beta=beta,
                epsilon=H.f32(draw(st.sampled_from([1e-5, 1e-6, 1e-12, 0.1]))),
                y_scale=draw(H.log_uniform(-8, -2)), y_zp=draw(H.zero_points))


def reference(case, arithmetic):
    c = dict(case)
    if arithmetic == "layer":
        return ref.layer_norm_onnxruntime(**c)
    x = c.pop("x")
    return ref.instance_norm_onnxruntime(x.reshape(-1, x.shape[-1]), **c).reshape(x.shape)


def onnxruntime_norm(case, arithmetic):
    """onnxruntime's CPU provider on DequantizeLinear -> the norm -> QuantizeLinear, int8."""
    c = case
    x = c["x"]
    inits = [numpy_helper.from_array(np.array(v, dtype), name) for name, v, dtype in (
        ("xs", c["x_scale"], np.float32), ("xz", c["x_zp"], np.int8), ("ys", c["y_scale"], np.float32),
        ("yz", c["y_zp"], np.int8), ("g", c["gamma"], np.float32), ("b", c["beta"], np.float32))]
    norm = (helper.make_node("LayerNormalization", ["xf", "g", "b"], ["yf"], axis=-1, epsilon=c["epsilon"])
            if arithmetic == "layer" else
            helper.make_node("InstanceNormalization", ["xf", "g", "b"], ["yf"], epsilon=c["epsilon"]))
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]), norm,
             helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "norm", [helper.make_tensor_value_info("x", TensorProto.INT8, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, list(x.shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), session_options(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


@pytest.mark.parametrize("arithmetic", ["layer", "instance"])
@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(60), deadline=None)
@given(data=st.data())
def test_layer_norm_matches_reference(variant, arithmetic, data):
    case = data.draw(norm_cases(arithmetic))
    got = H.layer_norm(variant, **case, arithmetic=arithmetic)
    np.testing.assert_array_equal(got, reference(case, arithmetic))


@pytest.mark.parametrize("arithmetic", ["layer", "instance"])
@settings(max_examples=H.examples(80), deadline=None)
@given(data=st.data())
def test_reference_is_onnxruntime(arithmetic, data):
    case = data.draw(norm_cases(arithmetic))
    np.testing.assert_array_equal(reference(case, arithmetic), onnxruntime_norm(case, arithmetic))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_layer_norm_edge_rows(variant):
    """Constant rows (variance 0: epsilon alone divides), the full int8
    range in one row, one column."""
    for x in [np.full((3, 10), 7, np.int8), np.arange(-128, 128, dtype=np.int8).reshape(2, 128),
              np.array([[5], [-128], [127]], np.int8)]:
        for epsilon in (H.f32(1e-5), H.f32(1e-12)):
            case = dict(x=x, x_scale=H.f32(0.05), x_zp=3, gamma=np.linspace(0.5, 2, x.shape[1], dtype=np.float32),
                        beta=np.full(x.shape[1], 0.25, np.float32), epsilon=epsilon, y_scale=H.f32(0.02), y_zp=-5)
            want = onnxruntime_norm(case, "layer")
            np.testing.assert_array_equal(want, reference(case, "layer"))
            np.testing.assert_array_equal(H.layer_norm(variant, **case), want)


@settings(max_examples=H.examples(80), deadline=None)
@given(columns=COLUMNS, rows=st.integers(1, 3), seed=H.seeds, bias=st.booleans(), ties=st.booleans())
def test_float_reference_is_onnxruntime(columns, rows, seed, bias, ties):
    """Before quantization too: the reference's float32 LayerNormalization is onnxruntime's, bit for bit (rows
    of up to 7 and longer ones, with and without bias; values on a coarse grid for equal values and ties)."""
    rng = np.random.default_rng(seed)
    x = rng.normal(rng.normal(0, 3), rng.uniform(0.01, 3), (rows, columns)).astype(np.float32)
    if ties:
        x = np.round(x * 4).astype(np.float32) / np.float32(4)
    gamma = rng.normal(1, 0.5, columns).astype(np.float32)
    beta = rng.normal(0, 0.5, columns).astype(np.float32)
    inits = [numpy_helper.from_array(gamma, "g")] + ([numpy_helper.from_array(beta, "b")] if bias else [])
    node = helper.make_node("LayerNormalization", ["x", "g"] + (["b"] if bias else []), ["y"], axis=-1, epsilon=1e-5)
    graph = helper.make_graph([node], "ln", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, columns])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [rows, columns])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), session_options(),
                                           providers=["CPUExecutionProvider"])
    want = session.run(None, {"x": x})[0]
    got = ref.layer_norm_float(x, gamma, beta if bias else np.zeros(columns, np.float32), np.float32(1e-5), bias)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


# ----------------------------------------------------------------------------- float32 input (float_input)

def float_rows(rng, shape, kind):
    """float32 values of a float op's result: around a random mean, on a coarse grid (equal values, ties),
    with signed zeros, or spanning magnitudes from denormals to 1e15 (finite squares and sums)."""
    if kind == "grid":
        return (np.round(rng.normal(0, 3, shape) * 4) / 4).astype(np.float32)
    if kind == "zeros":
        return rng.choice(np.float32([0.0, -0.0, -0.0, 1e-45, -2.5]), shape).astype(np.float32)
    if kind == "magnitudes":
        return (rng.choice([-1.0, 1.0], shape) * 10.0 ** rng.uniform(-44, 15, shape)).astype(np.float32)
    return rng.normal(rng.normal(0, 3), rng.uniform(0.01, 3), shape).astype(np.float32)


@st.composite
def float_norm_cases(draw, arithmetic):
    """A case of norm_cases with a float32 x (x_scale / x_zp unused) and, half the time, a float32 output
    (y_scale None)."""
    case = draw(norm_cases(arithmetic))
    rng = np.random.default_rng(draw(H.seeds))
    case["x"] = float_rows(rng, case["x"].shape, draw(st.sampled_from(["normal", "grid", "zeros", "magnitudes"])))
    if draw(st.booleans()):
        case["y_scale"] = case["y_zp"] = None
    return case


def float_reference(case, arithmetic):
    x = case["x"]
    if arithmetic == "layer":
        y = ref.layer_norm_float(x, case["gamma"], case["beta"], case["epsilon"])
    else:
        y = ref.instance_norm_float(x.reshape(-1, x.shape[-1]), case["gamma"], case["beta"], case["epsilon"])
    y = y.reshape(x.shape)
    return y if case["y_scale"] is None else ref.quantize_linear(y, case["y_scale"], case["y_zp"])


def onnxruntime_float_norm(case, arithmetic):
    """onnxruntime's CPU provider on the float norm of float32 x, then QuantizeLinear unless y_scale is None."""
    c = case
    x = c["x"]
    inits = [numpy_helper.from_array(np.asarray(c["gamma"], np.float32), "g"),
             numpy_helper.from_array(np.asarray(c["beta"], np.float32), "b")]
    quantized = c["y_scale"] is not None
    norm_output = "yf" if quantized else "y"
    # x times 1 first: the norm reads a buffer onnxruntime allocated (64-byte aligned), as a float op's result
    # is, not the caller's array (Eigen's packets start at the first 16-byte-aligned element)
    inits.append(numpy_helper.from_array(np.array(1, np.float32), "one"))
    nodes = [helper.make_node("Mul", ["x", "one"], ["xf"]),
             helper.make_node("LayerNormalization", ["xf", "g", "b"], [norm_output], axis=-1, epsilon=c["epsilon"])
             if arithmetic == "layer" else
             helper.make_node("InstanceNormalization", ["xf", "g", "b"], [norm_output], epsilon=c["epsilon"])]
    if quantized:
        inits += [numpy_helper.from_array(np.array(c["y_scale"], np.float32), "ys"),
                  numpy_helper.from_array(np.array(c["y_zp"], np.int8), "yz")]
        nodes.append(helper.make_node("QuantizeLinear", ["yf", "ys", "yz"], ["y"]))
    graph = helper.make_graph(nodes, "norm", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.INT8 if quantized else TensorProto.FLOAT,
                                                             list(x.shape))], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), session_options(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def check_float_input(variant, case, arithmetic, want):
    got = H.layer_norm(variant, **case, arithmetic=arithmetic)
    if case["y_scale"] is None:
        H.assert_same_floats(got, want)
    else:
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("arithmetic", ["layer", "instance"])
@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(40), deadline=None)
@given(data=st.data())
def test_float_input_matches_reference(variant, arithmetic, data):
    """A float32 input (another float op's result, e.g. LayerNormalization -> LayerNormalization) read as it
    is: bit-exact with the reference's float norm, float32 or quantized output."""
    case = data.draw(float_norm_cases(arithmetic))
    check_float_input(variant, case, arithmetic, float_reference(case, arithmetic))


@pytest.mark.parametrize("arithmetic", ["layer", "instance"])
@settings(max_examples=H.examples(40), deadline=None)
@given(data=st.data())
def test_float_input_is_onnxruntime(arithmetic, data):
    """The kernel on a float32 input against onnxruntime itself (a float LayerNormalization /
    InstanceNormalization, alone or followed by QuantizeLinear), one variant per example."""
    case = data.draw(float_norm_cases(arithmetic))
    variant = data.draw(st.sampled_from(H.VARIANTS))
    check_float_input(variant, case, arithmetic, onnxruntime_float_norm(case, arithmetic))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_float_input_edge_rows(variant):
    """Constant rows, rows of signed zeros, infinities and NaN (float output: onnxruntime's NaN and
    infinities), one column, Welford's short rows and MLAS's long ones."""
    rows = [np.full((3, 10), 7.25, np.float32), np.float32([[-0.0] * 9, [0.0, -0.0] * 4 + [-0.0]]),
            np.float32([[1.0, np.inf, 2.0, 3.0], [1.0, -np.inf, np.nan, 0.5]]),
            np.float32([[1.0] * 8 + [np.inf]]), np.float32([[5.0], [-0.0], [3e38]]),
            np.float32([[3e38, -3e38, 1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0]])]
    for x in rows:
        for arithmetic in ("layer", "instance"):
            columns = x.shape[1]
            case = dict(x=x if arithmetic == "layer" else x[None], x_scale=1.0, x_zp=0,
                        gamma=np.linspace(0.5, 2, columns if arithmetic == "layer" else x.shape[0], dtype=np.float32),
                        beta=np.full(columns if arithmetic == "layer" else x.shape[0], -0.0, np.float32),
                        epsilon=H.f32(1e-5), y_scale=None, y_zp=None)
            want = onnxruntime_float_norm(case, arithmetic)
            H.assert_same_floats(float_reference(case, arithmetic), want)
            check_float_input(variant, case, arithmetic, want)
