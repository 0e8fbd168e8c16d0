"""Dynamic-range int8: onnxruntime.quantization.quantize_dynamic's models (transformers.js's "q8" models). Their
float activations are quantized at run time, per tensor, by DynamicQuantizeLinear (uint8, with a scale and zero
point found from the tensor's range), then MatMulInteger multiplies them by constant int8 / uint8 weights, and
Cast, Mul (by the product x_scale * weight scale, a Mul of its own ahead of them) and Add (the bias) make the
float result. DynamicQuantizeLinear becomes a DYNAMIC_QUANTIZE; MatMulInteger and the nodes after it one
DYNAMIC_MATMUL, as onnxruntime's optimizer fuses them (MatMulIntegerToFloat); com.microsoft's fused forms
MatMulIntegerToFloat and DynamicQuantizeMatMul (a model saved optimized by onnxruntime) map to the same ops.
ConvInteger and its Cast / Mul / Add (the bias reshaped to [1, C, 1, 1]) become one DYNAMIC_CONV_2D on NHWC
tensors. The integer sums are exact, as MatMulInteger and ConvInteger are defined, on every machine
(onnxruntime's own differ by CPU: docs/kernels.md)."""

from ...graph import DYNAMIC_PARAMETERS_SHAPE, window_output_size
from .attributes import window_pads
from .constants import float_values, required_constant
from .context import Value
from .float32_path import float32_result
from .layout import nhwc_index, plain_index
from .quantization import float_cast
from .registry import onnx_op
from .skip import Skip

def dynamic_quantize(ctx, name, quantized_name):
    """The DYNAMIC_QUANTIZE of float tensor ``name``: (IR index of its int8 twin, IR index of its parameters)."""
    value = ctx.values.get(name)
    if value is None or ctx.tensors[value.index].dtype != "float32":
        raise Skip(f"input '{name}' must be a float32 tensor computed in float")
    q = ctx.add_tensor(quantized_name, ctx.tensors[value.index].shape, "int8")
    ctx.tensors[q].dynamic = True
    parameters = ctx.add_tensor(quantized_name + "/parameters", DYNAMIC_PARAMETERS_SHAPE, "int32")
    ctx.add_op("DYNAMIC_QUANTIZE", [value.index], [q, parameters])   # the range of every element: any layout
    return q, parameters


@onnx_op("DynamicQuantizeLinear")
def import_dynamic_quantize_linear(ctx, node, attrs):
    if len(node.output) != 3:
        raise Skip("its scale and zero point outputs are required")
    if set(node.output) & set(ctx.outputs):
        raise Skip("its outputs are model outputs: qnnweb runs DynamicQuantizeLinear as the input of MatMulInteger "
                   "(quantize_dynamic's models) only")
    q, parameters = dynamic_quantize(ctx, node.input[0], node.output[0])
    ctx.values[node.output[0]] = Value(q, ctx.values[node.input[0]].nhwc)
    ctx.dynamic[node.output[0]] = (node.output[1], node.output[2], parameters)
    # the Muls of its scale by a weight scale (read by the Mul after a MatMulInteger, which fuses them)
    for mul in ctx.consumers.get(node.output[1], []):
        others = [i for i in mul.input if i != node.output[1]]
        if mul.op_type == "Mul" and len(others) == 1 and others[0] in ctx.constants:
            ctx.dynamic_scales[mul.output[0]] = (node.output[1], others[0])
            ctx.mark_done(mul)


def _dynamic_input(ctx, name, scale_name, zero_point_name, layout=plain_index):
    """(IR index, parameters index) of a DynamicQuantizeLinear output read with its own scale and zero point, in
    ONNX's layout (or NHWC: layout nhwc_index)."""
    entry = ctx.dynamic.get(name)
    if entry is None or entry[1] != zero_point_name or scale_name != entry[0]:
        raise Skip(f"input '{name}' must be a DynamicQuantizeLinear output, read with its own scale and zero point")
    index = layout(ctx, name)
    ctx.tensors[index].dynamic = True   # a transpose of it is quantized as it is
    return index, entry[2]


