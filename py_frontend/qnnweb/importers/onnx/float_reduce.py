"""ReduceMean / ReduceSum axes (ONNX's attribute or, from opset 18, input), and the float form of the two
ops: import_float_reduction, for a reduction onnxruntime computes with its float kernel on float values it
goes on with in float. It emits the IR MEAN / SUM on float32 tensors in ONNX's own layout with the option
arithmetic "onnxruntime" (ops/reduce.py: the reduce_f32 step, over the last or the leading axes). Not
registered by itself: the ReduceMean / ReduceSum handler (pooling.py) is to call it first.

The case that needs it: a LayerNorm written out in float ops, ReduceMean -> Sub -> Pow -> ReduceMean -> Add ->
Sqrt -> Div [-> Mul -> Add] (torch's layer_norm exported before opset 17; a channels-first LayerNorm written
in a model's code at any opset). It is not one LAYER_NORM, because onnxruntime does not compute it as its
LayerNormalization kernel in a quantized model: its LayerNormFusion needs one tensor feeding both the first
ReduceMean and the Sub, and in a quantized model that tensor is a DequantizeLinear's output, of which
onnxruntime first gives each reader its own copy (its QDQ node units), so the fusion never matches. It runs
the chain op by op: the first ReduceMean on the dequantized input, Sub and Pow (x * x) in float32, the second
ReduceMean, then the ops quantize_static quantized (the Add of epsilon, the Div, the Mul: int8 between
QuantizeLinear nodes) -- which is what qnnweb's float32 path and int8 ops compute, bit-exact. A chain left whole
in float (Add and Mul not quantized) onnxruntime partly fuses into SimplifiedLayerNormalization, or runs with
transposes moved through it (over another axis); qnnweb runs it op by op there too, within float rounding of
onnxruntime's float output (docs/supported-models.md)."""

from .constants import int32_constant, int_values
from .context import Value
from .layout import onnx_shape, plain_index
from .quantization import float32_operand, float_value, read_in_float
from .skip import Skip


def reduction_axes(ctx, node, attrs, rank):
    """The axes `node` reduces, sorted, distinct and non-negative: its axes input (opset 18) or attribute;
    every axis when there is none."""
    if len(node.input) > 1 and node.input[1]:
        axes = int_values(ctx, node.input[1], "axes")
    else:
        axes = list(attrs.get("axes", []))
    if not axes:
        if attrs.get("noop_with_empty_axes", 0):
            raise Skip(f"{node.op_type} with no axes and noop_with_empty_axes is not supported")
        axes = list(range(rank))
    if not all(-rank <= a < rank for a in axes):
        raise Skip(f"axes {axes} for a tensor of rank {rank}")
    return sorted({a % rank for a in axes})


def reduced_shape(shape, axes, keep):
    """The shape of a reduction of `shape` over `axes`: 1 in their place (keepdims), or without them ([1] for
    none left)."""
    if keep:
        return [1 if k in axes else d for k, d in enumerate(shape)]
    return [d for k, d in enumerate(shape) if k not in axes] or [1]


def import_float_reduction(ctx, node, attrs):
    """ReduceMean / ReduceSum `node` in float32 when its input is a float32 activation, or when its result is
    read in float (the mean of a LayerNorm written out, which Sub reads): the IR MEAN / SUM of the tensor in
    ONNX's layout (a dequantized int8 input through DEQUANTIZE, as onnxruntime's float kernel reads it), its
    float32 output a new float activation. Whether it did."""
    if not (float_value(ctx, node.input[0]) or read_in_float(ctx, node.output[0])):
        return False
    x = float32_operand(ctx, node.input[0])
    shape = onnx_shape(ctx, x)
    axes = reduction_axes(ctx, node, attrs, len(shape))
    keep = attrs.get("keepdims", 1)
    out = ctx.add_tensor(node.output[0], reduced_shape(shape, axes, keep), "float32")
    ctx.values[node.output[0]] = Value(out)
    ctx.add_op("MEAN" if node.op_type == "ReduceMean" else "SUM",
               [plain_index(ctx, x), int32_constant(ctx, f"{node.output[0]}/axes", axes)], [out],
               keep_dims=bool(keep), arithmetic="onnxruntime")
    return True
