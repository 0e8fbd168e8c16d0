"""ADD (add.c) in each format's reference arithmetic, every variant bit-exact against
reference.int8: XNNPACK's fixed point for TFLite models (reference.int8.add computes the same
multipliers and shift but without int32 overflow; TFLite's builtin fixed point where LiteRT's
XNNPACK delegate refuses the scales), onnxruntime's x86 float32 kernel for ONNX models
(reference.int8.add_onnxruntime; tests/onnx/test_onnx_add.py checks it against onnxruntime itself)."""

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb.errors import UnsupportedModelError
from qnnweb_dev.reference import int8 as ref


def check_add(variant, a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE", fmt="tflite"):
    expected = ref.add(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation, fmt)
    # The fixed-point reference itself is within 1 of the real-number sum.
    real = ref.add_float(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation)
    assert np.abs(expected.astype(np.int32) - real).max(initial=0) <= 1
    got = H.add(variant, a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation, fmt)
    np.testing.assert_array_equal(got, expected)


shapes = st.one_of(
    st.tuples(st.integers(1, 3), st.integers(1, 12), st.integers(1, 12), H.channels),
    st.tuples(st.integers(1, 5000)),
    st.tuples(st.integers(1, 40), st.integers(1, 40)))


@st.composite
def add_cases(draw):
    shape = draw(shapes)
    rng = np.random.default_rng(draw(H.seeds))
    a = H.int8_array(rng, shape, draw(H.data_kinds))
    b = H.int8_array(rng, shape, draw(H.data_kinds))
    y_scale = draw(H.log_uniform(-10, 2))
    # Ratios a_scale / y_scale: the larger in [2**-10, 2**8), the other anywhere below it.
    ra = draw(st.floats(-10, 7.99))
    rb = draw(st.one_of(st.floats(-10, 7.99), st.floats(-16, -10), st.just(ra)))
    a_scale, b_scale = H.f32(y_scale * 2.0 ** ra), H.f32(y_scale * 2.0 ** rb)
    if draw(st.booleans()):
        a_scale, b_scale = b_scale, a_scale
    assume(ref.add_kernel(a_scale, b_scale, y_scale) is not None)
    activation = draw(st.sampled_from(H.ACTIVATIONS))
    return dict(a=a, a_scale=a_scale, a_zp=draw(H.zero_points), b=b, b_scale=b_scale, b_zp=draw(H.zero_points),
                y_scale=y_scale, y_zp=draw(H.zero_points), activation=activation,
                fmt=draw(st.sampled_from(["tflite", "onnx"])))


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(500))
@given(case=add_cases())
def test_add_matches_reference(variant, case):
    check_add(variant, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("fmt", ["tflite", "onnx"])
def test_add_residual_block(variant, fmt):
    """A MobileNet v2 residual ADD: similar scales, different zero points, every int8 pair."""
    a, b = np.meshgrid(np.arange(-128, 128, dtype=np.int8), np.arange(-128, 128, dtype=np.int8))
    check_add(variant, a.ravel(), H.f32(0.2), -5, b.ravel(), H.f32(0.31), 12, H.f32(0.37), -3, fmt=fmt)
    check_add(variant, a.ravel(), H.f32(0.05), 0, b.ravel(), H.f32(0.05), 0, H.f32(0.05), 0, "RELU6", fmt)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(200))
@given(case=add_cases(), uint8=st.booleans(), scalar=st.sampled_from([None, "a", "b"]))
def test_onnxruntime_forms_match_reference(variant, case, uint8, scalar):
    """ONNX models' ADD in each of onnxruntime's forms (uint8 domain, a per-span scalar operand)."""
    case = {k: v for k, v in case.items() if k != "fmt"}
    expected = ref.add_onnxruntime(**case, uint8=uint8, scalar=scalar)
    got = H.add(variant, **case, fmt="onnx", onnxruntime_scalar=scalar, uint8=uint8)
    np.testing.assert_array_equal(got, expected)