def _weights(ctx, name, scale_name, zero_point_name, axis=1):
    """IR index of constant 8-bit weights quantized per tensor or per output channel (their own dtype and zero
    points): a matrix [K, N] (``axis`` 1, the columns) or a convolution's [O, I / group, KH, KW] (``axis`` 0)."""
    constant = required_constant(ctx, name, "weights")
    if constant.dtype not in ("int8", "uint8") or len(constant.shape) != (2 if axis else 4):
        raise Skip(f"weights '{name}' must be int8 or uint8 {'[K, N]' if axis else '[O, I / group, KH, KW]'}; got "
                   f"{constant.dtype} {list(constant.shape)}")
    scales = float_values(ctx, scale_name)
    zero_points = [0] * len(scales)
    if zero_point_name:
        zero_point = required_constant(ctx, zero_point_name, "weight zero point")
        if zero_point.dtype != constant.dtype:
            raise Skip(f"weights are {constant.dtype} but their zero point is {zero_point.dtype}")
        zero_points = [int(z) for z in zero_point.values()]
    if len(zero_points) == 1 and len(scales) > 1:
        zero_points *= len(scales)
    channels = constant.shape[axis]
    if len(scales) not in (1, channels) or len(zero_points) != len(scales):
        raise Skip(f"weights '{name}' have {len(scales)} scales and {len(zero_points)} zero points for "
                   f"{channels} output channels: only per tensor or per channel quantization is supported")
    return ctx.add_tensor(name, constant.shape, constant.dtype, scales, zero_points, constant.data,
                          axis if len(scales) > 1 else 0)


def _bias(ctx, name, columns, shapes=None):
    """IR index of a constant float32 bias of one value per column ([columns], or one of ``shapes``), or None
    when ``name`` is not one."""
    constant = ctx.constants.get(name)
    if constant is None or constant.dtype != "float32" or list(constant.shape) not in (shapes or [[columns]]):
        return None
    return ctx.add_tensor(name, [columns], "float32", data=constant.data)


def _dynamic_matmul(ctx, q, parameters, weights, bias, output_name):
    x, w = ctx.tensors[q], ctx.tensors[weights]
    if w.shape[0] != x.shape[-1]:
        raise Skip(f"shapes {list(x.shape)} and {list(w.shape)} do not fit a matrix product")
    y = ctx.add_tensor(output_name, list(x.shape[:-1]) + [w.shape[1]], "float32")
    ctx.add_op("DYNAMIC_MATMUL", [q, parameters, weights, -1 if bias is None else bias], [y])
    ctx.values[output_name] = Value(y)


def _only_reader(ctx, name):
    readers = ctx.consumers.get(name, [])
    return readers[0] if len(readers) == 1 and name not in ctx.outputs else None


def _optional(node, k):
    return node.input[k] if len(node.input) > k else ""


def _scaled_integer_result(ctx, node):
    """The Cast to float and the Mul by x_scale * weight scale after MatMulInteger / ConvInteger ``node``
    (quantize_dynamic's form), marked done: (the Mul, (x_scale's name, the weight scale's name))."""
    cast = _only_reader(ctx, node.output[0])
    if cast is None or not float_cast(cast):
        raise Skip("its int32 result must go to one Cast to float only (quantize_dynamic's form)")
    mul = _only_reader(ctx, cast.output[0])
    scale = next((ctx.dynamic_scales[i] for i in mul.input if i in ctx.dynamic_scales), None) if mul else None
    if mul is None or mul.op_type != "Mul" or scale is None:
        raise Skip("the Cast's result must be multiplied by the product of the input's scale and the weights' scale")
    ctx.mark_done(cast)
    ctx.mark_done(mul)
    return mul, scale


def _bias_add(ctx, name, columns, shapes=None):
    """(the Add of a bias (as _bias takes it) to ``name``, marked done, and the bias's IR index), or (None, None)."""
    add = _only_reader(ctx, name)
    if add is None or add.op_type != "Add" or len(add.input) != 2:
        return None, None
    bias = _bias(ctx, add.input[1] if add.input[0] == name else add.input[0], columns, shapes)
    if bias is None:
        return None, None
    ctx.mark_done(add)
    return add, bias


