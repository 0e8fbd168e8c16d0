"""PAD of H, W and C with the zero point."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb_dev.reference import int8 as ref


@st.composite
def pad_cases(draw):
    shape = (draw(st.integers(1, 3)), draw(st.integers(1, 12)), draw(st.integers(1, 12)), draw(H.channels))
    padding = tuple(draw(st.integers(0, 5)) for _ in range(4)) + (
        tuple(draw(st.integers(0, 20)) for _ in range(2)) if draw(st.booleans()) else ())
    rng = np.random.default_rng(draw(H.seeds))
    return H.int8_array(rng, shape), draw(H.log_uniform(-8, 0)), draw(H.zero_points), padding


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(200))
@given(case=pad_cases())
def test_pad_matches_reference(variant, case):
    x, scale, zp, padding = case
    np.testing.assert_array_equal(H.pad(variant, x, scale, zp, padding), ref.pad(x, padding, zp))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_pad_nothing_and_one_side(variant):
    x = np.arange(-60, 60, dtype=np.int8).reshape(2, 3, 4, 5)
    for padding in [(0, 0, 0, 0), (1, 0, 0, 0), (0, 0, 0, 3), (0, 2, 1, 0), (0, 0, 0, 0, 16, 0), (1, 0, 0, 1, 0, 2)]:
        np.testing.assert_array_equal(H.pad(variant, x, 0.1, -128, padding), ref.pad(x, padding, -128))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_pad_with_different_output_quantization(variant):
    """TFLite's PAD keeps the quantization. A graph whose PAD output has another scale / zero point
    must be rejected, or its values requantized: copying the input bytes changes the values."""
    from qnnweb.errors import UnsupportedModelError

    x = np.arange(-50, 50, dtype=np.int8).reshape(1, 5, 5, 4)
    g = H.GraphBuilder()
    xi = g.input(x.shape, "int8", 0.1, 0)
    pi = g.constant(np.array([[0, 0], [1, 1], [1, 1], [0, 0]]), "int32")
    yi = g.output((1, 7, 7, 4), "int8", 0.2, 10)
    g.op("PAD", [xi, pi], [yi])
    try:
        got = H.run(g, variant, x)[0]
    except UnsupportedModelError:
        return
    expected = ref.pad(ref.requantize(x, 0.1, 0, 0.2, 10), (1, 1, 1, 1), 10)
    np.testing.assert_array_equal(got, expected)
