"""REDUCE_F32 (the lowering of a float32 MEAN / SUM over the last axes, option arithmetic "onnxruntime"):
onnxruntime 1.32's float ReduceMean / ReduceSum, Eigen's four-lane sum of each row from its first element
16-byte aligned in onnxruntime's buffer. Bit-exact, every variant and thread count, with the numpy
reference (qnnweb_dev.reference.int8.norm.reduce_onnxruntime, its own emulation of Eigen's order), and
both bit-exact with onnxruntime's CPU provider on values whose sums change with the order."""

import numpy as np
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper

import harness as H
import qnnweb
from qnnweb_dev.reference import int8 as ref
from qnnweb_dev.reference.onnxruntime_session import session_options

F = np.float32
ALIGNMENT = 64   # onnxruntime's CPU allocator's: an intermediate tensor starts there


def float_values(rng, shape, kind):
    """float32 values whose sum depends on its order: magnitudes from 1e-3 to 1e4 with both signs, a large
    offset with small differences, signed zeros (a row of -0.0 sums to -0.0), or small integers (exact)."""
    if kind == "mixed":
        return (rng.uniform(-1, 1, shape) * 10.0 ** rng.uniform(-3, 4, shape)).astype(F)
    if kind == "offset":
        return (1e4 + rng.standard_normal(shape) * 1e-2).astype(F)
    if kind == "zeros":
        return np.where(rng.random(shape) < rng.choice([0.5, 1.0]), F(-0.0), F(0.0)).astype(F)
    return rng.integers(-100, 100, shape).astype(F)


def reduce_graph(shape, axes, keep_dims, op_type="MEAN", arithmetic="onnxruntime"):
    """A one-op graph: float32 ``shape`` reduced over ``axes``."""
    rank = len(shape)
    reduced = {a % rank for a in axes}
    out_shape = ([1 if k in reduced else d for k, d in enumerate(shape)] if keep_dims
                 else [d for k, d in enumerate(shape) if k not in reduced] or [1])
    g = H.GraphBuilder()
    xi = g.input(shape, "float32")
    yi = g.output(out_shape, "float32")
    g.op(op_type, [xi, g.constant(np.array(axes, np.int32), "int32")], [yi], keep_dims=keep_dims,
         arithmetic=arithmetic)
    return g


def run_reduce(variant, x, axes, keep_dims, op_type="MEAN"):
    return H.run(reduce_graph(list(x.shape), axes, keep_dims, op_type), variant, x, fmt="onnx")[0]


def assert_same_bits(got, want):
    got, want = np.asarray(got, F), np.asarray(want, F)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got.view(np.int32), want.view(np.int32))


