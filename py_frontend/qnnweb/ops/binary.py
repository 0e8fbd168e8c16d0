"""The binary element-wise lowerings: ADD, SUB, DIV, MUL, MAXIMUM, MINIMUM and SQUARED_DIFFERENCE, with
numpy broadcasting up to rank 4 (one input may be constant). Records: add (ADD, TFLite's SUB), mul,
maximum (MAXIMUM, MINIMUM), lut2d (a 256 x 256 table: ONNX's float Sub / Div / Max / Min between
DequantizeLinear and QuantizeLinear; TFLite's int8 DIV and SQUARED_DIFFERENCE, whose builtin kernels'
fixed-point arithmetic qnnweb.numerics.tflite tabulates), and binary_f32 where a model computes in float
before it quantizes."""

import functools
import struct

from ..numerics.float32 import F32_OPERATIONS, float32, ieee_divide
from ..numerics.tflite import (NO_ADD_FIXED_POINT, XNNPACK_MUL_RATIO_MAX, add_arithmetic, div_table,
                               squared_difference_table)
from ..records import FLOAT32_MAX
from .registry import Step, Unsupported, lowering
from .common import activation_range, broadcast_shape, broadcast_strides, require_constant, require_int8


def _binary_operands(graph, op):
    """(a index, b index, a, b, y): b is the constant one if there is one (ADD and MUL commute)."""
    if len(op.inputs) != 2:
        raise Unsupported(f"expected 2 inputs, got {len(op.inputs)}")
    a_index, b_index = op.inputs
    a, b, y = (graph.tensors[i] for i in (a_index, b_index, op.outputs[0]))
    if a.is_constant and b.is_constant:
        raise Unsupported("both inputs are constants (fold them before lowering)")
    if a.is_constant:
        a_index, b_index, a, b = b_index, a_index, b, a
    return a_index, b_index, a, b, y


def _binary_fields(graph, op, a_index, b_index, a, b, y, dtype="int8"):
    """The shape part of a binary record (and its constants): broadcasting over the output."""
    for tensor, role in ((a, "input a"), (b, "input b"), (y, "output")):
        if len(tensor.shape) > 4:
            raise Unsupported(f"{role} '{tensor.name}' has rank {len(tensor.shape)}; at most 4 is supported")
    shape = broadcast_shape(a.shape, b.shape)
    if shape is None:
        raise Unsupported(f"shapes {list(a.shape)} and {list(b.shape)} do not broadcast")
    dims = [1] * (4 - len(y.shape)) + list(y.shape)
    if [1] * (4 - len(shape)) + shape != dims:
        raise Unsupported(f"{list(a.shape)} and {list(b.shape)} broadcast to {shape}, not to the output {list(y.shape)}")
    if 0 in dims:
        raise Unsupported("empty tensors are not supported")
    fields = dict(input_a=a_index, output=op.outputs[0], b_constant=0)
    constants = {}
    if b.is_constant:
        constants["input_b"] = require_constant(b, "input b", dtype)
        fields["b_constant"] = 1
    else:
        fields["input_b"] = b_index
    for k, (d, sa, sb) in enumerate(zip(dims, broadcast_strides(a.shape, dims), broadcast_strides(b.shape, dims))):
        fields[f"dim{k}"], fields[f"a_stride{k}"], fields[f"b_stride{k}"] = d, sa, sb
    return fields, constants


def _binary_quantized(graph, op):
    """Fields and constants shared by ADD and MUL, plus the three scales."""
    a_index, b_index, a, b, y = _binary_operands(graph, op)
    a_scale, a_zp = require_int8(a, "input a")
    b_scale, b_zp = require_int8(b, "input b")
    y_scale, y_zp = require_int8(y, "output")
    fields, constants = _binary_fields(graph, op, a_index, b_index, a, b, y)
    lo, hi = activation_range(op.options.get("activation", "NONE"), y_scale, y_zp)
    fields.update(a_zero_point=a_zp, b_zero_point=b_zp, output_zero_point=y_zp, output_min=lo, output_max=hi)
    return fields, constants, a_scale, b_scale, y_scale


# a fused activation on float32 values, as XNNPACK's float kernels clamp (LiteRT's default): no clamp
# for NONE, float32's largest value standing for infinity (records hold finite floats; only an
# infinite result, which quantizes as that value does, can tell them apart)
F32_ACTIVATION_RANGES = {"NONE": (-FLOAT32_MAX, FLOAT32_MAX), "RELU": (0.0, FLOAT32_MAX), "RELU6": (0.0, 6.0),
                         "RELU_N1_TO_1": (-1.0, 1.0)}


def _or_float32(lower):
    """The lowering of an int8 binary op, preceded by the float32 one: an op whose tensors are all
    float32 runs as binary_f32 (_float32_binary) whatever the model's format."""
    def lower_either(graph, op):
        if all(graph.tensors[i].dtype == "float32" for i in [*op.inputs, *op.outputs]):
            return [_float32_binary(graph, op)]
        return lower(graph, op)
    return functools.wraps(lower)(lower_either)


