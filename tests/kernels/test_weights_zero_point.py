"""CONV_2D and FULLY_CONNECTED with weight zero points (ONNX's asymmetric weights): every variant
bit-exact against the reference, which computes sum (x - x_zp) (w - zw) directly. Per tensor, the
kernels compute [bias + sum (x - x_zp) w] - zw * sum (x - x_zp) per output pixel; per output channel,
they split w - zw[n] into two int8 halves over doubled taps (conv2d.c)."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
import qnnweb
from qnnweb_dev.reference import int8 as ref
from test_conv2d import _case, conv_cases
from test_fully_connected import fc_cases


def check_conv2d(variant, w_zp, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride, dilation, padding,
                 activation):
    expected = ref.conv2d(x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride, dilation, padding, activation,
                          w_zp=w_zp)
    got = H.conv2d(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride, dilation, padding, activation,
                   w_zp=w_zp)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


def check_fc(variant, w_zp, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, activation):
    expected = ref.fully_connected(x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, activation, w_zp=w_zp)
    got = H.fully_connected(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, activation, w_zp=w_zp)
    assert got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


weight_zero_points = st.one_of(st.integers(-128, 127), st.sampled_from([-128, 127, 1, -1]))


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=conv_cases(), w_zp=weight_zero_points)
def test_conv2d_weight_zero_point_matches_reference(variant, case, w_zp):
    check_conv2d(variant, w_zp, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=fc_cases(), w_zp=weight_zero_points)
def test_fully_connected_weight_zero_point_matches_reference(variant, case, w_zp):
    check_fc(variant, w_zp, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_conv2d_weight_zero_point_tiles_and_padding(variant):
    """Partial M tiles (143 and 9 pixels), partial N tiles, padding taps (which add 0 to the row sums)
    and whole rows of padding."""
    check_conv2d(variant, 77, **_case(20, 1, 13, 11, 37, 130, (1, 1)))
    check_conv2d(variant, -128, **_case(21, 1, 9, 9, 24, 19, (3, 3), padding=(1, 1, 1, 1), per_channel=False))
    check_conv2d(variant, 5, **_case(22, 2, 3, 3, 5, 9, (2, 2), padding=(3, 2, 2, 3), x_zp=127))
    check_conv2d(variant, -7, **_case(23, 1, 7, 9, 3, 16, (3, 3), stride=(2, 2), padding=(0, 1, 1, 1),
                                      activation="RELU6"))


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_conv2d_weight_zero_point_extremes(variant):
    """The largest products: (x - x_zp) = -255 and (w - zw) = -255 or 255 everywhere."""
    for w_value, w_zp in ((-128, 127), (127, -128)):
        case = _case(24, 1, 4, 5, 67, 20, (3, 3), x_zp=127, y_zp=-128, factor=1 / 8)
        case["x"] = np.full_like(case["x"], -128)
        case["w"] = np.full_like(case["w"], w_value)
        check_conv2d(variant, w_zp, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_fully_connected_weight_zero_point_uint8_style(variant):
    """uint8 weights with zero point 255 (test_qlinearconv's) XOR 0x80: int8 weights, zw = 127."""
    rng = np.random.default_rng(3)
    x = rng.integers(-128, 128, size=(5, 40), dtype=np.int8)
    w = rng.integers(-128, 128, size=(33, 40), dtype=np.int8)
    check_fc(variant, 127, x, H.f32(0.02), 4, w, (H.f32(0.003),), rng.integers(-999, 999, 33).astype(np.int32),
             H.f32(0.9), -3, "NONE")


def _depthwise_graph(w_zero_points):
    g = H.GraphBuilder()
    xi = g.input((1, 4, 4, 3), "int8", 0.1, 0)
    wi = g.constant(np.ones((1, 3, 3, 3), np.int8), "int8", (0.1, 0.1, 0.1), w_zero_points, quantized_dimension=3)
    yi = g.output((1, 2, 2, 3), "int8", 0.2, 0)
    g.op("DEPTHWISE_CONV_2D", [xi, wi, -1], [yi], stride=(1, 1), dilation=(1, 1), padding=[0, 0, 0, 0],
         activation="NONE")
    return g


def test_unsupported_weight_zero_points_are_reported():
    """A TFLite-style DEPTHWISE_CONV_2D with weight zero points (the ONNX importer makes such
    convolutions grouped CONV_2Ds instead)."""
    with pytest.raises(qnnweb.UnsupportedModelError, match="symmetric"):
        H.run(_depthwise_graph((3, 3, 3)), "scalar", np.zeros((1, 4, 4, 3), np.int8))


per_channel_zero_points = st.sampled_from(["random", "extremes", "equal"])


def _channel_zero_points(rng, kind, channels):
    if kind == "extremes":
        return rng.choice([-128, 127], size=channels)
    if kind == "equal":
        return np.full(channels, rng.integers(-128, 128))
    return rng.integers(-128, 128, size=channels)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(100))
@given(case=conv_cases(), kind=per_channel_zero_points, seed=H.seeds)
def test_conv2d_per_channel_weight_zero_points_match_reference(variant, case, kind, seed):
    zero_points = _channel_zero_points(np.random.default_rng(seed), kind, case["w"].shape[0])
    check_conv2d(variant, zero_points, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(100))
@given(case=fc_cases(), kind=per_channel_zero_points, seed=H.seeds)
def test_fully_connected_per_channel_weight_zero_points_match_reference(variant, case, kind, seed):
    zero_points = _channel_zero_points(np.random.default_rng(seed), kind, case["w"].shape[0])
    check_fc(variant, zero_points, **case)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_conv2d_per_channel_weight_zero_points_extremes(variant):
    """w - zw[n] = +-255 (both halves at their limits), padding taps, partial tiles."""
    case = _case(25, 1, 5, 6, 19, 21, (3, 3), padding=(1, 1, 1, 1), x_zp=127, y_zp=-128, factor=1 / 8)
    case["w"] = np.where(np.arange(21)[:, None, None, None] % 2 == 0, np.int8(-128), np.int8(127)) * np.ones_like(case["w"])
    zero_points = np.where(np.arange(21) % 2 == 0, 127, -128)
    check_conv2d(variant, zero_points, **case)


def test_onnx_qlinearconv_uint8_weights_with_zero_point_match_onnxruntime():
    """QLinearConv with padding, uint8 weights whose zero point (200) leaves w - zw outside int8: the
    importer keeps the weights (XOR 0x80) and the zero point; every variant equals onnxruntime."""
    import onnxruntime
    from onnx import TensorProto, helper, numpy_helper

    rng = np.random.default_rng(5)
    w = rng.integers(0, 256, size=(6, 4, 3, 3), dtype=np.uint8)
    constants = {"xs": np.array(0.02, np.float32), "xz": np.array(120, np.uint8), "w": w,
                 "ws": np.array(0.004, np.float32), "wz": np.array(200, np.uint8),
                 "ys": np.array(0.05, np.float32), "yz": np.array(131, np.uint8),
                 "b": rng.integers(-3000, 3000, size=6).astype(np.int32)}
    node = helper.make_node("QLinearConv", ["x", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"], ["y"],
                            pads=[1, 1, 1, 1], strides=[2, 1])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.UINT8, [1, 4, 7, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, [1, 6, 4, 6])],
                              [numpy_helper.from_array(v, k) for k, v in constants.items()])
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString()
    x = rng.integers(0, 256, size=(1, 4, 7, 6), dtype=np.uint8)
    expected = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    for variant in H.VARIANTS:
        np.testing.assert_array_equal(qnnweb.load(data, variant=variant).run(x)[0], expected, err_msg=variant)
