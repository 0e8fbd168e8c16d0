"""Dynamic-range int8: onnxruntime.quantization.quantize_dynamic's models (transformers.js's "q8" models). Their
float activations are quantized at run time, per tensor, by DynamicQuantizeLinear (uint8, with a scale and zero
point found from the tensor's range), then MatMulInteger multiplies them by constant int8 / uint8 weights, and
Cast, Mul (by the product x_scale * weight scale, a Mul of its own ahead of them) and Add (the bias) make the
float result. DynamicQuantizeLinear becomes a DYNAMIC_QUANTIZE; MatMulInteger and the nodes after it one
DYNAMIC_MATMUL, as onnxruntime's optimizer fuses them (MatMulIntegerToFloat); com.microsoft's fused forms
MatMulIntegerToFloat and DynamicQuantizeMatMul (a model saved optimized by onnxruntime) map to the same ops.
The integer sums are exact, as MatMulInteger is defined, on every machine (onnxruntime's own differ by CPU:
docs/kernels.md)."""

from ...graph import DYNAMIC_PARAMETERS_SHAPE
from .constants import float_values, required_constant
from .context import Value
from .quantization import float_cast
from .registry import onnx_op
from .skip import Skip

def dynamic_quantize(ctx, name, quantized_name):
    """The DYNAMIC_QUANTIZE of float tensor ``name``: (IR index of its int8 twin, IR index of its parameters)."""
    value = ctx.values.get(name)
    if value is None or ctx.tensors[value.index].dtype != "float32" or value.nhwc:
        raise Skip(f"input '{name}' must be a float32 tensor computed in float")
    q = ctx.add_tensor(quantized_name, ctx.tensors[value.index].shape, "int8")
    ctx.tensors[q].dynamic = True
    parameters = ctx.add_tensor(quantized_name + "/parameters", DYNAMIC_PARAMETERS_SHAPE, "int32")
    ctx.add_op("DYNAMIC_QUANTIZE", [value.index], [q, parameters])
    return q, parameters


@onnx_op("DynamicQuantizeLinear")
def import_dynamic_quantize_linear(ctx, node, attrs):
    if len(node.output) != 3:
        raise Skip("its scale and zero point outputs are required")
    if set(node.output) & set(ctx.outputs):
        raise Skip("its outputs are model outputs: qnnweb runs DynamicQuantizeLinear as the input of MatMulInteger "
                   "(quantize_dynamic's models) only")
    q, parameters = dynamic_quantize(ctx, node.input[0], node.output[0])
    ctx.values[node.output[0]] = Value(q)
    ctx.dynamic[node.output[0]] = (node.output[1], node.output[2], parameters)
    # the Muls of its scale by a weight scale (read by the Mul after a MatMulInteger, which fuses them)
    for mul in ctx.consumers.get(node.output[1], []):
        others = [i for i in mul.input if i != node.output[1]]
        if mul.op_type == "Mul" and len(others) == 1 and others[0] in ctx.constants:
            ctx.dynamic_scales[mul.output[0]] = (node.output[1], others[0])
            ctx.mark_done(mul)


def _dynamic_input(ctx, name, scale_name, zero_point_name):
    """(IR index, parameters index) of a DynamicQuantizeLinear output read with its own scale and zero point."""
    entry = ctx.dynamic.get(name)
    if entry is None or entry[1] != zero_point_name or scale_name != entry[0]:
        raise Skip(f"input '{name}' must be a DynamicQuantizeLinear output, read with its own scale and zero point")
    return ctx.values[name].index, entry[2]


def _weights(ctx, name, scale_name, zero_point_name):
    """IR index of constant weights [K, N] quantized per tensor or per column (their own dtype and zero points)."""
    constant = required_constant(ctx, name, "weights")
    if constant.dtype not in ("int8", "uint8") or len(constant.shape) != 2:
        raise Skip(f"weights '{name}' must be an int8 or uint8 matrix [K, N]; got {constant.dtype} "
                   f"{list(constant.shape)}")
    scales = float_values(ctx, scale_name)
    zero_points = [0] * len(scales)
    if zero_point_name:
        zero_point = required_constant(ctx, zero_point_name, "weight zero point")
        if zero_point.dtype != constant.dtype:
            raise Skip(f"weights are {constant.dtype} but their zero point is {zero_point.dtype}")
        zero_points = [int(z) for z in zero_point.values()]
    if len(zero_points) == 1 and len(scales) > 1:
        zero_points *= len(scales)
    if len(scales) not in (1, constant.shape[1]) or len(zero_points) != len(scales):
        raise Skip(f"weights '{name}' have {len(scales)} scales and {len(zero_points)} zero points for "
                   f"{constant.shape[1]} columns: only per tensor or per column quantization is supported")
    return ctx.add_tensor(name, constant.shape, constant.dtype, scales, zero_points, constant.data,
                          1 if len(scales) > 1 else 0)


def _bias(ctx, name, columns):
    """IR index of a float32 bias of one value per column, or None when ``name`` is not one."""
    constant = ctx.constants.get(name)
    if constant is None or constant.dtype != "float32" or list(constant.shape) != [columns]:
        return None
    return ctx.add_tensor(name, constant.shape, "float32", data=constant.data)


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


@onnx_op("MatMulInteger")
def import_mat_mul_integer(ctx, node, attrs):
    """MatMulInteger, Cast to float, Mul by x_scale * weight scale, then (optionally) Add of a float bias."""
    if not _optional(node, 2):
        raise Skip("only a MatMulInteger of a DynamicQuantizeLinear output (with its zero point) is supported")
    cast = _only_reader(ctx, node.output[0])
    if cast is None or not float_cast(cast):
        raise Skip("its int32 result must go to one Cast to float only (quantize_dynamic's form)")
    mul = _only_reader(ctx, cast.output[0])
    scale = next((ctx.dynamic_scales[i] for i in mul.input if i in ctx.dynamic_scales), None) if mul else None
    if mul is None or mul.op_type != "Mul" or scale is None:
        raise Skip("the Cast's result must be multiplied by the product of the input's scale and the weights' scale")
    q, parameters = _dynamic_input(ctx, node.input[0], scale[0], node.input[2])
    weights = _weights(ctx, node.input[1], scale[1], _optional(node, 3))
    ctx.mark_done(cast)
    ctx.mark_done(mul)
    add, bias = _only_reader(ctx, mul.output[0]), None
    if add is not None and add.op_type == "Add" and len(add.input) == 2:
        bias = _bias(ctx, add.input[1] if add.input[0] == mul.output[0] else add.input[0], ctx.tensors[weights].shape[1])
    if bias is not None:
        ctx.mark_done(add)
    _dynamic_matmul(ctx, q, parameters, weights, bias, add.output[0] if bias is not None else mul.output[0])


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
