"""DEPTHWISE_CONV_2D (depth multipliers 1..3): every variant bit-exact against the reference."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb_dev.reference import int8 as ref


def check_dwconv(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride, dilation, padding, activation,
                 kernel_bytes=None):
    expected = ref.depthwise_conv2d(x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride, dilation, padding,
                                    activation)
    got = H.conv2d(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride, dilation, padding,
                   activation, depthwise=True, kernel_bytes=kernel_bytes)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@st.composite
def dwconv_cases(draw, multipliers=st.sampled_from([1, 1, 1, 2, 3])):
    ic = draw(H.channels)
    m = draw(multipliers)
    oc = ic * m
    batch, (ih, iw), (kh, kw), stride, dilation, padding = draw(H.windows(work_per_pixel=oc * 8))
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, (batch, ih, iw, ic), draw(H.data_kinds))
    w = H.weights_array(rng, (1, kh, kw, oc), draw(H.weight_kinds))
    x_scale = draw(H.log_uniform(-10, 0))
    if draw(st.booleans()):
        w_scales = tuple(H.f32(s) for s in 2.0 ** rng.uniform(-10, -2, size=oc))
    else:
        w_scales = (draw(H.log_uniform(-10, -2)),)
    bias = H.bias_array(rng, oc, draw(st.one_of(st.none(), st.integers(0, 24))))
    y_scale = H.output_scale_for(x_scale, max(w_scales), kh * kw, draw(H.log_uniform(-5, 4)))
    activation = draw(st.sampled_from(H.ACTIVATIONS))
    x_scale, y_scale = H.fit_activation(draw, activation, x_scale, y_scale)
    return dict(x=x, x_scale=x_scale, x_zp=draw(H.zero_points), w=w, w_scales=w_scales, bias=bias,
                y_scale=y_scale, y_zp=draw(H.zero_points), stride=stride, dilation=dilation, padding=padding,
                activation=activation)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(400))
@given(case=dwconv_cases())
def test_depthwise_conv2d_matches_reference(variant, case):
    check_dwconv(variant, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=dwconv_cases(multipliers=st.integers(2, 3)))
def test_depthwise_conv2d_depth_multiplier(variant, case):
    check_dwconv(variant, **case)


def _case(seed, n, ih, iw, ic, m, k, stride=(1, 1), dilation=(1, 1), padding=(0, 0, 0, 0), x_zp=7, y_zp=-9,
          per_channel=True, bias=True, activation="NONE", factor=1.0):
    rng = np.random.default_rng(seed)
    kh, kw = k
    oc = ic * m
    x = rng.integers(-128, 128, size=(n, ih, iw, ic), dtype=np.int8)
    w = rng.integers(-127, 128, size=(1, kh, kw, oc), dtype=np.int8)
    w_scales = tuple(H.f32(s) for s in (2.0 ** rng.uniform(-8, -3, size=oc) if per_channel else [0.02]))
    x_scale = H.f32(0.03)
    b = rng.integers(-3000, 3000, size=oc).astype(np.int32) if bias else None
    y_scale = H.output_scale_for(x_scale, max(w_scales), kh * kw, factor)
    return dict(x=x, x_scale=x_scale, x_zp=x_zp, w=w, w_scales=w_scales, bias=b, y_scale=y_scale, y_zp=y_zp,
                stride=stride, dilation=dilation, padding=padding, activation=activation)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_depthwise_3x3_stride2_same_asymmetric_padding(variant):
    for seed, (ih, iw, c) in enumerate([(8, 8, 32), (7, 10, 17), (14, 14, 144)]):
        top, bottom = ref.same_padding(ih, 3, 2)
        left, right = ref.same_padding(iw, 3, 2)
        check_dwconv(variant, **_case(seed, 1, ih, iw, c, 1, (3, 3), stride=(2, 2),
                                      padding=(top, bottom, left, right), activation="RELU6"))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_depthwise_single_channel_and_tile_edges(variant):
    """channels 1 and one past/before the 16-channel SIMD tile, multiplier 1, 2 and 3."""
    for seed, (c, m) in enumerate([(1, 1), (1, 3), (15, 1), (16, 1), (17, 1), (33, 1), (8, 2), (5, 3)]):
        check_dwconv(variant, **_case(seed, 2, 5, 6, c, m, (3, 3), padding=(1, 1, 1, 1)))


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("activation", H.ACTIVATIONS)
def test_depthwise_output_saturates(variant, activation):
    check_dwconv(variant, **_case(20, 1, 6, 6, 24, 1, (3, 3), padding=(1, 1, 1, 1), activation=activation,
                                  factor=1 / 64))
    case = _case(21, 1, 4, 4, 19, 2, (5, 5), padding=(2, 2, 2, 2), x_zp=-128, y_zp=127, activation=activation,
                 factor=1 / 8)
    case["x"] = np.full_like(case["x"], 127)
    case["w"] = np.where(case["w"] >= 0, 127, -128).astype(np.int8)
    check_dwconv(variant, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_depthwise_large_kernel_dilation(variant):
    check_dwconv(variant, **_case(30, 1, 9, 11, 20, 1, (7, 7), dilation=(2, 1), padding=(6, 6, 3, 3)))
    check_dwconv(variant, **_case(31, 1, 9, 11, 20, 2, (5, 3), stride=(3, 2), dilation=(1, 2), padding=(0, 4, 1, 2)))
