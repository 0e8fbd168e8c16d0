"""BatchNormalization that no convolution absorbed, between DequantizeLinear and QuantizeLinear (or the
model's float output): IR BATCH_NORM, one table per channel of onnxruntime's float32 arithmetic
(ops/batch_norm.py), the float element ops after it composed into the same tables. Of a float32 value (a
dynamically quantized model's): a float32 MUL and ADD by per-channel constants, as onnxruntime computes it."""

from ...numerics.float32 import float32, float32_bytes
from ...numerics.onnxruntime import batch_norm_coefficients
from .binary import binary
from .context import Value
from .layout import nhwc_index, onnx_shape, plain_index, transpose
from .quantization import activation_input, float_value
from .registry import onnx_op
from .skip import Skip
from .tabulated import tabulated
from .unary import float_chain


def float32_parameter(ctx, name, channels, what):
    """The float32 values of a BatchNormalization parameter, one per channel: a float32 constant, or a
    dequantized constant (quantize_static quantizes the scale as int8, per tensor or per channel, and the
    bias as int32) as DequantizeLinear gives it, float32(q - zero point) * scale in float32."""
    if name in ctx.constants and ctx.constants[name].dtype == "float32":
        values = ctx.constants[name].values()
    elif name in ctx.quantized_constants:
        q = ctx.quantized_constants[name]
        if q.constant.dtype not in ("int8", "uint8", "int32"):
            raise Skip(f"{what} '{name}' is a dequantized {q.constant.dtype} constant")
        shift = 128 if q.constant.dtype == "uint8" else 0
        data = q.constant.values()
        scales = list(q.scale) * (len(data) if len(q.scale) == 1 else 1)
        zero_points = list(q.zero_point) * (len(data) if len(q.zero_point) == 1 else 1)
        if len(scales) != len(data) or len(zero_points) != len(data):
            raise Skip(f"{what} '{name}' is quantized along an axis its values do not follow")
        values = [float32(float32(v - shift - z) * float32(s)) for v, s, z in zip(data, scales, zero_points)]
    else:
        raise Skip(f"{what} '{name}' must be a float32 constant or a dequantized constant")
    if len(values) != channels:
        raise Skip(f"{what} '{name}' has {len(values)} values for {channels} channels")
    return [float(v) for v in values]


@onnx_op("BatchNormalization")
def import_batch_norm(ctx, node, attrs):
    if len(node.input) != 5:
        raise Skip(f"expected 5 inputs, got {len(node.input)}")
    if any(node.output[1:]):
        raise Skip("BatchNormalization in training mode (running mean and variance outputs) is not supported")
    if attrs.get("spatial", 1) != 1 or attrs.get("training_mode", 0) != 0:
        raise Skip("only spatial inference BatchNormalization is supported")
    x = node.input[0] if float_value(ctx, node.input[0]) else activation_input(ctx, node.input[0])
    shape = onnx_shape(ctx, x)
    if len(shape) not in (3, 4):
        raise Skip(f"input of shape {list(shape)}: BatchNormalization of a [N, C, L] or [N, C, H, W] tensor only")
    channels = shape[1]
    scale, bias, mean, var = (float32_parameter(ctx, n, channels, what) for n, what in
                              zip(node.input[1:], ("scale", "bias", "mean", "variance")))
    coefficients = batch_norm_coefficients(scale, bias, mean, var, attrs.get("epsilon", 1e-5))
    if x == node.input[0] and float_value(ctx, x):
        float_batch_norm(ctx, node, x, coefficients, len(shape))
        return
    name, chain, moves = float_chain(ctx, node.output[0])
    if len(shape) == 4:
        index = nhwc_index(ctx, x)
    else:   # channels innermost for the tables: [N, L, C], back to [N, C, L] after them
        if moves:
            raise Skip("a BatchNormalization of a [N, C, L] tensor whose result moves on is not supported")
        index = transpose(ctx, plain_index(ctx, x), (0, 2, 1))
    # a [N, C, L] tensor's tables read it transposed and are transposed back after them (below): they stay a
    # BATCH_NORM op's, never a LayerNormalization's input values (source)
    tabulated(ctx, node, name, moves, "BATCH_NORM", [index], len(shape) == 4, source=x if len(shape) == 4 else None,
              coefficients=coefficients, then=chain)
    if len(shape) == 3:   # the result's names (int8, or the model's float output) read it as [N, C, L]
        table = ctx.ops[-1].outputs[0]
        back = transpose(ctx, table, (0, 2, 1))
        for alias in [n for n, v in ctx.values.items() if v.index == table]:
            ctx.values[alias] = Value(back)


def float_batch_norm(ctx, node, x, coefficients, rank):
    """y = x * new_scale + new_bias of float32 value ``x``, each channel's coefficients as onnxruntime's
    BatchNormalization computes them (batch_norm_coefficients): a float32 MUL, then an ADD (Eigen's arrays: two
    roundings, no FMA)."""
    names = []
    for k, part in enumerate(("scale", "bias")):
        name = f"{node.output[0]}/{part}"
        values = float32_bytes([c[k] for c in coefficients])
        ctx.values[name] = Value(ctx.add_tensor(name, [len(coefficients)] + [1] * (rank - 2), "float32", data=values))
        names.append(name)
    scaled = node.output[0] + "/scaled"
    binary(ctx, "MUL", node, x, names[0], [scaled], None, "NONE", float_output=True)
    binary(ctx, "ADD", node, scaled, names[1], [node.output[0]], None, "NONE", float_output=True)
