"""QuantizeLinear / DequantizeLinear: per tensor between int8 ops, per axis at a model's edges."""

from ..shape_folding import product
from .constants import Constant, QuantizedConstant, required_constant
from .context import Value
from .quantization import adopt_quantization, new_output, qparams, quantize_like_onnxruntime, requantize_to
from .registry import onnx_op
from .skip import Skip


@onnx_op("QuantizeLinear")
def import_quantize_linear(ctx, node, attrs):
    x, out = node.input[0], node.output[0]
    if x in ctx.constants:
        quantize_constant(ctx, node, attrs)
        return
    params, axis = qdq_params(ctx, node, attrs, "QuantizeLinear output")
    if axis is not None:
        quantize_per_axis(ctx, x, out, params, axis)
        return
    if x in ctx.views:  # DQ -> Q: requantized as onnxruntime computes it, in float32
        requantize_to(ctx, ctx.views[x], [out], params)
        return
    if x not in ctx.values or ctx.tensors[ctx.values[x].index].dtype != "float32":
        raise Skip(f"quantizes '{x}', which is computed in float")
    value = ctx.values[x]
    index = new_output(ctx, [out], ctx.tensors[value.index].shape, params, value.nhwc)
    ctx.add_op("QUANTIZE", [value.index], [index])


def quantize_constant(ctx, node, attrs):
    """QuantizeLinear of a float constant: weights the quantizer kept in float, followed by their
    DequantizeLinear (quantize_static's AddQDQPairToWeight). onnxruntime folds it into the int8
    constant its QuantizeLinear kernel gives, and so does this (per tensor or per axis)."""
    x, out = node.input[0], node.output[0]
    constant = ctx.constants[x]
    if constant.dtype != "float32":
        raise Skip(f"quantizes constant '{x}' of type {constant.dtype}; only float32 constants are quantized")
    if attrs.get("block_size", 0):
        raise Skip(f"quantizes constant '{x}' in blocks (block_size); per tensor or per axis only")
    scales, zero_points, dtype = qparams(ctx, node.input[1], node.input[2] if len(node.input) > 2 else "",
                                               "QuantizeLinear output", allow_vector=True)
    shift = 128 if dtype == "uint8" else 0
    zero_points = [z + shift for z in zero_points]   # the model's own zero points
    channel_of = None
    if len(scales) > 1:
        shape = constant.shape
        axis = per_axis_dimension(attrs.get("axis", 1), shape, len(scales), "QuantizeLinear")
        inner = product(shape[axis + 1:])
        channel_of = lambda i: i // inner % len(scales)   # noqa: E731
    q = quantize_like_onnxruntime(constant.values(), scales, zero_points, dtype, channel_of)
    ctx.constants[out] = Constant(out, dtype, constant.shape, bytes(v & 0xFF for v in q))


@onnx_op("DequantizeLinear")
def import_dequantize_linear(ctx, node, attrs):
    q, out = node.input[0], node.output[0]
    if q in ctx.constants:
        constant = ctx.constants[q]
        if constant.dtype == "int32":  # a bias: int32 zero points, which must be 0
            scales = tuple(required_constant(ctx, node.input[1], "bias scale").values())
            zero_points = (tuple(required_constant(ctx, node.input[2], "bias zero point").values())
                           if len(node.input) > 2 and node.input[2] else (0,) * len(scales))
        else:
            scales, zero_points, dtype = qparams(ctx, node.input[1], node.input[2] if len(node.input) > 2 else "",
                                                       "DequantizeLinear", allow_vector=True)
            if dtype != constant.dtype:
                raise Skip(f"'{q}' is {constant.dtype} but its zero point is {dtype}")
        ctx.quantized_constants[out] = QuantizedConstant(constant, scales, zero_points, attrs.get("axis", 1))
        return
    if q not in ctx.values:
        raise Skip(f"dequantizes '{q}', which is not available")
    params, axis = qdq_params(ctx, node, attrs, "DequantizeLinear")
    if axis is not None:
        dequantize_per_axis(ctx, q, out, params, axis)
        return
    adopt_quantization(ctx, q, params)
    value = ctx.values[q]
    t = ctx.tensors[value.index]
    if (t.scale, t.zero_point) != params[:2]:
        raise Skip(f"dequantizes '{q}' with other parameters than it was quantized with")
    ctx.views[out] = q
    if out in ctx.outputs:
        index = ctx.add_tensor(out, t.shape, "float32")
        ctx.add_op("DEQUANTIZE", [value.index], [index])
        ctx.values[out] = Value(index, value.nhwc)