@st.composite
def reduce_cases(draw):
    """float32 [leading..., reduced...]: 1-3 leading dims, the reduced ones (1 or 2 trailing axes) 1..300 long."""
    columns = draw(st.one_of(st.integers(1, 40), st.integers(1, 300), st.sampled_from([64, 196, 197, 300])))
    rows = draw(st.integers(1, max(1, 900 // columns)))
    lead = [rows] if draw(st.booleans()) else [1, rows]
    split = draw(st.sampled_from([d for d in (1, 2, 3, 4) if columns % d == 0]))
    tail = [columns] if split == 1 or draw(st.booleans()) else [split, columns // split]
    shape = lead + tail
    axes = list(range(len(lead), len(shape)))
    if draw(st.booleans()):
        axes = [a - len(shape) for a in axes]            # negative, as ONNX exports write them
    rng = np.random.default_rng(draw(H.seeds))
    x = float_values(rng, shape, draw(st.sampled_from(["mixed", "mixed", "offset", "zeros", "integers"])))
    return x, axes, draw(st.booleans())


@pytest.mark.parametrize("op_type", ["MEAN", "SUM"])
@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(40))
@given(case=reduce_cases())
def test_reduce_f32_matches_reference(variant, op_type, case):
    x, axes, keep_dims = case
    first = min(a % x.ndim for a in axes)
    rows = x.reshape(int(np.prod(x.shape[:first])), -1)
    want = ref.reduce_onnxruntime(rows, mean=op_type == "MEAN")
    got = run_reduce(variant, x, axes, keep_dims, op_type)
    assert_same_bits(got.reshape(-1), want)


def aligned_copy(x):
    """x in a buffer starting on a 64-byte boundary: onnxruntime reads a model input where numpy put it
    (and Eigen's packets start by that address), an intermediate tensor at its allocator's alignment."""
    buffer = np.empty(x.size + ALIGNMENT // 4, F)
    start = (-buffer.ctypes.data % ALIGNMENT) // 4
    copy = buffer[start:start + x.size].reshape(x.shape)
    copy[...] = x
    assert copy.ctypes.data % ALIGNMENT == 0
    return copy


def onnxruntime_reduce(x, axes, keep_dims, op_type="ReduceMean"):
    """onnxruntime's CPU provider on one float ReduceMean / ReduceSum (opset 13: ReduceSum's axes an input)."""
    inputs, inits = ["x"], []
    if op_type == "ReduceSum":
        inputs.append("axes")
        inits.append(helper.make_tensor("axes", TensorProto.INT64, [len(axes)], axes))
        node = helper.make_node(op_type, inputs, ["y"], keepdims=int(keep_dims))
    else:
        node = helper.make_node(op_type, inputs, ["y"], axes=axes, keepdims=int(keep_dims))
    graph = helper.make_graph([node], "reduce", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), session_options(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {"x": aligned_copy(x)})[0]


# row lengths from the LayerNorms of ViTs (197 tokens, 196 patches), channels (64), short rows without a
# whole packet (3), and lengths where the rows' alignment moves from row to row
ONNXRUNTIME_COLUMNS = [197, 196, 3, 64, 1, 5, 7, 9, 13, 17, 30, 300]


@pytest.mark.parametrize("op_type", ["MEAN", "SUM"])
@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("columns", ONNXRUNTIME_COLUMNS)
def test_reduce_f32_matches_onnxruntime(columns, keep_dims, op_type):
    """Every variant's mean / sum over the last axis is onnxruntime's, bit for bit, on rows whose sums change
    with the order (each row's aligned start differs while 4 does not divide the row length)."""
    rng = np.random.default_rng(columns)
    x = float_values(rng, (2, 7, columns), "mixed")
    want = onnxruntime_reduce(x, [-1], keep_dims, "ReduceMean" if op_type == "MEAN" else "ReduceSum")
    assert_same_bits(ref.reduce_onnxruntime(x.reshape(14, columns), mean=op_type == "MEAN"), want.reshape(-1))
    for variant in H.VARIANTS:
        assert_same_bits(run_reduce(variant, x, [-1], keep_dims, op_type), want)


@pytest.mark.parametrize("shape, axes", [([197], [0]), ([3, 64], [0, 1]), ([1, 197], [-1]), ([2, 3, 13], [1, 2]),
                                         ([4, 1, 9], [-1]), ([4, 9, 1], [1, 2])])
def test_reduce_f32_over_every_axis_or_the_last_ones_matches_onnxruntime(shape, axes):
    """A mean over every axis (onnxruntime's Eigen mean() of the whole tensor) or over several trailing axes
    (one row each, size-1 axes included) is the same row sum."""
    x = float_values(np.random.default_rng(len(shape) * 100 + shape[-1]), shape, "mixed")
    want = onnxruntime_reduce(x, axes, True)
    for variant in H.VARIANTS:
        assert_same_bits(run_reduce(variant, x, axes, True), want)


# a LayerNorm over the channels of an NCHW feature map written out (ConvNeXt's channels_first LayerNorm): small
# shapes (onnxruntime's generic loop), large ones (its FastReduceRK), size-1 axes, several leading axes
LEADING = [([1, 8, 4, 5], [1]), ([1, 300, 2, 2], [1]), ([1, 8, 30, 30], [1]), ([1, 64, 56, 56], [1]),
           ([1, 24, 1, 7], [1]), ([1, 6, 5, 7], [1, 2]), ([9, 40], [0]), ([1, 1, 12, 33], [1, 2])]


@pytest.mark.parametrize("op_type", ["MEAN", "SUM"])
@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("shape, axes", LEADING)
def test_reduce_f32_over_leading_axes_matches_onnxruntime(shape, axes, keep_dims, op_type):
    """A mean / sum over leading axes (only size-1 axes before them) is onnxruntime's column by column, rows
    added in order, bit for bit in every variant, on values whose sums change with the order."""
    x = float_values(np.random.default_rng(sum(shape)), shape, "mixed")
    want = onnxruntime_reduce(x, axes, keep_dims, "ReduceMean" if op_type == "MEAN" else "ReduceSum")
    for variant in H.VARIANTS:
        assert_same_bits(run_reduce(variant, x, axes, keep_dims, op_type), want)


@pytest.mark.parametrize("shape, axes, options, problem", [
    ([4, 9, 3], [1], {}, "last axes"),                       # onnxruntime: another order (KRK)
    ([4, 9, 1], [1], {}, "last axes"),                       # a size-1 axis after it: still KRK there
    ([4, 9, 3], [0, 2], {}, "last axes"),
    ([4, 9], [-1], {"arithmetic": None}, "onnxruntime"),    # a TFLite float MEAN: XNNPACK's, not implemented
])
def test_reduce_f32_refuses_other_forms_by_name(shape, axes, options, problem):
    g = reduce_graph(shape, axes, True, **options)
    with pytest.raises(qnnweb.UnsupportedModelError, match=problem):
        qnnweb.model.compile_graph(g.graph("onnx"))


def onnxruntime_global_average_pool(x):
    node = helper.make_node("GlobalAveragePool", ["x"], ["y"])
    graph = helper.make_graph([node], "pool", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x.shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    session = onnxruntime.InferenceSession(model.SerializeToString(), session_options(),
                                           providers=["CPUExecutionProvider"])
    return session.run(None, {"x": aligned_copy(x)})[0]


def mlas_pool_mean(rows):
    """MLAS's global pooling of each row (MlasPoolGlobalKernel): four lanes from +0 over packets of 4 from the
    row's first element, (l0 + l2) + (l1 + l3), the rest in order, divided by the count."""
    means = []
    for row in np.asarray(rows, F):
        packets = len(row) // 4 * 4
        lanes = [F(0)] * 4
        for i in range(0, packets, 4):
            lanes = [F(a + b) for a, b in zip(lanes, row[i:i + 4])]
        total = F(F(lanes[0] + lanes[2]) + F(lanes[1] + lanes[3]))
        for v in row[packets:]:
            total = F(total + v)
        means.append(F(total / F(len(row))))
    return np.array(means, F)


@pytest.mark.parametrize("shape", [[1, 8, 7, 7], [2, 5, 4, 4], [1, 3, 13, 11], [1, 4, 1, 3], [1, 2, 1, 1],
                                   [1, 6, 2, 2]])
def test_float_global_average_pool_matches_onnxruntime(shape):
    """A float GlobalAveragePool (a dynamically quantized ConvNeXt's head): the MEAN of each channel with
    arithmetic "onnxruntime_pool", MLAS's global pooling order, bit for bit with onnxruntime and the reference
    in every variant, on values whose sums change with the order (and a channel of -0.0, which MLAS's +0 start
    makes +0)."""
    x = float_values(np.random.default_rng(sum(shape)), shape, "mixed")
    x[0, 0] = -0.0
    want = onnxruntime_global_average_pool(x)
    assert_same_bits(mlas_pool_mean(x.reshape(shape[0] * shape[1], -1)), want.reshape(-1))
    for variant in H.VARIANTS:
        g = reduce_graph(shape, [2, 3], True, arithmetic="onnxruntime_pool")
        assert_same_bits(H.run(g, variant, x, fmt="onnx")[0], want)
