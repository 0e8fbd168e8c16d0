"""TFLite's int8 EXP, RSQRT, SQUARED_DIFFERENCE and DIV against ai-edge-litert, on every int8 input value
(every pair for the binary ops), bit-exact, in every variant.

LiteRT runs them on its builtin kernels (XNNPACK's delegate takes them in float only), whose arithmetic
qnnweb tabulates (qnnweb.numerics.tflite): EXP's float32 LUTPopulate, RSQRT's fixed-point inverse square
root, SQUARED_DIFFERENCE's and DIV's 31-bit multipliers and gemmlowp reciprocal. They are the ops
litert-torch writes a layer norm (MEAN, SQUARED_DIFFERENCE, ADD, RSQRT, MUL) and a written-out softmax
(REDUCE_MAX, SUB, EXP, SUM, DIV) with.
"""

import numpy as np
import pytest
import qnnweb
from qnnweb import UnsupportedModelError
from qnnweb_dev.litert_check import assert_matches_litert, litert
from qnnweb_dev.tflite_builder import ModelBuilder, options
from tflite.ActivationFunctionType import ActivationFunctionType

EVERY_INT8 = np.arange(-128, 128, dtype=np.int8)
PAIRS_A, PAIRS_B = np.meshgrid(EVERY_INT8, EVERY_INT8)


def unary_model(op_type, x_scale, x_zp, y_scale, y_zp, shape=(256,)):
    m = ModelBuilder()
    x = m.tensor("x", list(shape), "int8", [x_scale], [x_zp])
    y = m.tensor("y", list(shape), "int8", [y_scale], [y_zp])
    m.op(op_type, [x], [y])
    return m.build([x], [y])


def binary_model(op_type, a, b, y, constant=None, op_options=None):
    """a, b, y: (shape, scale, zero point); constant: (which input, its int8 values) or None."""
    m = ModelBuilder()
    tensors = [m.tensor(name, shape, "int8", [scale], [zp],
                        data=constant[1] if constant is not None and constant[0] == name else None)
               for name, (shape, scale, zp) in zip("ab", (a, b))]
    out = m.tensor("y", y[0], "int8", [y[1]], [y[2]])
    m.op(op_type, tensors, [out], op_options)
    inputs = [t for name, t in zip("ab", tensors) if constant is None or constant[0] != name]
    return m.build(inputs, [out])


# (x_scale, x_zp, y_scale, y_zp): a written-out softmax's exp of x - max <= 0 into [0, 1]; wider inputs
# whose exponentials overflow the output (LiteRT saturates them) or float32 itself (exp(127 * 0.9))
EXP_CASES = [(0.05, 127, 1 / 256, -128), (0.1, 100, 0.004, -128), (0.02, -3, 0.03, -100), (0.9, 0, 0.5, 0),
             (0.3, -60, 0.001, 110), (0.0123, 37, 0.0071, -77)]
# a layer norm's variance + eps (scale ~0.01, zero point -128: non-negative values) into 1 / sqrt
RSQRT_CASES = [(0.009114, -128, 0.1097, -128), (0.05, -128, 0.02, -100), (0.0003, -128, 0.9, -128),
               (0.2, -40, 0.01, 0), (1.5, 0, 0.004, -128), (0.02, 100, 0.3, 17)]
# (a_scale, b_scale, y_scale) with (a_zp, b_zp, y_zp): the layer norm's x and its mean (a coarser and a
# finer input), equal scales, and the edges of the zero points
SQUARED_DIFFERENCE_CASES = [((0.03991, 0.001056, 0.1095), (-1, -24, -128)), ((0.05, 0.05, 0.02), (3, 3, -128)),
                            ((0.002, 0.07, 0.3), (127, -128, 50)), ((0.01, 0.011, 0.0009), (-7, 20, -128))]
DIV_CASES = [((1 / 256, 0.01, 1 / 256), (-128, -128, -128)), ((0.05, 0.04, 0.02), (-3, 2, 5)),
             ((0.0874, 0.981, 0.0702), (43, -30, 67)), ((0.0209, 0.0189, 0.0316), (-7, 114, 116)),
             ((0.3, 0.002, 0.9), (0, 0, 0)), ((0.001, 0.6, 0.0001), (-100, 100, -20))]


@pytest.mark.parametrize("case", EXP_CASES, ids=str)
def test_exp_matches_litert(case):
    assert_matches_litert(unary_model("EXP", *case), EVERY_INT8)


@pytest.mark.parametrize("case", EXP_CASES + [(0.0517, 3, 1 / 256, -128), (0.2, -128, 0.9, -128)], ids=str)
def test_exp_left_in_float_matches_litert(case):
    """ai-edge-quantizer leaves a written-out softmax's EXP in float: DEQUANTIZE, EXP, QUANTIZE (which
    LiteRT's XNNPACK delegate runs in float): qnnweb's table of the float exp of each dequantized value."""
    x_scale, x_zp, y_scale, y_zp = case
    m = ModelBuilder()
    x = m.tensor("x", [256], "int8", [x_scale], [x_zp])
    x_float, y_float = m.tensor("x_float", [256], "float32"), m.tensor("y_float", [256], "float32")
    y = m.tensor("y", [256], "int8", [y_scale], [y_zp])
    m.op("DEQUANTIZE", [x], [x_float])
    m.op("EXP", [x_float], [y_float])
    m.op("QUANTIZE", [y_float], [y])
    assert_matches_litert(m.build([x], [y]), EVERY_INT8)