def qdq_params(ctx, node, attrs, what):
    """(params, axis) of a QuantizeLinear / DequantizeLinear of an activation; axis is None when it
    is quantized per tensor."""
    if attrs.get("block_size", 0):
        raise Skip(f"{what} uses blocked quantization (block_size); activations are quantized per tensor "
                   "or per axis")
    zero_point_name = node.input[2] if len(node.input) > 2 else ""
    params = qparams(ctx, node.input[1], zero_point_name, what, allow_vector=True)
    if len(params[0]) == 1 and len(params[1]) == 1:
        return params, None
    if len(ctx.constants[node.input[1]].shape) != 1 or len(params[0]) != len(params[1]):
        raise Skip(f"{what}: scales of shape {list(ctx.constants[node.input[1]].shape)} (blocked quantization) "
                   "are not supported; activations are quantized per tensor or per axis")
    return params, attrs.get("axis", 1)


def per_axis_dimension(axis, shape, channels, what):
    if not -len(shape) <= axis < len(shape):
        raise Skip(f"{what}: axis {axis} out of range for shape {list(shape)}")
    axis %= len(shape)
    if shape[axis] != channels:
        raise Skip(f"{what}: {channels} scales for dimension {axis} of size {shape[axis]}")
    return axis


def quantize_per_axis(ctx, x, out, params, axis):
    scales, zero_points, dtype = params
    graph_inputs = {v.name for v in ctx.graph.input}
    value = ctx.values.get(x)
    if (x in ctx.views or value is None or value.nhwc or x not in graph_inputs
            or ctx.tensors[value.index].dtype != "float32"):
        raise Skip(f"quantizes '{x}' per axis; only a float model input can be quantized per axis "
                   "(activations between int8 ops are quantized per tensor)")
    for consumer in ctx.consumers[out]:
        if consumer.op_type != "DequantizeLinear":
            raise Skip(f"'{out}' is quantized per axis and used by {consumer.op_type}; int8 ops take activations "
                       "quantized per tensor")
    shape = ctx.tensors[value.index].shape
    axis = per_axis_dimension(axis, shape, len(scales), "QuantizeLinear")
    index = ctx.add_tensor(out, shape, "int8", scales, zero_points, axis=axis)
    ctx.add_op("QUANTIZE", [value.index], [index])
    ctx.values[out] = Value(index)
    ctx.per_axis[out] = index
    if dtype == "uint8" and out in ctx.outputs:  # handed back as uint8: XOR 0x80
        edge = ctx.add_tensor(out, shape, "uint8", scales, tuple(z + 128 for z in zero_points), axis=axis)
        ctx.add_op("QUANTIZE", [index], [edge])
        ctx.values[out] = Value(edge)


def dequantize_per_axis(ctx, q, out, params, axis):
    scales, zero_points, _ = params
    if out not in ctx.outputs or ctx.consumers[out]:
        raise Skip(f"dequantizes '{q}' per axis into a tensor used by other ops; only model outputs can be "
                   "dequantized per axis (int8 ops take activations quantized per tensor)")
    value = ctx.values[q]
    t = ctx.tensors[value.index]
    if q in ctx.per_axis:
        index = ctx.per_axis[q]
        t = ctx.tensors[index]
        axis = per_axis_dimension(axis, t.shape, len(scales), "DequantizeLinear")
        if (t.scale, t.zero_point, t.quantized_dimension) != (scales, zero_points, axis):
            raise Skip(f"dequantizes '{q}' with other parameters than it was quantized with")
    elif q in {v.name for v in ctx.graph.input} and not t.scale and not value.nhwc:
        axis = per_axis_dimension(axis, t.shape, len(scales), "DequantizeLinear")
        index = value.index
        if t.dtype == "int8":
            t.scale, t.zero_point, t.quantized_dimension = scales, zero_points, axis
        elif t.dtype == "uint8":  # a uint8 model input: XOR 0x80 into int8
            t.scale, t.zero_point, t.quantized_dimension = scales, tuple(z + 128 for z in zero_points), axis
            index = ctx.add_tensor(q + "/int8", t.shape, "int8", scales, zero_points, axis=axis)
            ctx.add_op("QUANTIZE", [value.index], [index])
        else:
            raise Skip(f"input '{q}' is {t.dtype}; expected int8 or uint8")
        ctx.per_axis[q] = index
    else:
        raise Skip(f"dequantizes '{q}' per axis; only a model input or a float model input quantized per axis "
                   "can be (int8 ops produce activations quantized per tensor)")
    y = ctx.add_tensor(out, ctx.tensors[index].shape, "float32")
    ctx.add_op("DEQUANTIZE", [index], [y])
    ctx.values[out] = Value(y)
