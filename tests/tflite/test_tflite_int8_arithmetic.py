"""LiteRT's own integer arithmetic, op by op, against ai-edge-litert on every int8 input value.

Each model is one int8 op between int8 graph inputs and outputs (written field by field with
tflite_builder), so nothing but the op's arithmetic is compared: ADD (XNNPACK's 21-bit fixed point,
and TFLite's builtin fixed point where XNNPACK's delegate refuses an input / output scale ratio),
QUANTIZE int8 -> int8 (XNNPACK's convert inside its scale range, TFLite's reference Requantize
outside it) and HARD_SWISH (TFLite's int16 fixed-point kernel). Bit-exact, in every variant.
"""

from importlib import import_module

import numpy as np
import pytest
import qnnweb
from qnnweb import UnsupportedModelError
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb_dev.tflite_builder import ModelBuilder

EVERY_INT8 = np.arange(-128, 128, dtype=np.int8)


def unary_model(op_type, shape, x_scale, x_zp, y_scale, y_zp):
    m = ModelBuilder()
    x = m.tensor("x", shape, "int8", [x_scale], [x_zp])
    y = m.tensor("y", shape, "int8", [y_scale], [y_zp])
    m.op(op_type, [x], [y])
    return m.build([x], [y])


# (x_scale, x_zp, y_scale, y_zp): the ratios of real models (MobileNetV3's hard-swish inputs span a
# few units to ~100) and the edges of XNNPACK's convert range [2^-8, 2^7]
HARD_SWISH_CASES = [(0.05, -10, 0.03, -100), (0.2, 5, 0.1, -120), (0.8, 20, 0.4, -125), (0.02, 0, 0.02, 0),
                    (0.011, -128, 0.5, 127), (0.5, 127, 0.005, -128), (3.0, 3, 0.04, -90)]
REQUANTIZE_CASES = [(0.1, 3, 0.2, -3), (0.3, -128, 0.1, 127), (0.0371, 7, 0.0371, -9), (1.0, 0, 300.0, 0),
                    (0.01, -5, 0.01 * 2 ** -8, 0), (0.01, 0, 0.01 * 2 ** -7.5, 1), (1.0, 4, 2.0 ** -8 * 0.999, 2),
                    (100.0, 1, 0.5, -1)]


@pytest.mark.parametrize("case", HARD_SWISH_CASES, ids=str)
def test_hard_swish_matches_litert(case):
    x_scale, x_zp, y_scale, y_zp = case
    assert_matches_litert(unary_model("HARD_SWISH", [256], x_scale, x_zp, y_scale, y_zp), EVERY_INT8)


@pytest.mark.parametrize("case", REQUANTIZE_CASES, ids=str)
def test_quantize_int8_to_int8_matches_litert(case):
    x_scale, x_zp, y_scale, y_zp = case
    assert_matches_litert(unary_model("QUANTIZE", [256], x_scale, x_zp, y_scale, y_zp), EVERY_INT8)


@pytest.mark.parametrize("scales", [(0.2, 0.31, 0.37), (0.32211122, 0.1421955, 0.030077027), (0.05, 0.05, 0.05),
                                    (0.01, 0.9, 0.25), (4.0, 0.02, 1.5)], ids=str)
def test_add_matches_litert_on_every_pair(scales):
    a_scale, b_scale, y_scale = scales
    m = ModelBuilder()
    a = m.tensor("a", [256, 256], "int8", [a_scale], [-5])
    b = m.tensor("b", [256, 256], "int8", [b_scale], [12])
    y = m.tensor("y", [256, 256], "int8", [y_scale], [-3])
    m.op("ADD", [a, b], [y])
    pairs_a, pairs_b = np.meshgrid(EVERY_INT8, EVERY_INT8)
    assert_matches_litert(m.build([a, b], [y]), pairs_a, pairs_b)


def binary_model(op_type, a_scale, b_scale, y_scale, zero_points=(-5, 12, -3)):
    m = ModelBuilder()
    a = m.tensor("a", [256, 256], "int8", [a_scale], [zero_points[0]])
    b = m.tensor("b", [256, 256], "int8", [b_scale], [zero_points[1]])
    y = m.tensor("y", [256, 256], "int8", [y_scale], [zero_points[2]])
    m.op(op_type, [a, b], [y])
    return m.build([a, b], [y])


