"""CONCATENATION (one copy_slice record per input, requantized when the quantization differs) and
TRANSPOSE (rank <= 4, any permutation, int8 and float32): every variant against numpy."""

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb_dev.reference import int8 as ref


@st.composite
def concat_cases(draw):
    rank = draw(st.integers(1, 4))
    shape = [draw(st.integers(1, 5)) for _ in range(rank - 1)] + [draw(st.one_of(H.channels, st.integers(1, 100)))]
    axis = draw(st.integers(0, rank - 1))
    y_scale, y_zp = draw(H.log_uniform(-8, 0)), draw(H.zero_points)
    rng = np.random.default_rng(draw(H.seeds))
    inputs = []
    for _ in range(draw(st.integers(1, 4))):
        s = list(shape)
        s[axis] = draw(st.integers(1, 20))
        if draw(st.booleans()):
            x_scale, x_zp = y_scale, y_zp                  # a plain copy
        else:
            x_scale = H.f32(y_scale * 2.0 ** draw(st.floats(-3, 3)))
            x_zp = draw(H.zero_points)
        inputs.append((H.int8_array(rng, tuple(s), draw(H.data_kinds)), x_scale, x_zp))
    negative = draw(st.booleans())
    return dict(inputs=inputs, axis=axis - rank if negative else axis, y_scale=y_scale, y_zp=y_zp)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(120))
@given(case=concat_cases())
def test_concatenation_matches_reference(variant, case):
    expected = ref.concatenate(case["inputs"], case["axis"], case["y_scale"], case["y_zp"])
    got = H.concatenation(variant, case["inputs"], case["axis"] % expected.ndim, case["y_scale"], case["y_zp"])
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_concatenation_same_tensor_twice_on_channels(variant):
    """A tensor concatenated with itself along C, as in inception / fire modules."""
    x = np.arange(-128, 127, dtype=np.int8)[:2 * 3 * 5].reshape(1, 2, 3, 5)
    g = H.GraphBuilder()
    xi = g.input(x.shape, "int8", 0.25, 1)
    yi = g.output((1, 2, 3, 10), "int8", 0.25, 1)
    g.op("CONCATENATION", [xi, xi], [yi], axis=-1, activation="NONE")
    np.testing.assert_array_equal(H.run(g, variant, x)[0], np.concatenate([x, x], axis=3))


@st.composite
def transpose_cases(draw):
    rank = draw(st.integers(1, 4))
    shape = tuple(draw(st.integers(1, 9)) for _ in range(rank))
    perm = draw(st.permutations(range(rank)))
    dtype = draw(st.sampled_from(["int8", "float32"]))
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, shape) if dtype == "int8" else rng.standard_normal(shape).astype(np.float32)
    return x, tuple(perm), dtype


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(120))
@given(case=transpose_cases())
def test_transpose_matches_numpy(variant, case):
    x, perm, dtype = case
    np.testing.assert_array_equal(H.transpose(variant, x, perm, dtype), np.transpose(x, perm))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_transpose_every_rank4_permutation_and_image_edges(variant):
    x = np.arange(2 * 3 * 4 * 5, dtype=np.float32).reshape(2, 3, 4, 5)
    for perm in itertools.permutations(range(4)):
        np.testing.assert_array_equal(H.transpose(variant, x, perm, "float32"), np.transpose(x, perm))
    image = np.random.default_rng(1).integers(-128, 128, (1, 3, 224, 224), dtype=np.int8)
    nhwc = H.transpose(variant, image, (0, 2, 3, 1))
    np.testing.assert_array_equal(nhwc, image.transpose(0, 2, 3, 1))
    np.testing.assert_array_equal(H.transpose(variant, nhwc, (0, 3, 1, 2)), image)
    # images of 1-4 channels, in a batch, with pixel counts that leave tails after the SIMD loop's 16s and
    # split unevenly among threads
    for shape in [(1, 3, 37, 29), (2, 3, 61, 97), (1, 1, 70, 300), (1, 4, 33, 131), (2, 2, 128, 65)]:
        image = np.random.default_rng(2).integers(-128, 128, shape, dtype=np.int8)
        np.testing.assert_array_equal(H.transpose(variant, image, (0, 2, 3, 1)), image.transpose(0, 2, 3, 1))
