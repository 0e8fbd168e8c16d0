"""The float32 and integer ops a dynamically quantized text encoder needs beside its int8 products:
BATCH_MATMUL_F32 (attention, each multiply-add fused as MLAS's FMA SGEMM), float32 SOFTMAX (MLAS's FMA3
softmax: its sum-exp kernel, eight-lane sum), EMBEDDING_LOOKUP (token embeddings by int64 / int32 ids),
CAST (an integer mask to float32) and the selections of ELEMENT_F32 (Where on a mask). Bit-exact, every
variant and thread count, with the numpy / Python references (qnnweb.numerics.float32.fma32,
qnnweb.numerics.mlas_fma3.mlas_softmax), and with onnxruntime's CPU kernels where they compute the same on
every x86-64 machine with FMA (MatMul with depths up to 64; Softmax within its lanes' rounding)."""

import dataclasses

import numpy as np
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import harness as H
import qnnweb
from qnnweb.model import Model, compile_graph
from qnnweb.numerics.float32 import fma32
from qnnweb.numerics.mlas_fma3 import mlas_softmax

F = np.float32


def run_onnx_op(node, inputs, output_shape):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(x.shape))
                                            for n, x in inputs.items()],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(output_shape))])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, inputs)[0]


def fused_matmul(a, b):
    """Y = A B, each output's products fused into it in depth order from 0 (numpy broadcasting of batches)."""
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    a, b = np.broadcast_to(a, batch + a.shape[-2:]), np.broadcast_to(b, batch + b.shape[-2:])
    y = np.zeros(batch + (a.shape[-2], b.shape[-1]), F)
    for index in np.ndindex(*y.shape):
        *lead, m, n = index
        acc = 0.0
        for k in range(a.shape[-1]):
            acc = fma32(float(a[(*lead, m, k)]), float(b[(*lead, k, n)]), acc)
        y[index] = acc
    return y


def matmul_graph(a_shape, b_shape):
    g = H.GraphBuilder()
    a, b = g.input(a_shape, "float32"), g.input(b_shape, "float32")
    batch = np.broadcast_shapes(tuple(a_shape[:-2]), tuple(b_shape[:-2]))
    y = g.output(list(batch) + [a_shape[-2], b_shape[-1]], "float32")
    g.op("BATCH_MATMUL", [a, b], [y], adj_x=False, adj_y=False, activation="NONE")
    return g


@st.composite
def matmul_cases(draw):
    """A [.., M, K] and B [.., K, N] with broadcast batch dimensions; N crossing the 8- and 4-column tiles."""
    m, k, n = draw(st.integers(1, 5)), draw(st.integers(1, 40)), draw(st.integers(1, 21))
    batch_a = draw(st.sampled_from([[], [3], [2, 3], [1, 3], [2, 1]]))
    batch_b = draw(st.sampled_from([[], [3], [1, 3], [2, 3]]))
    try:
        np.broadcast_shapes(tuple(batch_a), tuple(batch_b))
    except ValueError:
        batch_b = []
    rng = np.random.default_rng(draw(H.seeds))
    scale = 10.0 ** rng.uniform(-3, 3)
    return (rng.standard_normal(batch_a + [m, k]) * scale).astype(F), rng.standard_normal(batch_b + [k, n]).astype(F)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(25), deadline=None)
@given(case=matmul_cases())
def test_batch_matmul_f32_fuses_each_multiply_add(variant, case):
    a, b = case
    got = H.run(matmul_graph(list(a.shape), list(b.shape)), variant, a, b, fmt="onnx")[0]
    np.testing.assert_array_equal(got.view(np.int32), fused_matmul(a, b).view(np.int32))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_batch_matmul_f32_matches_onnxruntime(variant):
    """Attention's shapes ([1, heads, tokens, head_dim] x [1, heads, head_dim, tokens], then by V): bit-exact
    with onnxruntime's MatMul on an x86-64 machine with FMA, and the double rounding the emulation guards
    against (sums on a float32 midpoint) exercised by values on a coarse grid."""
    rng = np.random.default_rng(7)
    q = (rng.integers(-64, 64, (1, 4, 19, 16)) / 64).astype(F)
    k = (rng.standard_normal((1, 4, 16, 19)) * 3).astype(F)
    for a, b in ((q, k), (rng.random((1, 4, 19, 19)).astype(F), rng.standard_normal((1, 4, 19, 16)).astype(F))):
        want = run_onnx_op(helper.make_node("MatMul", ["a", "b"], ["y"]), {"a": a, "b": b},
                           a.shape[:-1] + b.shape[-1:])
        got = H.run(matmul_graph(list(a.shape), list(b.shape)), variant, a, b, fmt="onnx")[0]
        np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
        np.testing.assert_array_equal(got.view(np.int32), fused_matmul(a, b).view(np.int32))


def softmax_graph(shape):
    g = H.GraphBuilder()
    x = g.input(shape, "float32")
    y = g.output(shape, "float32")
    g.op("SOFTMAX", [x], [y], beta=1.0)
    return g


