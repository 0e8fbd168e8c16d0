"""Dynamic-range int8 (onnxruntime.quantization.quantize_dynamic's models): DYNAMIC_QUANTIZE (onnxruntime's
DynamicQuantizeLinear: its uint8 output, held as int8, and the scale and zero point it writes) then
DYNAMIC_MATMUL (MatMulInteger + Cast + Mul + Add) on every variant, bit-exact with the numpy reference
(qnnweb_dev.reference.dynamic, itself checked against onnxruntime in
tests/onnx/test_onnx_dynamic_quantization.py):
int8 and uint8 weights, per tensor and per column, with and without bias, exact sums (pairs of products
beyond int16 too), sizes off every vector width, threads (harness.run)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb.model import Model, compile_graph
from qnnweb_dev.reference import dynamic as ref


def run_dynamic_matmul(variant, x, w, w_scale, w_zp, bias=None):
    """DYNAMIC_QUANTIZE of float32 x [..., K] then DYNAMIC_MATMUL by w [K, N] (int8 or uint8, w_scale and w_zp:
    one or one per column): (uint8 q, scale, zero point, float32 y), the same bytes on 1 and 2 or 3 threads."""
    g = H.GraphBuilder()
    xi = g.input(x.shape, "float32")
    qi = g.tensor(x.shape, "int8", name="q")
    g.tensors[qi].dynamic = True
    pi = g.tensor((2,), "int32", name="parameters")
    n = w.shape[1]
    wi = g.constant(w, w.dtype.name, w_scale, w_zp, quantized_dimension=1 if np.size(w_scale) > 1 else 0)
    bi = g.constant(bias, "float32") if bias is not None else -1
    yi = g.output(x.shape[:-1] + (n,), "float32")
    g.op("DYNAMIC_QUANTIZE", [xi], [qi, pi])
    g.op("DYNAMIC_MATMUL", [qi, pi, wi, bi], [yi])
    graph = g.graph("onnx")
    compiled = compile_graph(graph, keep_intermediates=True)
    results = []
    for threads in (1, next(H.THREAD_COUNTS)):
        with Model(compiled, variant, graph=graph, threads=threads) as model:
            model._host.call("qnn_split_finely", 1)
            y = model.run(x)[0]
            results.append((model.intermediate("q"), model.intermediate("parameters"), y))
    assert all(a.tobytes() == b.tobytes() for a, b in zip(*results)), f"threads changed the output of {variant}"
    q, parameters, y = results[0]
    scale = parameters[:1].view(np.float32)[0]
    return (q.astype(np.int16) + 128).astype(np.uint8), scale, int(parameters[1]) + 128, y


def expected(x, w, w_scale, w_zp, bias):
    q, scale, zp = ref.dynamic_quantize_linear(x)
    acc = ref.matmul_integer(q, zp, w, w_zp)
    return q, scale, zp, ref.scaled_output(acc, scale, w_scale, bias)


def check(variant, x, w, w_scale, w_zp, bias=None):
    got = run_dynamic_matmul(variant, x, w, w_scale, w_zp, bias)
    want = expected(x, w, w_scale, w_zp, bias)
    np.testing.assert_array_equal(got[0], want[0])
    assert (got[1], got[2]) == (want[1], want[2])
    assert got[3].tobytes() == want[3].tobytes()


@st.composite
def cases(draw):
    rng = np.random.default_rng(draw(H.seeds))
    lead = draw(st.sampled_from([(1,), (3,), (1, 7), (2, 5), (17,)]))
    k = draw(st.one_of(st.integers(1, 40), st.sampled_from([64, 67, 128, 300])))
    n = draw(st.one_of(st.integers(1, 33), st.sampled_from([48, 64, 100])))
    x = rng.standard_normal(lead + (k,)) * draw(H.log_uniform(-6, 6)) + draw(st.sampled_from([0.0, 1.0, -2.0]))
    x = x.astype(np.float32)
    kind = draw(st.sampled_from(["any", "positive", "negative", "zero"]))
    x = {"any": x, "positive": np.abs(x), "negative": -np.abs(x), "zero": np.zeros_like(x)}[kind]
    dtype = draw(st.sampled_from([np.int8, np.uint8]))
    info = np.iinfo(dtype)
    w = rng.integers(info.min, info.max + 1, (k, n)).astype(dtype)
    per_column = draw(st.booleans())
    count = n if per_column else 1
    w_scale = rng.uniform(1e-4, 1e-1, count).astype(np.float32)
    w_zp = rng.integers(info.min, info.max + 1, count) if draw(st.booleans()) else np.zeros(count, int)
    bias = rng.standard_normal(n).astype(np.float32) if draw(st.booleans()) else None
    return dict(x=x, w=w, w_scale=w_scale, w_zp=w_zp, bias=bias)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(60), deadline=None)
@given(case=cases())
def test_dynamic_matmul_matches_reference(variant, case):
    check(variant, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_quantization_rounds_halves_to_even(variant):
    """x in [-100, 155]: scale 1, zero point 100, so x + 0.5 lands on halves of every parity."""
    x = np.concatenate([np.arange(-100, 155, 0.5), [155.0]]).astype(np.float32)[None]
    w = np.ones((x.shape[1], 3), np.int8)
    q, scale, zp, _ = run_dynamic_matmul(variant, x, w, [0.5], [0])
    assert (scale, zp) == (1.0, 100)
    np.testing.assert_array_equal(q, ref.dynamic_quantize_linear(x)[0])


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_pairs_beyond_int16_sum_exactly(variant):
    """Activations at 255 times weights at 127 and at -128: each pair of products (64770, -65280) is beyond
    int16, where onnxruntime's x86 AVX2 kernel without VNNI saturates; the sums are exact."""
    x = np.full((2, 8), 10.0, np.float32)   # all at 255, zero point 0
    w = np.repeat(np.array([[127, -128, 127, -128]], np.int8), 8, axis=0)
    y = run_dynamic_matmul(variant, x, w, [1.0], [0])[3]
    acc = np.array([8 * 255 * 127, -8 * 255 * 128] * 2, np.float32)
    np.testing.assert_array_equal(y, np.broadcast_to(acc * np.float32(np.float32(10.0) / np.float32(255)), y.shape))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_deep_products_near_int32_limits(variant):
    """Depth 30000 of extreme values (weights at -128 / 127 with zero points at the other end): sums and zero
    point corrections near 2^31, exact as the reference's int64 sums."""
    rng = np.random.default_rng(11)
    x = np.where(rng.random((2, 30000)) < 0.9, 7.0, -1.0).astype(np.float32)
    w = np.where(rng.random((30000, 5)) < 0.9, -128, 127).astype(np.int8)
    check(variant, x, w, [1e-3] * 5, [127, -128, 0, 5, 127], np.ones(5, np.float32))
