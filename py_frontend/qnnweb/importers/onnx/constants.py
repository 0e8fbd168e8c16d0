"""ONNX constants (initializers, Constant nodes, folded shape arithmetic) and the dequantized ones
(DequantizeLinear of a constant: weights, biases), and the reads of constant inputs the handlers make."""

import struct

from ...numerics.float32 import float32
from ..shape_folding import product
from .proto import unpack
from .skip import Skip


class Constant:
    def __init__(self, name, dtype, shape, data):
        self.name, self.dtype, self.shape, self.data = name, dtype, tuple(shape), data

    def values(self):
        return unpack(self.dtype, self.data)


class QuantizedConstant:
    """DequantizeLinear of a constant: int8/int32 data with its scale(s) and zero point(s)."""

    def __init__(self, constant, scale, zero_point, axis):
        self.constant, self.scale, self.zero_point, self.axis = constant, scale, zero_point, axis

    def dequantized(self, per_axis=False):
        """Its float32 values as DequantizeLinear gives them, (q - zero point) * scale in float32; None when
        it is quantized per axis, unless ``per_axis``: then element i takes the scale and zero point of its
        index along ``axis`` (None when their counts differ). (Zero points are in int8 terms: a uint8
        constant's data moves by 128.)"""
        count = len(self.scale)
        if len(self.zero_point) != count or (count != 1 and not per_axis):
            return None
        shift = 128 if self.constant.dtype == "uint8" else 0
        shape = self.constant.shape
        inner = product(shape[self.axis % len(shape) + 1:]) if count > 1 else 1
        scales = [float32(s) for s in self.scale]
        return [float32(float32(v - shift - self.zero_point[i // inner % count]) * scales[i // inner % count])
                for i, v in enumerate(self.constant.values())]


XOR_0x80 = bytes(b ^ 0x80 for b in range(256))  # int8 <-> uint8 with the zero point moved by 128


def int8_data(constant, dtype):
    """A uint8 or int8 constant's data as int8 (uint8 XOR 0x80: the zero point moves by 128)."""
    return constant.data.translate(XOR_0x80) if dtype == "uint8" else constant.data


def int32_bytes(values):
    return struct.pack(f"<{len(values)}i", *values)


def required_constant(ctx, name, what):
    if name not in ctx.constants:
        raise Skip(f"{what} '{name}' must be a constant")
    return ctx.constants[name]


def int_values(ctx, name, what):
    constant = required_constant(ctx, name, what)
    if constant.dtype not in ("int32", "int64"):
        raise Skip(f"{what} is {constant.dtype}; expected int32 or int64")
    return [int(v) for v in constant.values()]


def float_values(ctx, name):
    constant = required_constant(ctx, name, "scales")
    if constant.dtype != "float32":
        raise Skip(f"scales are {constant.dtype}; expected float32")
    return [float(v) for v in constant.values()]


def int32_constant(ctx, name, values):
    return ctx.add_tensor(name, [len(values)], "int32", data=int32_bytes(values))
