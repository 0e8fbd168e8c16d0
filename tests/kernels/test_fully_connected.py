"""FULLY_CONNECTED (lowered to a 1x1 conv over the rows): every variant bit-exact."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb_dev.reference import int8 as ref


def check_fc(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, activation):
    expected = ref.fully_connected(x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, activation)
    got = H.fully_connected(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, activation)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@st.composite
def fc_cases(draw):
    k = draw(st.one_of(H.channels, st.integers(41, 300)))
    oc = draw(st.one_of(H.channels, st.sampled_from([100, 257, 1000])))
    rows = draw(st.integers(1, max(1, min(40, 600_000 // (k * oc)))))
    shape = draw(st.sampled_from(["2d", "1d", "4d"])) if rows == 1 else "2d"
    x_shape = {"2d": (rows, k), "1d": (k,), "4d": (1, 1, 1, k)}[shape]
    rng = np.random.default_rng(draw(H.seeds))
    x = H.int8_array(rng, x_shape, draw(H.data_kinds))
    w = H.weights_array(rng, (oc, k), draw(H.weight_kinds))
    x_scale = draw(H.log_uniform(-10, 0))
    if draw(st.booleans()):
        w_scales = tuple(H.f32(s) for s in 2.0 ** rng.uniform(-10, -4, size=oc))
    else:
        w_scales = (draw(H.log_uniform(-10, -4)),)
    bias = H.bias_array(rng, oc, draw(st.one_of(st.none(), st.integers(0, 24))))
    y_scale = H.output_scale_for(x_scale, max(w_scales), k, draw(H.log_uniform(-5, 4)))
    activation = draw(st.sampled_from(H.ACTIVATIONS))
    x_scale, y_scale = H.fit_activation(draw, activation, x_scale, y_scale)
    return dict(x=x, x_scale=x_scale, x_zp=draw(H.zero_points), w=w, w_scales=w_scales, bias=bias,
                y_scale=y_scale, y_zp=draw(H.zero_points), activation=activation)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(300))
@given(case=fc_cases())
def test_fully_connected_matches_reference(variant, case):
    check_fc(variant, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_fully_connected_classifier_head(variant):
    """A 1x1024 -> 1001 classifier head with per-tensor weights, as in MobileNet v1."""
    rng = np.random.default_rng(0)
    x = rng.integers(-128, 128, size=(1, 1024), dtype=np.int8)
    w = rng.integers(-127, 128, size=(1001, 1024), dtype=np.int8)
    bias = rng.integers(-20000, 20000, size=1001).astype(np.int32)
    check_fc(variant, x, H.f32(0.0235), -128, w, (H.f32(0.0018),), bias,
             H.output_scale_for(0.0235, 0.0018, 1024, 1.0), -20, "NONE")


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_fully_connected_single_input_and_output(variant):
    x = np.array([[-128], [127], [0]], dtype=np.int8)
    w = np.array([[-128]], dtype=np.int8)
    check_fc(variant, x, H.f32(0.5), 3, w, (H.f32(0.25),), np.array([7], np.int32), H.f32(0.75), -1, "NONE")
