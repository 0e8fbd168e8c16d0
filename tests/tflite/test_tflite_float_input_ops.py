"""Float ops of a TFLite model on its float input before its QUANTIZE (an input normalization kept in the
model: SUB of the mean, MUL or DIV by the scale, ADD with a fused activation): the binary_f32 record,
byte for byte against ai-edge-litert (XNNPACK's float kernels) in every variant."""

import numpy as np
import pytest
from qnnweb_dev.litert_check import assert_matches_litert
from tflite.ActivationFunctionType import ActivationFunctionType
from tflite.BuiltinOptions import BuiltinOptions
from qnnweb_dev.tflite_builder import ModelBuilder

RNG = np.random.default_rng(1204)
SHAPE = [1, 7, 9, 3]


def fused(options_type, activation):
    """(BuiltinOptions type, the options table: fused_activation_function in its first slot)."""
    def table(b):
        b.StartObject(1)
        b.PrependInt8Slot(0, getattr(ActivationFunctionType, activation), 0)
        return b.EndObject()
    return options_type, table


def floats(m, name, values):
    values = np.asarray(values, np.float32)
    return m.tensor(name, list(values.shape), "float32", data=values.tobytes())


@pytest.mark.parametrize("activation", ["NONE", "RELU", "RELU6", "RELU_N1_TO_1"])
@pytest.mark.parametrize("divide", [False, True], ids=["mul", "div"])
def test_normalization_then_quantize_matches_litert(divide, activation):
    m = ModelBuilder()
    x = m.tensor("x", SHAPE, "float32")
    mean = floats(m, "mean", [0.485, 0.456, 0.406])
    std = floats(m, "std", [0.229, 0.224, 0.225] if divide else [1 / 0.229, 1 / 0.224, 1 / 0.225])
    shift = floats(m, "shift", [0.25])
    t = [m.tensor(f"t{k}", SHAPE, "float32") for k in range(3)]
    y = m.tensor("y", SHAPE, "int8", [0.02], [-3])
    m.op("SUB", [x, mean], [t[0]], fused(BuiltinOptions.SubOptions, "NONE"))
    m.op("DIV" if divide else "MUL", [t[0], std], [t[1]],
         fused(BuiltinOptions.DivOptions if divide else BuiltinOptions.MulOptions, "NONE"))
    m.op("ADD", [shift, t[1]], [t[2]], fused(BuiltinOptions.AddOptions, activation))   # the constant first
    m.op("QUANTIZE", [t[2]], [y])
    data = m.build([x], [y])
    assert_matches_litert(data, RNG.uniform(-0.5, 1.5, SHAPE).astype(np.float32))


def test_float_output_with_infinities_matches_litert():
    """DIV by a constant holding a zero, its float result an output (and quantized, the other one):
    infinities of either sign and signed zeros as LiteRT gives them. (No 0 / 0: the NaN it makes
    quantizes to 127 in LiteRT's x86 kernels, to 0 in qnnweb's.)"""
    m = ModelBuilder()
    x = m.tensor("x", SHAPE, "float32")
    divisor = floats(m, "divisor", [2.0, 0.0, -0.5])
    y = m.tensor("y", SHAPE, "float32")
    q = m.tensor("q", SHAPE, "int8", [0.05], [0])
    m.op("DIV", [x, divisor], [y], fused(BuiltinOptions.DivOptions, "NONE"))
    m.op("QUANTIZE", [y], [q])
    data = m.build([x], [y, q])
    x_values = RNG.uniform(-1, 1, SHAPE).astype(np.float32)
    x_values[0, 0, :2, 0] = 0.0    # 0 / 2
    x_values[0, 0, 2, 2] = -0.0    # -0 / -0.5
    with np.errstate(divide="ignore", invalid="ignore"):
        assert_matches_litert(data, x_values)