@pytest.mark.parametrize("scales", [(0.001, 0.5, 2.0), (0.5, 0.0004, 1.0), (0.0001, 0.0002, 1.0),
                                    (1e-5, 3e-5, 0.7), (2 ** -10 * 0.999, 1.0, 1.0), (2 ** -10, 1.0, 1.0)], ids=str)
@pytest.mark.parametrize("zero_points", [(-5, 12, -3), (127, -128, 100)], ids=str)
def test_add_below_the_delegates_scale_range_matches_litert(scales, zero_points):
    """A ratio below 2^-10 (a near-zero branch, or an input far finer than the output): XNNPACK's
    delegate does not take the ADD, and LiteRT runs TFLite's builtin kernel (35-62 of these 65,536
    pairs differed from XNNPACK's arithmetic)."""
    pairs_a, pairs_b = np.meshgrid(EVERY_INT8, EVERY_INT8)
    assert_matches_litert(binary_model("ADD", *scales, zero_points), pairs_a, pairs_b)


def test_add_of_a_constant_below_the_delegates_scale_range_matches_litert():
    m = ModelBuilder()
    a = m.tensor("a", [1, 16, 16, 8], "int8", [0.5], [3])
    b = m.tensor("b", [1, 1, 1, 8], "int8", [0.0003], [-7], data=np.arange(-100, 100, 25, dtype=np.int8))
    y = m.tensor("y", [1, 16, 16, 8], "int8", [1.0], [9])
    m.op("ADD", [a, b], [y])
    x = np.random.default_rng(3).integers(-128, 128, [1, 16, 16, 8]).astype(np.int8)
    assert_matches_litert(m.build([a], [y]), x)


@pytest.mark.parametrize("op_type, scales, words", [("ADD", (300.0, 0.5, 1.0), "input scale / output scale is 300"),
                                                    ("ADD", (0.5, 256.0, 1.0), r"2\^8 or more"),
                                                    ("MUL", (30.0, 30.0, 1.0), "output_scale is 900"),
                                                    ("MUL", (16.0, 16.0, 1.0), r"2\^8 or more")])
def test_add_and_mul_above_the_delegates_scale_range_are_refused(op_type, scales, words):
    """There LiteRT's builtin kernels wrap around in int32 (thousands of the 65,536 pairs saturate to
    the wrong end); qnnweb says so instead of giving other numbers."""
    with pytest.raises(UnsupportedModelError, match=words):
        qnnweb.load(binary_model(op_type, *scales))


@pytest.mark.parametrize("scales", [(16.0, 15.99, 1.0), (0.004, 0.001, 0.2), (2 ** -8, 2 ** -8 * 0.999, 1.0)], ids=str)
def test_mul_near_the_delegates_scale_limits_matches_litert(scales):
    pairs_a, pairs_b = np.meshgrid(EVERY_INT8, EVERY_INT8)
    assert_matches_litert(binary_model("MUL", *scales, (127, -128, 0)), pairs_a, pairs_b)


def test_mul_scale_is_the_delegates_float32_ratio():
    """XNNPACK's delegate rounds a_scale * b_scale to float32 before dividing by the output scale: here that
    ratio gives (-42 + 17) * (-3 + 128) = -3125 times it exactly -30.5 (to even: -30), the ratio rounded
    once from double -30.500002 (-31). The scales of a layer norm's MUL in MobileViT-xxs (TFLite sweep)."""
    pairs_a, pairs_b = np.meshgrid(EVERY_INT8, EVERY_INT8)
    model = binary_model("MUL", 0.027689164504408836, 0.008527548983693123, 0.024192694574594498, (-17, -128, -2))
    assert_matches_litert(model, pairs_a, pairs_b)


ADD_SCALES = [(0.2, 0.31, 0.37), (0.32211122, 0.1421955, 0.030077027), (0.05, 0.05, 0.05), (0.01, 0.9, 0.25),
              (4.0, 0.02, 1.5)]
