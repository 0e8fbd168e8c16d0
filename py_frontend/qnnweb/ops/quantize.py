"""The QUANTIZE and DEQUANTIZE lowerings: float32 -> int8, int8 -> float32, int8 -> int8 of another
quantization, and uint8 <-> int8 at a model's edges. Records: quantize, dequantize, requantize, lut
(byte to byte tables), lut_f32 (uint8 dequantization), quantize_channels and dequantize_channels.

Both also take a tensor quantized per axis (one scale and zero point per channel along
``quantized_dimension``, ONNX's per-axis QuantizeLinear / DequantizeLinear at a model's edges: the
*_channels records); uint8 <-> int8 of such a tensor is XOR 0x80."""

import struct

from ..numerics.float32 import float32, float32_bytes
from ..numerics.onnxruntime import make_table_onnxruntime
from ..numerics.tflite import quantize_reciprocal, requantize_int8_table
from .registry import Step, Unsupported, lowering
from .common import require_byte_quantized, require_int8
from .unary import requantize_table

XOR_0x80_TABLE = bytes(b ^ 0x80 for b in range(256))


def _per_axis(tensor):
    return len(tensor.scale) > 1 or len(tensor.zero_point) > 1


def _channel_fields(tensor, role):
    """(record fields, constants) of a per-channel conversion: the tensor as [outer, channels, inner]."""
    if tensor.dtype != "int8":
        raise Unsupported(f"{role} '{tensor.name}' is {tensor.dtype} quantized per axis; expected int8")
    axis, shape = tensor.quantized_dimension, tensor.shape
    if not 0 <= axis < len(shape) or not len(tensor.scale) == len(tensor.zero_point) == shape[axis]:
        raise Unsupported(f"{role} '{tensor.name}' {list(shape)} has {len(tensor.scale)} scales along axis {axis}")
    if any(not 0 < s < float("inf") for s in tensor.scale) or any(not -128 <= z <= 127 for z in tensor.zero_point):
        raise Unsupported(f"{role} '{tensor.name}' has an invalid scale or zero point")
    outer = inner = 1
    for d in shape[:axis]:
        outer *= d
    for d in shape[axis + 1:]:
        inner *= d
    fields = dict(outer=outer, channels=shape[axis], inner=inner)
    constants = {"scales": float32_bytes(tensor.scale),
                 "zero_points": struct.pack(f"<{shape[axis]}i", *tensor.zero_point)}
    return fields, constants


def _lower_per_axis_quantize(op, x, y):
    if x.dtype == "float32":
        fields, constants = _channel_fields(y, "output")
        return [Step("quantize_channels", dict(fields, input=op.inputs[0], output=op.outputs[0]), constants)]
    # uint8 <-> int8 at a model's edge: same scales, zero points 128 apart, so the bytes XOR 0x80.
    shift = 128 if (x.dtype, y.dtype) == ("int8", "uint8") else -128 if (x.dtype, y.dtype) == ("uint8", "int8") else None
    if (shift is None or x.scale != y.scale or x.quantized_dimension != y.quantized_dimension
            or len(x.zero_point) != len(y.zero_point)
            or any(zy - zx != shift for zx, zy in zip(x.zero_point, y.zero_point))):
        raise Unsupported(f"'{x.name}' or '{y.name}' is quantized per axis: only float32 <-> int8 conversions "
                          "(and uint8 <-> int8 with equal scales) of such tensors are supported")
    return [Step("lut", dict(input=op.inputs[0], output=op.outputs[0], size=x.size), {"table": XOR_0x80_TABLE})]


# A fused activation as onnxruntime's float Relu / Clip computes it between DequantizeLinear and
# QuantizeLinear (max / min of float32 values: exact).
FLOAT_ACTIVATIONS = {
    "NONE": lambda v: v,
    "RELU": lambda v: max(v, 0.0),
    "RELU6": lambda v: min(max(v, 0.0), 6.0),
    "RELU_N1_TO_1": lambda v: min(max(v, -1.0), 1.0),
}


@lowering("QUANTIZE")
def lower_quantize(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.size != y.size:
        raise Unsupported("input and output sizes differ")
    if _per_axis(x) or _per_axis(y):
        return _lower_per_axis_quantize(op, x, y)
    if "uint8" in (x.dtype, y.dtype) and x.dtype != "float32":
        # uint8 <-> int8 (graph edges): a 256-entry table; with equal scales it is x ^ 0x80.
        x_scale, x_zp = require_byte_quantized(x, "input")
        y_scale, y_zp = require_byte_quantized(y, "output")
        table = requantize_table(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp)
        return [Step("lut", dict(input=op.inputs[0], output=op.outputs[0], size=x.size), {"table": table})]
    y_scale, y_zp = require_int8(y, "output")
    if x.dtype == "float32":
        if getattr(graph, "format", "tflite") == "tflite":
            # LiteRT's default kernels (XNNPACK) multiply by the float32 reciprocal, not divide: the two
            # differ where x / scale lands next to a .5 (e.g. -7.5499997 / 0.1 = -75.49999, * 10 = -75.5)
            return [Step("quantize", dict(input=op.inputs[0], output=op.outputs[0], size=x.size,
                                          scale=quantize_reciprocal(y_scale), zero_point=y_zp,
                                          reciprocal=1))]
        return [Step("quantize", dict(input=op.inputs[0], output=op.outputs[0], size=x.size,
                                      scale=y_scale, zero_point=y_zp, reciprocal=0))]
    x_scale, x_zp = require_int8(x, "input")
    if op.options.get("dequantize_quantize"):  # onnxruntime's float32 DequantizeLinear -> QuantizeLinear
        function = FLOAT_ACTIVATIONS.get(op.options.get("activation", "NONE"))
        if function is None:
            raise Unsupported(f"activation {op.options['activation']} between DequantizeLinear and QuantizeLinear")
        table = make_table_onnxruntime("int8", x_scale, x_zp, "int8", y_scale, y_zp, function)
        return [Step("lut", dict(input=op.inputs[0], output=op.outputs[0], size=x.size), {"table": table})]
    if getattr(graph, "format", "tflite") == "tflite":  # LiteRT's fixed point, as a table
        table = requantize_int8_table(x_scale, x_zp, y_scale, y_zp)
        return [Step("lut", dict(input=op.inputs[0], output=op.outputs[0], size=x.size), {"table": table})]
    return [Step("requantize", dict(input=op.inputs[0], output=op.outputs[0], size=x.size,
                                    scale=x_scale / y_scale, input_zero_point=x_zp, output_zero_point=y_zp))]


@lowering("DEQUANTIZE")
def lower_dequantize(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if y.dtype != "float32" or x.size != y.size:
        raise Unsupported(f"output must be float32 of the input's size, got {y.dtype} {list(y.shape)}")
    if x.dtype == "uint8":
        # (q - zero point) * scale for each of the 256 bytes, in float32 (TFLite's uint8 dequantization)
        scale, zp = require_byte_quantized(x, "input")
        table = struct.pack("<256f", *((q - zp) * float32(scale) for q in range(256)))
        return [Step("lut_f32", dict(input=op.inputs[0], output=op.outputs[0], size=x.size), {"table": table})]
    if _per_axis(x):
        fields, constants = _channel_fields(x, "input")
        return [Step("dequantize_channels", dict(fields, input=op.inputs[0], output=op.outputs[0]), constants)]
    x_scale, x_zp = require_int8(x, "input")
    return [Step("dequantize", dict(input=op.inputs[0], output=op.outputs[0], size=x.size, scale=x_scale, zero_point=x_zp))]
