"""Weights and biases of Conv, ConvTranspose, Gemm and MatMul: int8 constants (dequantized in QDQ form, with
their own scale and zero point inputs in QOperator form) and int32 (or float) biases, as the kernels take them."""

import math
import struct

from ...numerics.float32 import float32
from ..shape_folding import product
from .constants import XOR_0x80, Constant, int8_data
from .quantization import qparams
from .skip import Skip

BYTES = bytes(range(256))   # the identity byte table, sliced into the centring tables below


def weights_index(ctx, name, scale_name=None, zero_point_name=None, axis=0):
    """IR index of an int8 weight tensor: a DequantizeLinear of a constant (QDQ), or a constant with
    explicit scale / zero point inputs (QOperator)."""
    if scale_name is None:
        q = ctx.quantized_constants.get(name)
        if q is None and name in ctx.constants and ctx.constants[name].dtype == "float32":
            raise Skip(f"weights '{name}' are float: the quantizer left this op in float (its QOperator format "
                       "has no quantized form of it, e.g. ConvTranspose); only int8 ops run: quantize with "
                       "quant_format=QDQ")
        if q is None:
            raise Skip(f"weights '{name}' must be a dequantized int8 constant")
        constant, scales, zero_points, axis = q.constant, q.scale, q.zero_point, q.axis
        dtype = constant.dtype
    else:
        if name not in ctx.constants:
            raise Skip(f"weights '{name}' must be a constant")
        constant = ctx.constants[name]
        scales, zero_points, dtype = qparams(ctx, scale_name, zero_point_name, "weights", allow_vector=True)
        if dtype != constant.dtype:
            raise Skip(f"weights are {constant.dtype} but their zero point is {dtype}")
    if dtype not in ("int8", "uint8"):
        raise Skip(f"weights '{name}' are {dtype}; only int8 and uint8 weights are supported")
    axis = axis % len(constant.shape) if constant.shape else 0
    data, weight_zero_points = centered_weights(name, constant, dtype, zero_points, axis)
    return ctx.add_tensor(name, constant.shape, "int8", scales, weight_zero_points, data, axis)


def centered_weights(name, constant, dtype, zero_points, axis):
    """(int8 bytes, weight zero points, one per scale). Centred, (w - zero_point, 0s), whenever
    w - zero_point fits in int8, which holds for symmetric int8 weights and for uint8 weights with
    zero point 128: then the kernels run their symmetric path, at no cost. Otherwise the int8
    weights (uint8 XOR 0x80, exact) and their zero points, which CONV_2D and FULLY_CONNECTED
    subtract at run time (per tensor: a per-row correction; per channel: split weights). Done with
    bytes.translate, so it costs no Python loop per weight. Zero points are in int8 terms (uint8
    ones already moved by -128)."""
    count = len(zero_points)
    # Offset domain: u = w + 128 for int8 data, u = w for uint8 data; zero point u_zp = zp + 128.
    data = constant.data if dtype == "uint8" else constant.data.translate(XOR_0x80)
    if len(set(zero_points)) == 1:
        slices = [(0, len(data), zero_points[0])]
    elif axis == 0 and len(zero_points) == constant.shape[0]:
        step = len(data) // constant.shape[0]
        slices = [(i * step, (i + 1) * step, z) for i, z in enumerate(zero_points)]
    else:  # zero points along another axis (MatMul's [K, N] weights): the kernels subtract them
        return int8_data(constant, dtype), tuple(zero_points)
    out = bytearray(len(data))
    for start, end, zero_point in slices:
        chunk = data[start:end]
        if not chunk:
            continue
        u_zp = zero_point + 128
        # the bytes u whose u - u_zp leaves int8 (none when u_zp is 128); min / max: ~20 ns a byte
        outside = BYTES[:max(u_zp - 128, 0)] + BYTES[min(u_zp + 128, 256):]
        if outside and len(chunk.translate(None, outside)) != len(chunk):
            return int8_data(constant, dtype), tuple(zero_points)
        out[start:end] = chunk.translate(BYTES[256 - u_zp:] + BYTES[:256 - u_zp])   # u -> (u - u_zp) & 0xFF
    return bytes(out), (0,) * count


def bias_index(ctx, name, input_scale, weight_scales, channels, float_bias=False):
    """int32 bias: a DequantizeLinear of an int32 constant (QDQ) or the constant itself (QOperator),
    whose scale must be input scale x weight scale (the TFLite / onnxruntime convention). With
    ``float_bias`` (a QDQ Conv, Gemm or ConvTranspose), also a float32 constant the quantizer left in
    float (quantize_static's QuantizeBias=False), quantized as onnxruntime's BiasQuantization transformer
    does before it fuses a Conv or Gemm: round_half_even(float32(b / float32(input scale x weight scale)))."""
    if not name:
        return -1
    if name in ctx.quantized_constants:
        q = ctx.quantized_constants[name]
        constant, scales = q.constant, q.scale
        if any(z != 0 for z in q.zero_point):
            raise Skip("bias has a non-zero zero point")
    elif name in ctx.constants:
        constant, scales = ctx.constants[name], None
        if constant.dtype == "float32" and float_bias and product(constant.shape) == channels:
            return ctx.add_tensor(name, (channels,), "int32",
                                data=quantized_float_bias(name, constant, input_scale, weight_scales))
    else:
        raise Skip(f"bias '{name}' must be an int32 constant")
    if constant.dtype != "int32" or product(constant.shape) != channels:
        raise Skip(f"bias '{name}' must be int32 with {channels} values (it is {constant.dtype} "
                   f"{list(constant.shape)})")
    if scales is not None:
        expected = [input_scale * w for w in (weight_scales if len(weight_scales) > 1 else weight_scales * channels)]
        given = scales if len(scales) > 1 else scales * channels
        if len(given) != channels:
            raise Skip(f"bias '{name}' has {len(given)} scales for {channels} channels")
        if any(abs(g - e) > 1e-6 * e + 1e-30 for g, e in zip(given, expected)):
            if not float_bias:
                raise Skip("bias scale is not input scale x weight scale")
            # a bias quantized with another op's scales (the quantizer shares one bias initializer between
            # convolutions with equal float biases): onnxruntime does not fuse this op, it adds the
            # dequantized bias in float; here it is quantized again at input scale x weight scale
            dequantized = Constant(name, "float32", constant.shape,
                                   struct.pack(f"<{channels}f", *(float32(v * float32(g)) for v, g in
                                                                  zip(constant.values(), given))))
            return ctx.add_tensor(name, (channels,), "int32",
                                  data=quantized_float_bias(name, dequantized, input_scale, weight_scales))
    return ctx.add_tensor(name, (channels,), "int32", data=constant.data)


def quantized_float_bias(name, constant, input_scale, weight_scales):
    values = constant.values()
    scales = [float32(input_scale * w) for w in (weight_scales if len(weight_scales) > 1
                                                 else weight_scales * len(values))]
    quotients = [float32(b / s) if s else math.inf for b, s in zip(values, scales)]
    # an infinite or NaN bias (or scale) has no int32 value: refused like one out of range
    if any(not (math.isfinite(v) and -2**31 <= round(v) < 2**31) for v in quotients):
        raise Skip(f"float bias '{name}' is not finite or does not fit in int32 at input scale x weight scale")
    return struct.pack(f"<{len(quotients)}i", *(round(v) for v in quotients))