@onnx_op("MatMulInteger")
def import_mat_mul_integer(ctx, node, attrs):
    """MatMulInteger, Cast to float, Mul by x_scale * weight scale, then (optionally) Add of a float bias."""
    if not _optional(node, 2):
        raise Skip("only a MatMulInteger of a DynamicQuantizeLinear output (with its zero point) is supported")
    mul, scale = _scaled_integer_result(ctx, node)
    q, parameters = _dynamic_input(ctx, node.input[0], scale[0], node.input[2])
    weights = _weights(ctx, node.input[1], scale[1], _optional(node, 3))
    add, bias = _bias_add(ctx, mul.output[0], ctx.tensors[weights].shape[1])
    _dynamic_matmul(ctx, q, parameters, weights, bias, (add or mul).output[0])


@onnx_op("ConvInteger")
def import_conv_integer(ctx, node, attrs):
    """ConvInteger (x, w, x_zero_point, w_zero_point), Cast to float, Mul by x_scale * weight scale, then
    (optionally) Add of the float bias quantize_dynamic reshapes to [1, C, 1, 1]: one DYNAMIC_CONV_2D, NHWC."""
    if not _optional(node, 2):
        raise Skip("only a ConvInteger of a DynamicQuantizeLinear output (with its zero point) is supported")
    mul, scale = _scaled_integer_result(ctx, node)
    q, parameters = _dynamic_input(ctx, node.input[0], scale[0], node.input[2], nhwc_index)
    n, h, w_, c = ctx.tensors[q].shape
    weights = _weights(ctx, node.input[1], scale[1], _optional(node, 3), axis=0)
    m, group_channels, kh, kw = ctx.tensors[weights].shape
    group = attrs.get("group", 1)
    if group < 1 or group_channels * group != c or m % group:
        raise Skip(f"group {group} does not fit {c} input channels and weights {list(ctx.tensors[weights].shape)}")
    strides, dilations = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
    pads = window_pads(attrs, (h, w_), (kh, kw), strides, dilations)
    out_h = window_output_size(h, pads[0], pads[1], kh, strides[0], dilations[0])
    out_w = window_output_size(w_, pads[2], pads[3], kw, strides[1], dilations[1])
    add, bias = _bias_add(ctx, mul.output[0], m, [[1, m, 1, 1], [m, 1, 1]])
    y = float32_result(ctx, (add or mul).output[0], (n, out_h, out_w, m), True)
    ctx.add_op("DYNAMIC_CONV_2D", [q, parameters, weights, -1 if bias is None else bias], [y], stride=tuple(strides),
               dilation=tuple(dilations), padding=pads, groups=group)


def _fused_bias(ctx, name, weights):
    if not name:
        return None
    bias = _bias(ctx, name, ctx.tensors[weights].shape[1])
    if bias is None:
        raise Skip(f"bias '{name}' must be a constant float32 vector of one value per column")
    return bias


@onnx_op("MatMulIntegerToFloat")
def import_mat_mul_integer_to_float(ctx, node, attrs):
    """com.microsoft: A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias."""
    q, parameters = _dynamic_input(ctx, node.input[0], node.input[2], _optional(node, 4))
    weights = _weights(ctx, node.input[1], node.input[3], _optional(node, 5))
    _dynamic_matmul(ctx, q, parameters, weights, _fused_bias(ctx, _optional(node, 6), weights), node.output[0])


@onnx_op("DynamicQuantizeMatMul")
def import_dynamic_quantize_mat_mul(ctx, node, attrs):
    """com.microsoft: A (float), B, b_scale, b_zero_point, bias: DynamicQuantizeLinear of A, then the product."""
    q, parameters = dynamic_quantize(ctx, node.input[0], node.output[0] + "/quantized")
    weights = _weights(ctx, node.input[1], node.input[2], _optional(node, 3))
    _dynamic_matmul(ctx, q, parameters, weights, _fused_bias(ctx, _optional(node, 4), weights), node.output[0])
