"""CONV_2D: every variant bit-exact against reference.int8.conv2d."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb_dev.reference import int8 as ref


def check_conv2d(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride, dilation, padding,
                 activation, kernel_bytes=None):
    expected = ref.conv2d(x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride, dilation, padding, activation)
    got = H.conv2d(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride, dilation, padding, activation,
                   kernel_bytes=kernel_bytes)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@st.composite
def conv_cases(draw):
    ic, oc = draw(H.channels), draw(H.channels)
    batch, (ih, iw), (kh, kw), stride, dilation, padding = draw(H.windows(work_per_pixel=ic * oc))
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, (batch, ih, iw, ic), draw(H.data_kinds))
    w = H.weights_array(rng, (oc, kh, kw, ic), draw(H.weight_kinds))
    x_scale = draw(H.log_uniform(-10, 0))
    per_channel = draw(st.booleans())
    if per_channel:
        w_scales = tuple(H.f32(s) for s in 2.0 ** rng.uniform(-10, -4, size=oc))
    else:
        w_scales = (draw(H.log_uniform(-10, -4)),)
    bias = H.bias_array(rng, oc, draw(st.one_of(st.none(), st.integers(0, 24))))
    factor = draw(H.log_uniform(-5, 4))
    y_scale = H.output_scale_for(x_scale, max(w_scales), ic * kh * kw, factor)
    activation = draw(st.sampled_from(H.ACTIVATIONS))
    x_scale, y_scale = H.fit_activation(draw, activation, x_scale, y_scale)
    return dict(x=x, x_scale=x_scale, x_zp=draw(H.zero_points), w=w, w_scales=w_scales, bias=bias,
                y_scale=y_scale, y_zp=draw(H.zero_points), stride=stride, dilation=dilation, padding=padding,
                activation=activation)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(400))
@given(case=conv_cases())
def test_conv2d_matches_reference(variant, case):
    check_conv2d(variant, **case)


def _case(seed, n, ih, iw, ic, oc, k, stride=(1, 1), dilation=(1, 1), padding=(0, 0, 0, 0), x_zp=-3, y_zp=5,
          per_channel=True, bias=True, activation="NONE", factor=1.0):
    rng = np.random.default_rng(seed)
    kh, kw = k
    x = rng.integers(-128, 128, size=(n, ih, iw, ic), dtype=np.int8)
    w = rng.integers(-127, 128, size=(oc, kh, kw, ic), dtype=np.int8)
    w_scales = tuple(H.f32(s) for s in (2.0 ** rng.uniform(-9, -5, size=oc) if per_channel else [0.01]))
    x_scale = H.f32(0.05)
    b = rng.integers(-5000, 5000, size=oc).astype(np.int32) if bias else None
    y_scale = H.output_scale_for(x_scale, max(w_scales), ic * kh * kw, factor)
    return dict(x=x, x_scale=x_scale, x_zp=x_zp, w=w, w_scales=w_scales, bias=b, y_scale=y_scale, y_zp=y_zp,
                stride=stride, dilation=dilation, padding=padding, activation=activation)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_conv2d_1x1_three_input_channels(variant):
    """The first conv of an RGB model as a 1x1 conv: K = 3 is below every SIMD kernel's K tile."""
    check_conv2d(variant, **_case(1, 1, 7, 5, 3, 8, (1, 1)))
    check_conv2d(variant, **_case(2, 2, 3, 3, 3, 17, (1, 1), per_channel=False, bias=False))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_conv2d_3x3_stride2_same_asymmetric_padding(variant):
    """TFLite SAME with stride 2 on an even size pads only after (0, 1); on odd sizes (1, 1)."""
    for seed, (ih, iw) in enumerate([(8, 8), (7, 9), (224 // 16, 10)]):
        top, bottom = ref.same_padding(ih, 3, 2)
        left, right = ref.same_padding(iw, 3, 2)
        check_conv2d(variant, **_case(seed, 1, ih, iw, 3, 16, (3, 3), stride=(2, 2),
                                      padding=(top, bottom, left, right), activation="RELU6"))
    # MobileNet's first conv after the converter's explicit PAD (folded into the conv): (0,1,0,1).
    check_conv2d(variant, **_case(9, 1, 16, 16, 8, 24, (3, 3), stride=(2, 2), padding=(0, 1, 0, 1)))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_conv2d_single_channel(variant):
    check_conv2d(variant, **_case(3, 1, 6, 6, 1, 1, (3, 3), padding=(1, 1, 1, 1)))
    check_conv2d(variant, **_case(4, 1, 5, 4, 1, 5, (2, 3), dilation=(2, 1)))
    check_conv2d(variant, **_case(5, 1, 5, 4, 6, 1, (3, 1), stride=(1, 2)))


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("activation", H.ACTIVATIONS)
def test_conv2d_output_saturates(variant, activation):
    """Output scale 64x too small: most outputs hit the clamp (and the fused activation's bounds)."""
    check_conv2d(variant, **_case(6, 1, 6, 6, 19, 33, (3, 3), padding=(1, 1, 1, 1), activation=activation,
                                  factor=1 / 64))
    # Extreme inputs and weights: the largest accumulators (|acc| ~ 255 * 128 * K).
    case = _case(7, 1, 4, 4, 67, 20, (3, 3), x_zp=127, y_zp=-128, activation=activation, factor=1 / 8)
    case["x"] = np.full_like(case["x"], -128)
    case["w"] = np.where(case["w"] >= 0, 127, -128).astype(np.int8)
    check_conv2d(variant, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_conv2d_padding_larger_than_kernel(variant):
    """Whole output rows/columns that see only padding: bias plus the zero-point taps."""
    check_conv2d(variant, **_case(8, 1, 3, 3, 5, 9, (2, 2), padding=(3, 2, 2, 3)))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_conv2d_many_pixels_and_channels(variant):
    """Enough output pixels and channels that every variant runs full and partial M and N tiles."""
    check_conv2d(variant, **_case(10, 1, 13, 11, 37, 130, (1, 1)))
    check_conv2d(variant, **_case(11, 1, 9, 9, 64, 48, (3, 3), padding=(1, 1, 1, 1), per_channel=False))


@st.composite
def grouped_conv_cases(draw):
    """Grouped CONV_2D (weights [oc, kh, kw, ic / groups]): group counts and per-group channel counts off
    the SIMD tiles, a weight zero point sometimes (ONNX depthwise weights with a zero point run so)."""
    groups = draw(st.integers(2, 6))
    group_ic, group_oc = draw(st.integers(1, 9)), draw(st.integers(1, 9))
    ic, oc = groups * group_ic, groups * group_oc
    batch, (ih, iw), (kh, kw), stride, dilation, padding = draw(H.windows(work_per_pixel=group_ic * oc))
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, (batch, ih, iw, ic), draw(H.data_kinds))
    w = H.weights_array(rng, (oc, kh, kw, group_ic), draw(H.weight_kinds))
    x_scale = draw(H.log_uniform(-10, 0))
    w_scales = tuple(H.f32(s) for s in 2.0 ** rng.uniform(-10, -4, size=oc))
    bias = H.bias_array(rng, oc, draw(st.one_of(st.none(), st.integers(0, 24))))
    y_scale = H.output_scale_for(x_scale, max(w_scales), group_ic * kh * kw, draw(H.log_uniform(-5, 4)))
    w_zp = draw(st.sampled_from([0, 0, 3, -17]))
    return dict(x=x, x_scale=x_scale, x_zp=draw(H.zero_points), w=w, w_scales=w_scales, bias=bias,
                y_scale=y_scale, y_zp=draw(H.zero_points), stride=stride, dilation=dilation, padding=padding,
                w_zp=w_zp)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=grouped_conv_cases())
def test_grouped_conv2d_matches_reference(variant, case):
    args = dict(case)
    w_zp = args.pop("w_zp")
    expected = ref.conv2d(**args, w_zp=w_zp)
    got = H.conv2d(variant, **args, w_zp=w_zp)
    np.testing.assert_array_equal(got, expected)


FEW_CHANNEL_WINDOWS = [  # (input channels, kernel, stride, dilation, padding)
    (3, (3, 3), (2, 2), (1, 1), (0, 1, 0, 1)), (1, (5, 5), (1, 1), (1, 1), (2, 2, 2, 2)),
    (4, (7, 7), (2, 2), (1, 1), (3, 3, 3, 3)), (2, (2, 3), (1, 2), (2, 1), (1, 0, 0, 1)),
    (5, (3, 3), (1, 1), (1, 1), (1, 1, 1, 1)), (8, (3, 1), (1, 1), (1, 1), (0, 0, 0, 0)),
    (6, (3, 3), (2, 2), (2, 2), (2, 2, 2, 2)), (3, (11, 11), (4, 4), (1, 1), (5, 5, 5, 5)),
    (2, (3, 3), (1, 1), (1, 2), (1, 1, 1, 1)),  # kernel rows of 6 bytes, never whole in the input (dilated)
]


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("window", FEW_CHANNEL_WINDOWS)
def test_conv2d_few_input_channels_gathered_into_rows(variant, window):
    """1-8 input channels with a window (RGB first layers): the SIMD variants gather each pixel's
    window into one row (conv2d.c's im2col: whole kernel rows of 4-16 bytes where they lie whole in the
    input, else 4- and 8-byte copies or any length per tap) and run a 1x1 IGEMM,
    with OHWI weights and with OIHW weights reordered at packing."""
    ic, k, stride, dilation, padding = window
    case = _case(ic * 100 + k[0], 2, 13, 11, ic, 19, k, stride=stride, dilation=dilation, padding=padding)
    check_conv2d(variant, **case)
    args = [case[n] for n in ("x", "x_scale", "x_zp", "w", "w_scales", "bias", "y_scale", "y_zp", "stride",
                              "dilation", "padding", "activation")]
    np.testing.assert_array_equal(H.conv2d_layout(variant, *args), ref.conv2d(*args))
