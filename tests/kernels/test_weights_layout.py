"""Weight layouts packed in C (weights_layout): CONV_2D OIHW, DEPTHWISE_CONV_2D [C*M, 1, KH, KW] and
FULLY_CONNECTED IO ([in, out], ONNX MatMul) give exactly what the TFLite layouts give: every variant
bit-exact against the same references."""

import numpy as np
import pytest
from hypothesis import given, settings

import harness as H
from qnnweb_dev.reference import int8 as ref
from test_conv2d import conv_cases
from test_depthwise_conv2d import dwconv_cases
from test_fully_connected import fc_cases


def _conv_args(case):
    return (case["x"], case["x_scale"], case["x_zp"], case["w"], case["w_scales"], case["bias"], case["y_scale"],
            case["y_zp"], case["stride"], case["dilation"], case["padding"], case["activation"])


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(60))
@given(case=conv_cases())
def test_conv2d_oihw(variant, case):
    expected = ref.conv2d(*_conv_args(case))
    np.testing.assert_array_equal(H.conv2d_layout(variant, *_conv_args(case)), expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(60))
@given(case=dwconv_cases())
def test_depthwise_conv2d_oihw(variant, case):
    expected = ref.depthwise_conv2d(*_conv_args(case))
    np.testing.assert_array_equal(H.conv2d_layout(variant, *_conv_args(case), depthwise=True), expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(60))
@given(case=fc_cases())
def test_fully_connected_io(variant, case):
    args = (case["x"], case["x_scale"], case["x_zp"], case["w"], case["w_scales"], case["bias"], case["y_scale"],
            case["y_zp"], case["activation"])
    np.testing.assert_array_equal(H.fully_connected_io(variant, *args), ref.fully_connected(*args))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_unknown_layout_is_unsupported(variant):
    import qnnweb
    g = H.GraphBuilder()
    x = g.input((1, 4, 4, 3), "int8", 0.1, 0)
    w = g.constant(np.ones((5, 3, 1, 1), np.int8), "int8", 0.01, 0)
    y = g.output((1, 4, 4, 5), "int8", 0.1, 0)
    g.op("CONV_2D", [x, w, -1], [y], stride=(1, 1), dilation=(1, 1), padding=[0, 0, 0, 0], activation="NONE",
         weights_layout="HWIO")
    with pytest.raises(qnnweb.UnsupportedModelError, match="weights_layout 'HWIO'"):
        H.run(g, variant, np.zeros((1, 4, 4, 3), np.int8))
