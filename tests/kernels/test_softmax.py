"""SOFTMAX over the innermost dimension: within 1 of a float64 softmax, quantized."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from reference import int8 as ref


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
