"""MAX_POOL_2D (padding ignored, dilation, fused clamp) and AVERAGE_POOL_2D with count_include_pad
(ONNX): every variant bit-exact against the references."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
import qnnweb
from reference import int8 as ref
from test_average_pool import pool_cases, quantization


@st.composite
def max_pool_cases(draw):
    c = draw(H.channels)
    batch, (ih, iw), kernel, stride, dilation, padding = draw(
        H.windows(work_per_pixel=c, budget=200_000, max_dilation=2, max_extra_padding=1))
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, (batch, ih, iw, c), draw(H.data_kinds))
    scale, zp = draw(H.log_uniform(-8, 0)), draw(H.zero_points)
    return dict(x=x, scale=scale, zp=zp, kernel=kernel, stride=stride, padding=padding, dilation=dilation,
                activation=draw(st.sampled_from(H.ACTIVATIONS)))


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=max_pool_cases())
def test_max_pool_matches_reference(variant, case):
    c = case
    expected = ref.max_pool2d(c["x"], c["kernel"], c["stride"], c["dilation"], c["padding"], c["activation"],
                              c["scale"], c["zp"])
    got = H.max_pool2d(variant, c["x"], c["scale"], c["zp"], c["kernel"], c["stride"], c["padding"], c["dilation"],
                       c["activation"])
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_max_pool_window_of_padding_only(variant):
    """Dilation 3 with a 2-tap window and padding 2: some windows see only padding -> output_min."""
    x = np.arange(-60, 60, 4, dtype=np.int8)[:30].reshape(1, 5, 6, 1)
    got = H.max_pool2d(variant, x, 0.1, 0, (2, 2), (1, 1), (2, 2, 2, 2), dilation=(3, 3), activation="RELU")
    expected = ref.max_pool2d(x, (2, 2), (1, 1), (3, 3), (2, 2, 2, 2), "RELU", 0.1, 0)
    np.testing.assert_array_equal(got, expected)
    assert (got == 0).any()


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_max_pool_needs_equal_quantization(variant):
    g = H.GraphBuilder()
    x = g.input((1, 4, 4, 3), "int8", 0.1, 0)
    y = g.output((1, 2, 2, 3), "int8", 0.2, 0)
    g.op("MAX_POOL_2D", [x], [y], kernel=(2, 2), stride=(2, 2), padding=[0, 0, 0, 0], activation="NONE")
    with pytest.raises(qnnweb.UnsupportedModelError, match="quantization differ"):
        H.run(g, variant, np.zeros((1, 4, 4, 3), np.int8))


def include_pad_cases():
    return pool_cases(batches=(1, 1, 2), extra=12)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=include_pad_cases())
def test_average_pool_count_include_pad(variant, case):
    expected = ref.average_pool2d_include_pad(**case)
    got = H.average_pool2d(variant, **case, count_include_pad=True)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)
