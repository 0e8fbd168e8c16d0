"""QUANTIZE, DEQUANTIZE and ADD."""

from . import Step, Unsupported, lowering
from .common import activation_range, require_int8


@lowering("QUANTIZE")
def lower_quantize(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    y_scale, y_zp = require_int8(y, "output")
    if x.size != y.size:
        raise Unsupported("input and output sizes differ")
    if x.dtype == "float32":
        return [Step("quantize", dict(input=op.inputs[0], output=op.outputs[0], size=x.size,
                                      inverse_scale=1.0 / y_scale, zero_point=y_zp))]
    x_scale, x_zp = require_int8(x, "input")
    return [Step("requantize", dict(input=op.inputs[0], output=op.outputs[0], size=x.size,
                                    scale=x_scale / y_scale, input_zero_point=x_zp, output_zero_point=y_zp))]


@lowering("DEQUANTIZE")
def lower_dequantize(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_scale, x_zp = require_int8(x, "input")
    if y.dtype != "float32" or x.size != y.size:
        raise Unsupported(f"output must be float32 of the input's size, got {y.dtype} {list(y.shape)}")
    return [Step("dequantize", dict(input=op.inputs[0], output=op.outputs[0], size=x.size, scale=x_scale, zero_point=x_zp))]


@lowering("ADD")
def lower_add(graph, op):
    a, b, y = (graph.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    a_scale, a_zp = require_int8(a, "input a")
    b_scale, b_zp = require_int8(b, "input b")
    y_scale, y_zp = require_int8(y, "output")
    if a.is_constant or b.is_constant:
        raise Unsupported("adding a constant tensor is not supported")
    if tuple(a.shape) != tuple(b.shape) or a.size != y.size:
        raise Unsupported(f"broadcasting {list(a.shape)} + {list(b.shape)} is not supported (shapes must match)")
    lo, hi = activation_range(op.options.get("activation", "NONE"), y_scale, y_zp)
    return [Step("add", dict(input_a=op.inputs[0], input_b=op.inputs[1], output=op.outputs[0], size=y.size,
                             a_zero_point=a_zp, b_zero_point=b_zp, output_zero_point=y_zp,
                             a_multiplier=a_scale / y_scale, b_multiplier=b_scale / y_scale,
                             output_min=lo, output_max=hi))]
