"""LayerNormalization and InstanceNormalization as onnxruntime's quantizer leaves them: in float between
a DequantizeLinear and a QuantizeLinear (QDQ and QOperator alike), gamma and beta float constants or
dequantized int8 ones. Both become one LAYER_NORM op (qnnweb.ops.layer_norm) over the tensor in ONNX's own
layout (a feature map held NHWC is moved back to NCHW first: the sums run in ONNX's element order).
Its input may be a float op's tables of an int8 tensor (tabulated.normalization_input: BatchNormalization
or GELU left in float before it), or a float32 value (float32_path.py: another normalization's result, read in
float); its output the model's float output, through moves, or a result read in float: float32 then.
A LayerNorm written out as float ops (exports before opset 17) is not one LAYER_NORM: onnxruntime runs it op by
op in a quantized model, and so does qnnweb (float_reduce.py says why)."""

from ...numerics.float32 import float32, float32_bytes
from ..shape_folding import product
from .float32_path import float32_result
from .layout import onnx_shape, plain_index
from .quantization import activation_input, fused_reader, new_output, quantized_output, read_in_float
from .registry import onnx_op
from .skip import Skip


def float_parameter(ctx, name, count, what):
    """The float32 values of a constant gamma / beta, [count] of them: a float initializer, or an int8
    constant's DequantizeLinear, computed as onnxruntime's ((q - zero point) * scale in float32, per
    tensor or per axis); zeros when absent."""
    if not name:
        return [0.0] * count
    if name in ctx.constants:
        constant = ctx.constants[name]
        if constant.dtype != "float32":
            raise Skip(f"{what} '{name}' is {constant.dtype}; expected float32")
        values = constant.values()
    elif name in ctx.quantized_constants:
        values = ctx.quantized_constants[name].dequantized(per_axis=True)
        if values is None:
            raise Skip(f"{what} '{name}' is dequantized with {len(ctx.quantized_constants[name].scale)} scales and "
                       f"{len(ctx.quantized_constants[name].zero_point)} zero points")
    else:
        raise Skip(f"{what} '{name}' must be a constant")
    if len(values) != count:
        raise Skip(f"{what} '{name}' has {len(values)} values; onnxruntime needs one per normalized element ({count})")
    return values


def normalization(ctx, node, x, axis, arithmetic, epsilon, gamma, beta, table=None):
    """One LAYER_NORM of the int8 or float32 ONNX tensor `x` over its dimensions from `axis` (its values
    `table`'s, float32 bytes, where given); its output quantized as the QuantizeLinear after `node` says, or
    float32 where it is read in float (read_in_float: the model's output, or another float op's input)."""
    if x not in ctx.values:
        raise Skip(f"input '{x}' is not available")
    shape = onnx_shape(ctx, x)
    index = plain_index(ctx, x)
    channels = product(shape[axis:]) if arithmetic == "layer" else shape[1]
    parameters = [ctx.add_tensor(f"{node.output[0]}/{what}", [channels], "float32",
                                 data=float32_bytes(float_parameter(ctx, name, channels, what)))
                  for what, name in (("gamma", gamma), ("beta", beta))]
    if table is not None:
        parameters.append(ctx.add_tensor(f"{node.output[0]}/table", [len(table) // 4], "float32", data=table))
    # LAYER_NORM fuses no activation: a Relu / Clip after it reads its float32 values (float32_path.py)
    if read_in_float(ctx, node.output[0]) or fused_reader(ctx, node.output[0]) is not None:
        out = float32_result(ctx, node.output[0], list(shape), False)
    else:
        out_names, params, _ = quantized_output(ctx, node)   # (fused_reader: no activation to fuse)
        out = new_output(ctx, out_names, list(shape), params, False)
    ctx.add_op("LAYER_NORM", [index, *parameters], [out], axis=axis, epsilon=epsilon, arithmetic=arithmetic)


@onnx_op("LayerNormalization")
def import_layer_normalization(ctx, node, attrs):
    """LayerNormalization (opset 17): onnxruntime's float kernel for any axis; Mean / InvStdDev outputs
    unused."""
    if any(node.output[1:]):
        raise Skip("its Mean / InvStdDev outputs are used; only the normalized output is supported")
    if attrs.get("stash_type", 1) != 1:
        raise Skip(f"stash_type {attrs['stash_type']}: only float32 statistics (1) are supported")
    x, table = ctx.tabulated_inputs.get(node.input[0]) or (activation_input(ctx, node.input[0], float32=True), None)
    rank = len(onnx_shape(ctx, x))
    axis = attrs.get("axis", -1)
    if not -rank <= axis < rank:
        raise Skip(f"axis {axis} out of range for rank {rank}")
    normalization(ctx, node, x, axis % rank, "layer", float32(attrs.get("epsilon", 1e-5)), node.input[1],
                  node.input[2] if len(node.input) > 2 else "", table)


@onnx_op("InstanceNormalization")
def import_instance_normalization(ctx, node, attrs):
    """InstanceNormalization: onnxruntime's float kernel (Eigen's reductions) over each (n, c) of an
    [N, C, ...] tensor; timm's GroupNorm with one group exports it on [N, 1, C*H*W]."""
    x = activation_input(ctx, node.input[0], float32=True)
    if len(onnx_shape(ctx, x)) < 3:
        raise Skip("InstanceNormalization needs a tensor of rank 3 or more")
    normalization(ctx, node, x, 2, "instance", float32(attrs.get("epsilon", 1e-5)), node.input[1], node.input[2])