@pytest.mark.parametrize("case", RSQRT_CASES, ids=str)
def test_rsqrt_matches_litert(case):
    """Every input at or above the zero point (LiteRT stops with an error below it: a negative value)."""
    x_zp = case[1]
    values = EVERY_INT8[EVERY_INT8 >= x_zp]
    assert_matches_litert(unary_model("RSQRT", *case, shape=(values.size,)), values)


def test_rsqrt_below_the_zero_point_gives_the_largest_value():
    """LiteRT refuses to run on a negative input; qnnweb gives 127, as for zero (1 / sqrt(0))."""
    data = unary_model("RSQRT", 0.05, 0, 0.02, -100, shape=(3,))
    with pytest.raises(RuntimeError, match="Rsqrt is only defined for positive values"):
        litert(data, np.array([-5, 0, 7], np.int8))
    ours, = qnnweb.load(data).run(np.array([-5, 0, 7], np.int8))
    assert ours[:2].tolist() == [127, 127] and ours[2] == litert(data, np.array([0, 0, 7], np.int8))[2]


@pytest.mark.parametrize("scales, zero_points", SQUARED_DIFFERENCE_CASES, ids=str)
def test_squared_difference_matches_litert_on_every_pair(scales, zero_points):
    a, b, y = ((PAIRS_A.shape, s, zp) for s, zp in zip(scales, zero_points))
    assert_matches_litert(binary_model("SQUARED_DIFFERENCE", a, b, y), PAIRS_A, PAIRS_B)


@pytest.mark.parametrize("shape", [(1, 65, 192), (2, 7, 16), (1, 1, 5)], ids=str)
def test_squared_difference_of_tokens_and_their_mean_matches_litert(shape):
    """The layer norm's form: tokens [.., N, C] minus their mean [.., N, 1], broadcast over channels."""
    mean_shape = (*shape[:-1], 1)
    model = binary_model("SQUARED_DIFFERENCE", (shape, 0.03991, -1), (mean_shape, 0.001056, -24),
                         (shape, 0.1095, -128))
    rng = np.random.default_rng(sum(shape))
    x = rng.integers(-128, 128, shape).astype(np.int8)
    assert_matches_litert(model, x, rng.integers(-128, 128, mean_shape).astype(np.int8))


def test_squared_difference_whose_output_multiplier_is_one_or_more_is_refused():
    """TFLite's kernel assumes (twice the larger input scale)^2 / (2^14 * output scale) < 1."""
    shape = (4, 4)
    with pytest.raises(UnsupportedModelError, match="rescaling factor"):
        qnnweb.load(binary_model("SQUARED_DIFFERENCE", (shape, 1.0, 0), (shape, 1.0, 0), (shape, 1e-5, 0)))


def _nonzero_divisors(b_zp):
    """Every int8 divisor but the zero point (LiteRT stops with an error on a zero divisor)."""
    return np.where(PAIRS_B == b_zp, np.int8(b_zp + 1 if b_zp < 127 else b_zp - 1), PAIRS_B)


@pytest.mark.parametrize("scales, zero_points", DIV_CASES, ids=str)
def test_div_matches_litert_on_every_pair(scales, zero_points):
    """Every pair, tiny quotients included (there LiteRT's x86 build shifts by 32 or more, which C leaves
    undefined; qnnweb follows what it measured)."""
    a, b, y = ((PAIRS_A.shape, s, zp) for s, zp in zip(scales, zero_points))
    assert_matches_litert(binary_model("DIV", a, b, y), PAIRS_A, _nonzero_divisors(zero_points[1]))


@pytest.mark.parametrize("constant", ["a", "b"])
@pytest.mark.parametrize("activation", [ActivationFunctionType.NONE, ActivationFunctionType.RELU])
def test_div_with_a_constant_either_side_broadcast_matches_litert(constant, activation):
    """A constant dividend or divisor broadcast over channels (qnnweb's lut2d takes the tensor first: the
    table is transposed then), with a fused activation."""
    shape, channel_shape = (1, 6, 5, 8), (1, 1, 1, 8)
    values = np.array([-100, -60, -20, -7, 9, 30, 77, 120], np.int8)   # none is the zero point 3
    a = (channel_shape if constant == "a" else shape, 0.05, 3)
    b = (channel_shape if constant == "b" else shape, 0.04, 3)
    model = binary_model("DIV", a, b, (shape, 0.1, -20), constant=(constant, values),
                         op_options=options("DivOptions", FusedActivationFunction=activation))
    x = np.random.default_rng(5).integers(-128, 128, shape).astype(np.int8)
    x[x == 3] = 4
    assert_matches_litert(model, x)
