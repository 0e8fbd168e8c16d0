"""BATCH_MATMUL of two int8 activations (B packed for the GEMM kernels at every run): every variant
bit-exact with the numpy reference, in TFLite's fixed point (B with a zero point) and the fp32
requantization (onnxruntime's, and XNNPACK's where B's zero point is 0),
with broadcast batch dimensions, a transposed B (adj_y), sizes off every tile, threads (harness.run)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb_dev.reference import int8 as ref

# batch shapes of A and B that broadcast (ranks 2 to 5 in all)
BATCH_PAIRS = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 1), (1, 3)), ((4,), ()), ((), (2,)),
               ((2, 3, 2), (1, 3, 1)), ((1, 2), (2,))]


@st.composite
def cases(draw):
    a_batch, b_batch = draw(st.sampled_from(BATCH_PAIRS))
    m = draw(st.one_of(st.integers(1, 9), st.sampled_from([16, 49, 65, 130])))
    k = draw(st.one_of(st.integers(1, 40), st.sampled_from([64, 67, 100])))
    n = draw(st.one_of(st.integers(1, 33), st.sampled_from([47, 49, 64, 100])))
    adj_y = draw(st.booleans())
    rng = np.random.default_rng(draw(H.seeds))
    a = H.int8_array(rng, a_batch + (m, k), draw(H.data_kinds))
    b = H.int8_array(rng, b_batch + ((n, k) if adj_y else (k, n)), draw(H.data_kinds))
    a_scale, b_scale = draw(H.log_uniform(-8, 0)), draw(H.log_uniform(-8, 0))
    y_scale = H.output_scale_for(a_scale, b_scale, k, draw(H.log_uniform(-4, 3)))
    b_zp = draw(st.one_of(st.just(0), H.zero_points))
    return dict(a=a, a_scale=a_scale, a_zp=draw(H.zero_points), b=b, b_scale=b_scale, b_zp=b_zp,
                y_scale=y_scale, y_zp=draw(H.zero_points), adj_y=adj_y)


def check(variant, fmt, case):
    expected = ref.batch_matmul(**case, fmt=fmt)
    got = H.batch_matmul(variant, **case, fmt=fmt)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("fmt", ["tflite", "onnx"])
@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150), deadline=None)
@given(case=cases())
def test_batch_matmul_matches_reference(variant, fmt, case):
    check(variant, fmt, case)


@pytest.mark.parametrize("fmt", ["tflite", "onnx"])
@pytest.mark.parametrize("variant", H.VARIANTS)
def test_attention_scores_and_values(variant, fmt):
    """An attention head's two products: Q K^T (B transposed) over 4 heads, then A V."""
    rng = np.random.default_rng(7)
    q, kt, v = (rng.integers(-128, 128, size=(4, 49, 16), dtype=np.int8) for _ in range(3))
    check(variant, fmt, dict(a=q, a_scale=0.05, a_zp=3, b=kt, b_scale=0.04, b_zp=-7, y_scale=0.9, y_zp=-20,
                             adj_y=True))
    scores = rng.integers(-128, 128, size=(4, 49, 49), dtype=np.int8)
    check(variant, fmt, dict(a=scores, a_scale=1 / 256, a_zp=-128, b=v, b_scale=0.05, b_zp=0, y_scale=0.04,
                             y_zp=1))
