"""RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (the resize record) against the numpy references of
LiteRT's arithmetic and of onnxruntime's three bilinear ones, in every variant and on 2 and 3 threads:
up- and downscaling, every mode, channel counts around the SIMD width, batches."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb_dev.reference import int8 as ref

MODES = [(False, False), (True, False), (False, True)]  # (align_corners, half_pixel_centers)


@st.composite
def resize_cases(draw):
    n = draw(st.integers(1, 2))
    ih, iw = draw(st.integers(1, 12)), draw(st.integers(1, 12))
    oh, ow = draw(st.integers(1, 30)), draw(st.integers(1, 30))
    c = draw(st.sampled_from([1, 3, 7, 8, 9, 16, 21, 40]))
    align, half = draw(st.sampled_from(MODES))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    x = H.int8_array(rng, (n, ih, iw, c), draw(H.data_kinds))
    return x, (oh, ow), align, half


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(60), deadline=None)
@given(case=resize_cases())
def test_resize_bilinear_matches_reference(variant, case):
    x, (oh, ow), align, half = case
    np.testing.assert_array_equal(H.resize(variant, "RESIZE_BILINEAR", x, (oh, ow), align, half),
                                  ref.resize_bilinear(x, oh, ow, align, half))


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(40), deadline=None)
@given(case=resize_cases())
def test_resize_nearest_matches_reference(variant, case):
    x, (oh, ow), align, half = case
    np.testing.assert_array_equal(H.resize(variant, "RESIZE_NEAREST_NEIGHBOR", x, (oh, ow), align, half),
                                  ref.resize_nearest(x, oh, ow, align, half))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_resize_nearest_moves_uint8_values(variant):
    x = np.random.default_rng(1).integers(0, 256, (1, 5, 6, 11)).astype(np.uint8)
    got = H.resize(variant, "RESIZE_NEAREST_NEIGHBOR", x, (10, 12), dtype="uint8")
    np.testing.assert_array_equal(got, ref.resize_nearest(x, 10, 12))


ONNX_MODES = ["half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners"]


@st.composite
def onnx_resize_cases(draw):
    x, out_hw, _, _ = draw(resize_cases())
    return (x, out_hw, draw(st.sampled_from(ONNX_MODES)),
            draw(st.sampled_from(["float", "float_truncate", "q10", "float_output"])),
            draw(st.floats(0.0001220703125, 8.0, width=32)), draw(st.integers(-128, 127)))


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(60), deadline=None)
@given(case=onnx_resize_cases(), output=st.none() | st.tuples(st.floats(0.0001220703125, 8.0, width=32),
                                                                st.integers(-128, 127)))
def test_resize_bilinear_onnx_matches_reference(variant, case, output):
    """output: the output's own quantization (a QuantizeLinear after the float Resize), arithmetic "float"."""
    x, (oh, ow), mode, arithmetic, scale, zero_point = case
    output = output if arithmetic == "float" else None
    got = H.resize(variant, "RESIZE_BILINEAR", x, (oh, ow), scale=scale, zero_point=zero_point,
                   onnx=(mode, arithmetic), output_quantization=output)
    expected = ref.resize_bilinear_onnx(x, oh, ow, mode, arithmetic, scale, zero_point, *(output or (None, None)))
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_resize_bilinear_onnx_on_whole_pixels_requantizes(variant):
    """Halving with asymmetric coordinates lands on whole pixels (every weight 0, the kernel's gather):
    with the output quantized otherwise than the input, the values are still requantized."""
    x = np.random.default_rng(3).integers(-128, 128, (1, 8, 10, 5)).astype(np.int8)
    got = H.resize(variant, "RESIZE_BILINEAR", x, (4, 5), scale=0.05, zero_point=3, onnx=("asymmetric", "float"),
                   output_quantization=(0.07, -9))
    expected = ref.resize_bilinear_onnx(x, 4, 5, "asymmetric", "float", 0.05, 3, 0.07, -9)
    np.testing.assert_array_equal(got, expected)
    assert (expected != x[:, ::2, ::2]).any()