def _float32_binary(graph, op):
    """ADD / SUB / MUL / DIV of float32 tensors (a model's float ops before it quantizes, such as an input's
    normalization (x - mean) / std): the binary_f32 step, one IEEE float32 operation per element as
    onnxruntime's and TFLite's float kernels compute it."""
    a_index, b_index, a, b, y = _binary_operands(graph, op)
    fields, constants = _binary_fields(graph, op, a_index, b_index, a, b, y, "float32")
    activation = op.options.get("activation", "NONE")
    if activation not in F32_ACTIVATION_RANGES:
        raise Unsupported(f"fused activation {activation} on float32 values is not supported")
    lo, hi = F32_ACTIVATION_RANGES[activation]
    fields.update(operation=F32_OPERATIONS[op.type], b_first=int(a_index != op.inputs[0]), output_min=lo,
                  output_max=hi)
    return Step("binary_f32", fields, constants)


@lowering("ADD")
@_or_float32
def lower_add(graph, op):
    return [Step("add", *_add_fields(graph, op))]


@lowering("DIV")
@_or_float32
def lower_div(graph, op):
    """ONNX's Div left in float by the quantizer (by a constant or by an activation): onnxruntime's
    float32 division of the dequantized operands (a zero divisor: an infinity or NaN, then quantized as
    QuantizeLinear does: saturated, NaN to the minimum). TFLite's int8 DIV: its builtin kernel's
    fixed-point quotient (numerics.tflite.div_table; XNNPACK's delegate takes only float DIV)."""
    if not _is_onnx(graph):
        return [_tflite_table_binary(graph, op, div_table, with_activation=True)]
    return [_onnx_float_binary(graph, op, ieee_divide)]


@lowering("SQUARED_DIFFERENCE")
def lower_squared_difference(graph, op):
    """TFLite's int8 SQUARED_DIFFERENCE (the difference a layer norm's variance squares): its builtin
    kernel's fixed-point arithmetic (numerics.tflite.squared_difference_table), as a lut2d table."""
    return [_tflite_table_binary(graph, op, squared_difference_table)]


def _tflite_table_binary(graph, op, make_table, with_activation=False):
    """The lut2d step of an int8 TFLite op that is a function of its two input values: ``make_table``
    (the inputs' and the output's scales and zero points, in the op's input order) gives the 65536
    results [first + 128][second + 128]; transposed when the constant input became the record's a."""
    a_index, b_index, a, b, y = _binary_operands(graph, op)
    first, second = (a, b) if a_index == op.inputs[0] else (b, a)
    quantization = [*require_int8(first, "input 1"), *require_int8(second, "input 2"), *require_int8(y, "output")]
    activation = op.options.get("activation", "NONE")
    if activation != "NONE" and not with_activation:
        raise Unsupported(f"fused activation {activation} is not supported")
    bounds = activation_range(activation, y.scale[0], y.zero_point[0]) if with_activation else ()
    table = make_table(*quantization, *bounds)
    if a_index != op.inputs[0]:
        table = bytes(table[j * 256 + i] for i in range(256) for j in range(256))
    fields, constants = _binary_fields(graph, op, a_index, b_index, a, b, y)
    fields["output_bytes"] = 1
    constants["table"] = table
    return Step("lut2d", fields, constants)


@lowering("SUB")
@_or_float32
def lower_sub(graph, op):
    """TFLite's SUB: the add record with the second input's multiplier negative (XNNPACK's
    subtract is its add with that input's scale negated; TFLite's builtin kernel negates the scaled
    value, which the record's negative fixed multiplier says)."""
    if _is_onnx(graph):
        return [_onnx_float_binary(graph, op, lambda a, b: a - b)]
    fields, constants = _add_fields(graph, op)
    subtracted = "b" if fields["input_a"] == op.inputs[0] else "a"  # the inputs may have been swapped
    fields[f"{subtracted}_multiplier"] = -fields[f"{subtracted}_multiplier"]
    fields[f"{subtracted}_fixed_multiplier"] = -fields[f"{subtracted}_fixed_multiplier"]
    return [Step("add", fields, constants)]