# Scales (a_scale, a_zp, b_scale, b_zp, y_scale, y_zp, uint8) where plain float32 arithmetic rounds one
# int8 pair differently from onnxruntime's fused multiply-adds (found by searching random scales), and
# one where half of all sums are exact ties.
NEAR_TIE_SCALES = [
    (0.1596325933933258, -49, 0.02800457552075386, 36, 0.040853727608919144, 12, True),
    (0.6800616979598999, -48, 0.29969823360443115, -88, 0.09562937915325165, 74, True),
    (0.2080053687095642, -27, 5.489926815032959, 43, 0.7207013964653015, 66, True),
    (0.5, 3, 0.5, -7, 1.0, 0, False),
]


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("scales", NEAR_TIE_SCALES)
def test_onnxruntime_add_near_ties(variant, scales):
    """Every int8 pair, scales whose sums land on or next to half-integers: the SIMD loop's float32 fast
    form must hand those to onnxruntime's exact arithmetic (add.c, add_fast4)."""
    a_scale, a_zp, b_scale, b_zp, y_scale, y_zp, uint8 = scales
    a, b = np.meshgrid(np.arange(-128, 128, dtype=np.int8), np.arange(-128, 128, dtype=np.int8))
    a, b = a.ravel(), b.ravel()
    case = dict(a=a, a_scale=H.f32(a_scale), a_zp=a_zp, b=b, b_scale=H.f32(b_scale), b_zp=b_zp,
                y_scale=H.f32(y_scale), y_zp=y_zp)
    expected = ref.add_onnxruntime(**case, uint8=uint8)
    np.testing.assert_array_equal(H.add(variant, **case, fmt="onnx", uint8=uint8), expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_add_same_tensor_twice(variant):
    """x + x: both inputs are one graph tensor."""
    x = np.arange(-128, 128, dtype=np.int8).reshape(16, 16)
    g = H.GraphBuilder()
    xi = g.input(x.shape, "int8", H.f32(0.1), 4)
    yi = g.output(x.shape, "int8", H.f32(0.25), -2)
    g.op("ADD", [xi, xi], [yi], activation="NONE")
    got = H.run(g, variant, x)[0]
    np.testing.assert_array_equal(got, ref.add(x, H.f32(0.1), 4, x, H.f32(0.1), 4, H.f32(0.25), -2))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_add_small_multipliers_do_not_overflow(variant):
    """Both scale ratios just above 2**-10: the shift is 31 and 2**30 + 255 * (a_m + b_m) no longer fits in
    int32. The sum is 255 * 2 * 1.5 * 2**-10 = 0.75 -> +1 above the output zero point."""
    y_scale = H.f32(1.0)
    s = H.f32(1.5 * 2.0 ** -10)
    a = np.array([127, 127, 100, -128, 0], dtype=np.int8)
    b = np.array([127, 100, 127, -128, 0], dtype=np.int8)
    expected = ref.add(a, s, -128, b, s, -128, y_scale, 0)
    assert expected[0] == 1
    check_add(variant, a, s, -128, b, s, -128, y_scale, 0)


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("ratio", [2.0 ** 8, 1000.0])
def test_add_rejects_scale_ratios_of_2_to_the_8_or_more(variant, ratio):
    a = np.zeros(4, np.int8)
    with pytest.raises(UnsupportedModelError, match=r"input scale / output scale is .*, 2\^8 or more"):
        H.add(variant, a, H.f32(ratio), 0, a, H.f32(ratio), 0, 1.0, 0)


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("zero_points", [(0, 0, 0), (-128, 127, 5), (127, -128, -128)])
def test_add_below_2_to_the_minus_10_runs_tflites_builtin_kernel(variant, zero_points):
    """Every int8 pair, ratios below XNNPACK's range (one or both): TFLite's builtin fixed point
    (tests/tflite/test_tflite_int8_arithmetic.py checks the same against ai-edge-litert)."""
    a, b = np.meshgrid(np.arange(-128, 128, dtype=np.int8), np.arange(-128, 128, dtype=np.int8))
    for a_scale, b_scale, y_scale in [(2.0 ** -11, 2.0 ** -11, 1.0), (0.5, 0.0004, 1.0), (1e-5, 3e-5, 0.7)]:
        assert ref.add_kernel(a_scale, b_scale, y_scale) == "builtin"
        check_add(variant, a.ravel(), H.f32(a_scale), zero_points[0], b.ravel(), H.f32(b_scale), zero_points[1],
                  H.f32(y_scale), zero_points[2])