BELOW_RANGE_SCALES = [(0.001, 0.5, 2.0), (0.5, 0.0004, 1.0), (0.0001, 0.0002, 1.0), (2 ** -10 * 0.999, 1.0, 1.0)]


@pytest.mark.parametrize("zero_points", [(-5, 12, -3), (127, -128, 100)], ids=str)
@pytest.mark.parametrize("scales", ADD_SCALES + BELOW_RANGE_SCALES, ids=str)
def test_sub_matches_litert_on_every_pair(scales, zero_points):
    """SUB: XNNPACK's subtract inside the delegate's scale range, TFLite's builtin kernel (which
    negates the scaled second input) below it; every one of the 65,536 input pairs."""
    pairs_a, pairs_b = np.meshgrid(EVERY_INT8, EVERY_INT8)
    assert_matches_litert(binary_model("SUB", *scales, zero_points), pairs_a, pairs_b)


def _sub_options(activation):
    sub_options = import_module("tflite.SubOptions")  # the module (``tflite.SubOptions`` is its class)

    def write(b):
        sub_options.Start(b)
        sub_options.AddFusedActivationFunction(b, activation)
        return sub_options.End(b)

    return write


@pytest.mark.parametrize("constant_first", [False, True], ids=["x-c", "c-x"])
@pytest.mark.parametrize("scales", [(0.5, 0.02, 0.1), (0.5, 0.0003, 1.0)], ids=str)
def test_sub_of_a_constant_either_side_with_relu_matches_litert(constant_first, scales):
    """A constant on either side (qnnweb puts the tensor first: the other input is the subtracted one
    then), broadcast over channels, with a fused RELU."""
    from tflite.ActivationFunctionType import ActivationFunctionType
    from tflite.BuiltinOptions import BuiltinOptions

    x_scale, c_scale, y_scale = scales
    m = ModelBuilder()
    x = m.tensor("x", [1, 16, 16, 8], "int8", [x_scale], [3])
    c = m.tensor("c", [1, 1, 1, 8], "int8", [c_scale], [-7], data=np.arange(-100, 100, 25, dtype=np.int8))
    y = m.tensor("y", [1, 16, 16, 8], "int8", [y_scale], [-20])
    m.op("SUB", [c, x] if constant_first else [x, c], [y],
         (BuiltinOptions.SubOptions, _sub_options(ActivationFunctionType.RELU)))
    data = np.random.default_rng(4).integers(-128, 128, [1, 16, 16, 8]).astype(np.int8)
    assert_matches_litert(m.build([x], [y]), data)


@pytest.mark.parametrize("op_type", ["MAXIMUM", "MINIMUM"])
@pytest.mark.parametrize("zero_points", [(-5, 12, -3), (0, 0, 0)], ids=str)
@pytest.mark.parametrize("scales", [(0.1, 0.1, 0.1), (0.2, 0.05, 0.7)], ids=str)
def test_maximum_and_minimum_match_litert_on_every_pair(op_type, scales, zero_points):
    """MAXIMUM / MINIMUM compare the stored values, unequal quantizations included (LiteRT does not
    requantize: the converters give all three tensors one quantization)."""
    pairs_a, pairs_b = np.meshgrid(EVERY_INT8, EVERY_INT8)
    assert_matches_litert(binary_model(op_type, *scales, zero_points), pairs_a, pairs_b)


@pytest.mark.parametrize("op_type", ["MAXIMUM", "MINIMUM"])
def test_maximum_of_a_constant_matches_litert(op_type):
    """A per-channel constant on the first input (qnnweb runs it as the second), like a clamp."""
    m = ModelBuilder()
    c = m.tensor("c", [8], "int8", [0.1], [2], data=np.arange(-100, 100, 25, dtype=np.int8))
    x = m.tensor("x", [1, 16, 16, 8], "int8", [0.1], [2])
    y = m.tensor("y", [1, 16, 16, 8], "int8", [0.1], [2])
    m.op(op_type, [c, x], [y])
    data = np.random.default_rng(5).integers(-128, 128, [1, 16, 16, 8]).astype(np.int8)
    assert_matches_litert(m.build([x], [y]), data)