def _onnx_float_binary(graph, op, function):
    """The lut2d step of a float binary op between DequantizeLinear and QuantizeLinear (ONNX's Sub,
    which onnxruntime runs in float32): each operand dequantized in float32, ``function`` of the two
    rounded to float32, quantized as QuantizeLinear does (float32 division, half to even), for every
    pair of int8 values; or the float32 result itself, where it is the model's output (a float32 op
    output: a float32 table)."""
    a_index, b_index, a, b, y = _binary_operands(graph, op)
    swapped = a_index != op.inputs[0]
    (a_scale, a_zp), (b_scale, b_zp) = require_int8(a, "input a"), require_int8(b, "input b")
    float_output = y.dtype == "float32"
    fields, constants = _binary_fields(graph, op, a_index, b_index, a, b, y)
    a_values = [float32(float32(a_scale) * (v - a_zp)) for v in range(-128, 128)]
    b_values = [float32(float32(b_scale) * (v - b_zp)) for v in range(-128, 128)]
    coded = op.options.get("float_constant_values")
    if coded is not None:   # b is a float constant's codes (byte k - 128: the k-th distinct value)
        if not b.is_constant or len(coded) > 256:
            raise Unsupported("a float constant's codes must be the constant operand, at most 256 values")
        b_values = [float32(v) for v in coded] + [1.0] * (256 - len(coded))   # (codes no element has)
    results = [float32(function(fb, fa) if swapped else function(fa, fb)) for fa in a_values for fb in b_values]
    if float_output:
        fields["output_bytes"] = 4
        constants["table"] = struct.pack("<65536f", *results)
        return Step("lut2d", fields, constants)
    y_scale, y_zp = require_int8(y, "output")
    lo, hi = activation_range(op.options.get("activation", "NONE"), y_scale, y_zp)
    y_scale = float32(y_scale)
    table = bytearray(65536)
    for k, d in enumerate(results):
        # MLAS's QuantizeLinear: divide, then max with the low bound (NaN gives the bound), then min
        q = float32(d / y_scale)
        f = min(q if q >= lo - y_zp else lo - y_zp, hi - y_zp)
        table[k] = (round(f) + y_zp) & 0xFF
    fields["output_bytes"] = 1
    constants["table"] = bytes(table)
    return Step("lut2d", fields, constants)


def _add_fields(graph, op):
    fields, constants, a_scale, b_scale, y_scale = _binary_quantized(graph, op)
    fields.update(a_multiplier=a_scale / y_scale, b_multiplier=b_scale / y_scale, input_offset=0, float_form=0)
    if _is_onnx(graph):  # onnxruntime's x86 kernel (float32)
        # its kernel takes the node's first input first, unless broadcasting hands that one over as a
        # per-span scalar (add.c's float_form 1: the record's b first)
        node_b_first = op.options.get("onnxruntime_scalar") == "a"
        swapped = fields["input_a"] != op.inputs[0]
        fields.update(NO_ADD_FIXED_POINT, arithmetic=1, input_offset=128 if op.options.get("uint8") else 0,
                      float_form=int(node_b_first != swapped))
    else:  # LiteRT's: XNNPACK's, or TFLite's builtin kernel where the delegate refuses the scales
        fields.update(add_arithmetic(a_scale, b_scale, y_scale))
    return fields, constants


def _is_onnx(graph):
    return getattr(graph, "format", "tflite") == "onnx"


@lowering("MUL")
@_or_float32
def lower_mul(graph, op):
    fields, constants, a_scale, b_scale, y_scale = _binary_quantized(graph, op)
    # the ratio as MLAS and XNNPACK's delegate compute it: float32(a_scale * b_scale), then / y_scale in float32
    ratio = float32(float32(float32(a_scale) * float32(b_scale)) / float32(y_scale))
    if not _is_onnx(graph) and ratio >= XNNPACK_MUL_RATIO_MAX:
        raise Unsupported(f"a_scale * b_scale / output_scale is {ratio:g}, 2^8 or more: LiteRT's fallback MUL "
                          "kernel overflows there, and qnnweb does not imitate it")
    if _is_onnx(graph):  # MLAS's QLinearMul: the zero point added before rounding
        fields.update(scale=ratio, arithmetic=1, offset=128 if op.options.get("uint8") else 0)
    else:
        fields.update(scale=ratio, arithmetic=0, offset=0)
    return [Step("mul", fields, constants)]


@lowering("MAXIMUM", "MINIMUM")
def lower_maximum(graph, op):
    """TFLite's int8 MAXIMUM / MINIMUM: the larger / smaller stored value, as LiteRT compares them
    (without requantizing, even when the inputs' quantization differs from the output's). ONNX Max /
    Min arrive with both inputs in the output's quantization (importers/onnx/binary.py)."""
    a_index, b_index, a, b, y = _binary_operands(graph, op)
    if _is_onnx(graph) and y.dtype == "float32":   # the model's float output: max / min of the float values
        return [_onnx_float_binary(graph, op, max if op.type == "MAXIMUM" else min)]
    for tensor, role in ((a, "input a"), (b, "input b"), (y, "output")):
        require_int8(tensor, role)
    if _is_onnx(graph) and not require_int8(a, "input a") == require_int8(b, "input b") == require_int8(y, "output"):
        raise Unsupported("Max / Min with inputs quantized otherwise than the output")
    fields, constants = _binary_fields(graph, op, a_index, b_index, a, b, y)
    fields["minimum"] = int(op.type == "MINIMUM")
    return [Step("maximum", fields, constants)]