@st.composite
def softmax_rows(draw):
    """float32 [rows, columns]: scores of attention, with masked columns (-inf or float32's lowest) and rows
    long enough to fill the 24-, 8- and partial vectors of MLAS's kernel."""
    rows, columns = draw(st.integers(1, 6)), draw(st.integers(1, 70))
    rng = np.random.default_rng(draw(H.seeds))
    x = (rng.standard_normal((rows, columns)) * 10.0 ** rng.uniform(-1, 1.5)).astype(F)
    mask = draw(st.sampled_from([None, -np.inf, np.finfo(F).min]))
    if mask is not None:
        x[:, rng.random(columns) < 0.3] = mask
    return x


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(30), deadline=None)
@given(x=softmax_rows())
def test_float_softmax_is_mlas_fma3(variant, x):
    got = H.run(softmax_graph(list(x.shape)), variant, x, fmt="onnx")[0]
    want = np.array([mlas_softmax([float(v) for v in row]) for row in x], F)
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))
    # onnxruntime itself: the same where it runs the FMA3 kernels (AVX2); AVX-512 machines sum in 16 lanes
    np.testing.assert_allclose(got, run_onnx_op(helper.make_node("Softmax", ["x"], ["y"], axis=-1), {"x": x}, x.shape),
                               rtol=1e-6, atol=1e-30)


def embedding_graph(ids_shape, ids_dtype, table):
    g = H.GraphBuilder()
    ids = g.input(ids_shape, ids_dtype)
    dtype = str(table.dtype)
    scale = (0.05, 3) if dtype == "int8" else (None, None)
    t = g.constant(table, dtype, *scale)
    y = g.output(list(ids_shape) + list(table.shape[1:]), dtype, *scale)
    g.op("EMBEDDING_LOOKUP", [ids, t], [y])
    return g


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("ids_dtype", ["int64", "int32"])
@pytest.mark.parametrize("table_dtype", ["int8", "float32"])
def test_embedding_lookup_picks_rows(variant, ids_dtype, table_dtype):
    """Rows by id, negative ids from the end; the hosts refuse an id outside the table before the run, and the
    kernel itself, given one (the check lifted), writes a row of zeros rather than read outside the table."""
    rng = np.random.default_rng(3)
    table = (rng.integers(-128, 128, (50, 12)) if table_dtype == "int8" else rng.standard_normal((50, 12))).astype(table_dtype)
    ids = np.array([[0, 49, -1, -50, 7]], ids_dtype)
    got = H.run(embedding_graph(ids.shape, ids_dtype, table), variant, ids, fmt="onnx")[0]
    np.testing.assert_array_equal(got, table[ids])
    outside = np.array([[3, 50, -51, 2 ** 31 - 1 if ids_dtype == "int32" else 2 ** 40]], ids_dtype)
    graph = embedding_graph(outside.shape, ids_dtype, table).graph("onnx")
    with Model(compile_graph(graph), variant, graph=graph) as model:
        with pytest.raises(ValueError, match="input 't0': id -51 is outside the embedding table's 50 rows"):
            model.run(outside)
        model.inputs[0].index_rows = None
        got = model.run(outside)[0]
    np.testing.assert_array_equal(got[0, 0], table[3])
    assert not got[0, 1:].any()


def test_embedding_lookup_refuses_malformed_ops():
    """A crafted file's EMBEDDING_LOOKUP (TFLite has the op too) without its table, or whose output is quantized
    otherwise than the table: refused by name (the fuzz campaign's escapes: an IndexError in the lowering)."""
    g = H.GraphBuilder()
    ids, y = g.input([1, 4], "int32"), g.output([1, 4, 3], "int8", 0.1, 0)
    g.op("EMBEDDING_LOOKUP", [ids], [y])
    with pytest.raises(qnnweb.UnsupportedModelError, match="EMBEDDING_LOOKUP"):
        compile_graph(g.graph("tflite"))
    g = embedding_graph([1, 4], "int32", np.zeros((5, 3), np.int8))
    g.tensors[g.outputs[0]] = dataclasses.replace(g.tensors[g.outputs[0]], scale=(0.5,))
    with pytest.raises(qnnweb.UnsupportedModelError, match="quantized otherwise than the table"):
        compile_graph(g.graph("tflite"))


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("dtype", ["int64", "int32"])
def test_cast_of_integers_rounds_as_c(variant, dtype):
    info = np.iinfo(dtype)
    x = np.array([0, 1, -1, 16777217, -16777219, 2 ** 30 + 65, info.max, info.min, 123456789], dtype)
    g = H.GraphBuilder()
    xi, yi = g.input(x.shape, dtype), g.output(x.shape, "float32")
    g.op("CAST", [xi], [yi])
    got = H.run(g, variant, x, fmt="onnx")[0]
    np.testing.assert_array_equal(got, x.astype(F))


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("function, value, otherwise, expected", [
    ("NONZERO_TO", -3.4028235e38, 0.0, lambda x: np.where(x != 0, F(-3.4028235e38), x)),
    ("ZERO_TO", 7.5, 0.0, lambda x: np.where(x != 0, x, F(7.5))),
    ("SELECT", 0.0, -np.inf, lambda x: np.where(x != 0, F(0.0), F(-np.inf))),
    ("NAN_TO", 0.0, 0.0, lambda x: np.where(np.isnan(x), F(0.0), x)),
])
def test_selections(variant, function, value, otherwise, expected):
    """Where on a tensor's truth (NaN is true) or on IsNaN, constants infinite too."""
    x = np.array([0.0, -0.0, 1.0, -2.5, np.nan, np.inf, -np.inf, 1e-45], F)
    g = H.GraphBuilder()
    xi, yi = g.input(x.shape, "float32"), g.output(x.shape, "float32")
    g.op("ELEMENT_F32", [xi], [yi], function=function, options={"value": value, "otherwise": otherwise})
    got = H.run(g, variant, x, fmt="onnx")[0]
    np.testing.assert_array_equal(got.view(np.int32), expected(x).astype(F).view(np.int32))
