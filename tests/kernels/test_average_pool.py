"""AVERAGE_POOL_2D and MEAN over H, W: the integer path (same quantization) and the fp32 one; MEAN over\none axis of a rank-4 tensor: XNNPACK's mean (LiteRT's delegate), against a numpy reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb_dev.reference import int8 as ref


def check_pool(variant, x, x_scale, x_zp, y_scale, y_zp, kernel, stride, padding, activation):
    expected = ref.average_pool2d(x, x_scale, x_zp, y_scale, y_zp, kernel, stride, padding, activation)
    got = H.average_pool2d(variant, x, x_scale, x_zp, y_scale, y_zp, kernel, stride, padding, activation)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@st.composite
def quantization(draw):
    """(x_scale, x_zp, y_scale, y_zp): the same (TFLite's AVERAGE_POOL_2D) or not."""
    x_scale, x_zp = draw(H.log_uniform(-10, 2)), draw(H.zero_points)
    kind = draw(st.sampled_from(["same", "same", "scale", "zero_point", "both"]))
    y_scale = x_scale if kind in ("same", "zero_point") else H.f32(x_scale * 2.0 ** draw(st.floats(-3, 3)))
    y_zp = x_zp if kind in ("same", "scale") else draw(H.zero_points)
    return x_scale, x_zp, y_scale, y_zp


@st.composite
def pool_cases(draw, batches=(1, 1, 2, 3), extra=16):
    """Windows with padding smaller than the kernel, inputs at least one window large."""
    c = draw(H.channels)
    batch = draw(st.sampled_from(batches))
    kh = draw(H.kernel_sizes)
    kw = draw(st.one_of(st.just(kh), H.kernel_sizes))
    sh, sw = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    padding, sizes = [], []
    for k, s in ((kh, sh), (kw, sw)):
        before, after = draw(st.integers(0, k - 1)), draw(st.integers(0, k - 1))
        lo = max(1, k - before - after)
        sizes.append(draw(st.integers(lo, lo + extra)))
        padding += [before, after]
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, (batch, sizes[0], sizes[1], c), draw(H.data_kinds))
    x_scale, x_zp, y_scale, y_zp = draw(quantization())
    return dict(x=x, x_scale=x_scale, x_zp=x_zp, y_scale=y_scale, y_zp=y_zp, kernel=(kh, kw), stride=(sh, sw),
                padding=tuple(padding), activation=draw(st.sampled_from(H.ACTIVATIONS)))


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(400))
@given(case=pool_cases())
def test_average_pool_matches_reference(variant, case):
    check_pool(variant, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_average_pool_same_padding_divisor(variant):
    """3x3 stride 1 SAME: corners average 4 taps, edges 6, the inside 9 (padding is not counted)."""
    x = np.arange(-128, 127, 5, dtype=np.int8)[:48].reshape(1, 4, 4, 3)
    check_pool(variant, x, H.f32(0.1), -7, H.f32(0.1), -7, (3, 3), (1, 1), (1, 1, 1, 1), "NONE")
    check_pool(variant, x, H.f32(0.1), -7, H.f32(0.07), 3, (3, 3), (1, 1), (1, 1, 1, 1), "NONE")


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_average_pool_integer_rounding_half_away_from_zero(variant):
    """Same quantization: +-0.5 averages round away from zero (TFLite's integer average)."""
    x = np.array([1, 2, -1, -2, 3, 4, -3, -4, 0, 1, 0, -1], dtype=np.int8).reshape(1, 1, 12, 1)
    expected = np.array([2, -2, 4, -4, 1, -1], dtype=np.int8).reshape(1, 1, 6, 1)
    got = H.average_pool2d(variant, x, H.f32(0.5), 0, H.f32(0.5), 0, (1, 2), (1, 2), (0, 0, 0, 0))
    np.testing.assert_array_equal(got, expected)
    np.testing.assert_array_equal(expected, ref.average_pool2d(x, 0.5, 0, 0.5, 0, (1, 2), (1, 2)))


def mean_cases():
    @st.composite
    def cases(draw):
        n = draw(st.integers(1, 3))
        h, w = draw(st.integers(1, 16)), draw(st.integers(1, 16))
        c = draw(H.channels)
        rng = np.random.default_rng(draw(H.seeds))
        x = H.int8_array(rng, (n, h, w, c), draw(H.data_kinds))
        return x, draw(quantization()), draw(st.booleans())

    return cases()


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(250))
@given(case=mean_cases())
def test_mean_matches_reference(variant, case):
    x, (x_scale, x_zp, y_scale, y_zp), keep_dims = case
    expected = ref.mean_hw(x, x_scale, x_zp, y_scale, y_zp)
    got = H.mean_hw(variant, x, x_scale, x_zp, y_scale, y_zp, keep_dims=keep_dims)
    np.testing.assert_array_equal(got.reshape(expected.shape), expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("axes,dtype", [((2, 1), "int32"), ((-3, -2), "int32"), ((1, 2), "int64")])
def test_mean_axes_forms(variant, axes, dtype):
    rng = np.random.default_rng(5)
    x = rng.integers(-128, 128, size=(2, 7, 7, 21), dtype=np.int8)
    expected = ref.mean_hw(x, 0.02, 3, 0.015, -4)
    got = H.mean_hw(variant, x, 0.02, 3, 0.015, -4, axes=axes, axes_dtype=dtype)
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_large_pools_split_across_threads(variant):
    """Enough work to be split into channel ranges (H.run compares with 2 or 3 threads): a global
    7x7 pool over 1,280 channels (EfficientNet-Lite0's head) and a 3x3 one over 67 channels, in
    both arithmetics (same quantization: integer; other scales: fp32)."""
    rng = np.random.default_rng(12)
    x = rng.integers(-128, 128, (1, 7, 7, 1280), dtype=np.int8)
    check_pool(variant, x, H.f32(0.1), -7, H.f32(0.1), -7, (7, 7), (1, 1), (0, 0, 0, 0), "NONE")
    check_pool(variant, x, H.f32(0.1), -7, H.f32(0.03), 5, (7, 7), (1, 1), (0, 0, 0, 0), "RELU6")
    x = rng.integers(-128, 128, (2, 19, 23, 67), dtype=np.int8)
    check_pool(variant, x, H.f32(0.1), 3, H.f32(0.07), -2, (3, 3), (1, 1), (1, 1, 1, 1), "NONE")


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=mean_cases(), axis=st.integers(0, 3))
def test_mean_over_one_axis_matches_xnnpack_reference(variant, case, axis):
    x, (x_scale, x_zp, y_scale, y_zp), keep_dims = case
    expected = ref.mean_one_axis_xnnpack(x, axis, x_scale, x_zp, y_scale, y_zp)
    got = H.mean_hw(variant, x, x_scale, x_zp, y_scale, y_zp, keep_dims=keep_dims, axes=(axis,))
    np.testing.assert_array_equal(got.reshape(expected.shape), expected)
