"""Ops that move or select the values of int8 activations: Slice, Split and Gather (constant indices)
as IR STRIDED_SLICE / SLICE / GATHER, whose lowering copies the selected values (or shares the input's
memory when they are contiguous; of float32 values too: float32_path.py), Expand (IR BROADCAST_TO) and
Pad (IR PADV2 or MIRROR_PAD). On a feature map kept in NHWC the ONNX axes are mapped to the IR's."""

from ...numerics.float32 import float32
from .constants import int32_bytes, int32_constant, int_values, required_constant
from .integer_inputs import embedding_lookup
from .layout import NCHW_TO_NHWC, onnx_shape, plain_index
from .quantization import (activation_input, moved_output, quantization_ahead, quantize_like_onnxruntime,
                           requantize_to)
from .registry import onnx_op
from .skip import Skip

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


def ir_axis_of(ctx, x, axis):
    """The IR axis of ONNX axis ``axis`` of ``x`` (a feature map's is permuted to NHWC)."""
    rank = len(onnx_shape(ctx, x))
    if not -rank <= axis < rank:
        raise Skip(f"axis {axis} for a tensor of rank {rank}")
    axis %= rank
    return NCHW_TO_NHWC.index(axis) if ctx.values[x].nhwc else axis


@onnx_op("Slice")
def import_slice(ctx, node, attrs):
    """starts / ends / axes / steps: inputs (opset >= 10) or attributes (before), ONNX's clamping."""
    x = activation_input(ctx, node.input[0], float32=True)
    shape = onnx_shape(ctx, x)
    rank = len(shape)
    if ctx.opsets.get("ai.onnx", 13) < 10:
        starts, ends = attrs.get("starts", []), attrs.get("ends", [])
        axes, steps = attrs.get("axes") or list(range(len(starts))), [1] * len(starts)
    else:
        inputs = list(node.input) + [""] * (5 - len(node.input))
        if not inputs[1] or not inputs[2]:
            raise Skip("Slice needs starts and ends")
        starts, ends = int_values(ctx, inputs[1], "starts"), int_values(ctx, inputs[2], "ends")
        axes = int_values(ctx, inputs[3], "axes") if inputs[3] else list(range(len(starts)))
        steps = int_values(ctx, inputs[4], "steps") if inputs[4] else [1] * len(starts)
    if not len(starts) == len(ends) == len(axes) == len(steps):
        raise Skip("starts, ends, axes and steps differ in length")
    begin, end, stride = [0] * rank, list(shape), [1] * rank
    seen = set()
    for start, stop, axis, step in zip(starts, ends, axes, steps):
        if not -rank <= axis < rank or axis % rank in seen:
            raise Skip(f"axes {axes} for a tensor of rank {rank}")
        axis %= rank
        seen.add(axis)
        if step == 0:
            raise Skip("a step of 0")
        d = shape[axis]
        start, stop = start + d if start < 0 else start, stop + d if stop < 0 else stop
        if step > 0:
            start, stop = min(max(start, 0), d), min(max(stop, 0), d)
        else:   # ONNX: start in [0, d - 1], end in [-1, d - 1]; -1 is "before the first" (not numpy's last)
            start, stop = min(max(start, 0), d - 1), min(max(stop, -1), d - 1)
            stop = -d - 1 if stop == -1 else stop
        begin[axis], end[axis], stride[axis] = start, stop, max(INT32_MIN, min(step, INT32_MAX))
    out_shape = [len(range(*slice(b, e, s).indices(d))) for b, e, s, d in zip(begin, end, stride, shape)]
    nhwc = ctx.values[x].nhwc
    if nhwc:
        begin, end, stride, out_shape = ([v[i] for i in NCHW_TO_NHWC] for v in (begin, end, stride, out_shape))
    index = ctx.values[x].index
    constants = [int32_constant(ctx, f"{node.output[0]}/{role}", values)
                 for role, values in (("begin", begin), ("end", end), ("strides", stride))]
    moved_output(ctx, node, node.output[0], x, out_shape, nhwc,
                       lambda out: ctx.add_op("STRIDED_SLICE", [index, *constants], [out]))


@onnx_op("Split")
def import_split(ctx, node, attrs):
    """split sizes: an input (opset >= 13) or attribute (before), else num_outputs (opset 18) or as
    many equal parts as outputs (the last one smaller when they do not divide, as ONNX says)."""
    x = activation_input(ctx, node.input[0], float32=True)
    shape = onnx_shape(ctx, x)
    axis = attrs.get("axis", 0)
    ir_axis = ir_axis_of(ctx, x, axis)
    d, parts = shape[axis % len(shape)], len(node.output)
    if len(node.input) > 1 and node.input[1]:
        sizes = int_values(ctx, node.input[1], "split")
    elif "split" in attrs:
        sizes = list(attrs["split"])
    else:
        if attrs.get("num_outputs", parts) != parts:
            raise Skip(f"num_outputs {attrs['num_outputs']} for {parts} outputs")
        chunk = -(-d // parts)
        sizes = [min(chunk, d - k * chunk) for k in range(parts)]
    if len(sizes) != parts or any(s <= 0 for s in sizes) or sum(sizes) != d:
        raise Skip(f"parts {sizes} for {parts} outputs and a dimension of {d}")
    index, ir_shape = ctx.values[x].index, list(ctx.tensors[ctx.values[x].index].shape)
    start = 0
    for out, size in zip(node.output, sizes):
        begin = [start if k == ir_axis else 0 for k in range(len(ir_shape))]
        counts = [size if k == ir_axis else n for k, n in enumerate(ir_shape)]
        constants = [int32_constant(ctx, f"{out}/{role}", values) for role, values in (("begin", begin),
                                                                                     ("size", counts))]
        if out:
            moved_output(ctx, node, out, x, counts, ctx.values[x].nhwc,
                               lambda y, constants=constants: ctx.add_op("SLICE", [index, *constants], [y]))
        start += size


@onnx_op("Gather")
def import_gather(ctx, node, attrs):
    """Constant indices (negative ones count from the end); on a feature map with 1-D indices the
    result stays NHWC, otherwise it is gathered in ONNX's layout. Run-time indices (a model's ids) pick
    rows of a constant table (integer_inputs.py)."""
    if node.input[1] not in ctx.constants:
        embedding_lookup(ctx, node, attrs)
        return
    x = activation_input(ctx, node.input[0], float32=True)
    indices = int_values(ctx, node.input[1], "indices")
    index_shape = list(ctx.constants[node.input[1]].shape)
    shape = onnx_shape(ctx, x)
    axis = attrs.get("axis", 0)
    if not -len(shape) <= axis < len(shape):
        raise Skip(f"axis {axis} for a tensor of rank {len(shape)}")
    axis %= len(shape)
    d = shape[axis]
    if any(not -d <= i < d for i in indices):
        raise Skip(f"an index lies outside axis {axis} (of size {d})")
    indices = [i % d for i in indices]
    nhwc = ctx.values[x].nhwc and len(index_shape) == 1
    if nhwc:
        source, ir_axis = ctx.values[x].index, NCHW_TO_NHWC.index(axis)
    else:
        source, ir_axis = plain_index(ctx, x), axis
    source_shape = list(ctx.tensors[source].shape)
    out_shape = source_shape[:ir_axis] + index_shape + source_shape[ir_axis + 1:]
    constant = ctx.add_tensor(f"{node.output[0]}/indices", index_shape, "int32", data=int32_bytes(indices))
    moved_output(ctx, node, node.output[0], x, out_shape, nhwc,
                       lambda out: ctx.add_op("GATHER", [source, constant], [out], axis=ir_axis))


@onnx_op("Expand")
def import_expand(ctx, node, attrs):
    """Expand of an activation to a constant shape (numpy's broadcast of both; MobileViTv2's linear
    attention expands its context vector over the patches), in ONNX's layout; a constant's is folded."""
    x = activation_input(ctx, node.input[0], float32=True)
    shape = onnx_shape(ctx, x)
    target = int_values(ctx, node.input[1], "shape")
    rank = max(len(shape), len(target))
    padded, target = [1] * (rank - len(shape)) + list(shape), [1] * (rank - len(target)) + target
    if any(a != b and 1 not in (a, b) for a, b in zip(padded, target)):
        raise Skip(f"shape {list(shape)} does not broadcast to {target}")
    out_shape = [max(a, b) if 1 in (a, b) else a for a, b in zip(padded, target)]
    source = plain_index(ctx, x)
    constant = int32_constant(ctx, f"{node.output[0]}/shape", out_shape)
    moved_output(ctx, node, node.output[0], x, out_shape, False,
                 lambda out: ctx.add_op("BROADCAST_TO", [source, constant], [out]))


@onnx_op("Pad")
def import_pad(ctx, node, attrs):
    """Pad (opset 11+: pads, constant_value and axes are inputs). "constant": IR PADV2, the value in the
    input's quantization (it must be exactly representable there); "reflect" and "edge": IR MIRROR_PAD."""
    mode = attrs.get("mode", "constant")
    mode = mode.decode("utf-8", "replace") if isinstance(mode, bytes) else mode
    if mode not in ("constant", "reflect", "edge"):
        raise Skip(f"mode {mode!r} is not supported (constant, reflect and edge are)")
    if ctx.opsets.get("ai.onnx", 13) < 11:
        raise Skip("Pad before opset 11 (pads as an attribute) is not supported")
    x = activation_input(ctx, node.input[0])
    rank = len(onnx_shape(ctx, x))
    inputs = list(node.input) + [""] * (4 - len(node.input))
    pads = int_values(ctx, inputs[1], "pads") if inputs[1] else []
    axes = int_values(ctx, inputs[3], "axes") if inputs[3] else list(range(rank))
    if len(pads) != 2 * len(axes) or any(not -rank <= a < rank for a in axes):
        raise Skip(f"pads {pads} for axes {axes} of a tensor of rank {rank}")
    amounts = [[0, 0] for _ in range(rank)]
    for k, axis in enumerate(axes):
        amounts[axis % rank] = [pads[k], pads[k + len(axes)]]
    if any(a < 0 for pair in amounts for a in pair):
        raise Skip("negative pads (cropping) are not supported")
    if any(a > INT32_MAX for pair in amounts for a in pair):
        raise Skip(f"pads {pads} beyond 32-bit integers")
    nhwc, index = ctx.values[x].nhwc, ctx.values[x].index
    if nhwc:
        amounts = [amounts[i] for i in NCHW_TO_NHWC]
    t = ctx.tensors[index]
    out_shape = [d + a + b for d, (a, b) in zip(t.shape, amounts)]
    paddings = ctx.add_tensor(f"{node.output[0]}/pads", [rank, 2], "int32",
                            data=int32_bytes([a for pair in amounts for a in pair]))
    if mode == "constant":
        value, requantized = pad_value(ctx, inputs[2]), False
        if not on_grid(value, t) and node.input[0] in ctx.views:
            # onnxruntime pads the dequantized values in float and quantizes the result: each element
            # requantized, the pad value quantized, in the output's quantization (padding first or
            # requantizing first gives the same bytes)
            params = quantization_ahead(ctx, node.output[0])
            if params is not None:
                source, x = x, node.output[0] + "/requantized"
                requantize_to(ctx, source, [x], params)
                index, t, requantized = ctx.values[x].index, ctx.tensors[ctx.values[x].index], True
        value = pad_value_index(ctx, value, t, requantized)
        moved_output(ctx, node, node.output[0], x, out_shape, nhwc,
                           lambda out: ctx.add_op("PADV2", [index, paddings, value], [out]))
    else:
        moved_output(ctx, node, node.output[0], x, out_shape, nhwc,
                           lambda out: ctx.add_op("MIRROR_PAD", [index, paddings], [out], mode=mode.upper()))


def pad_value(ctx, name):
    """constant_value: a float32 value (a float constant, or a dequantized int8 one in the QDQ form), or
    an int (an int8 / uint8 constant in the QOperator form, already in the input's quantization, in
    int8 terms); 0 when absent."""
    if name in ctx.quantized_constants and ctx.quantized_constants[name].dequantized() is not None:
        values = ctx.quantized_constants[name].dequantized()
    elif not name:
        return 0.0
    else:
        constant = required_constant(ctx, name, "constant_value")
        values = constant.values()
        if len(values) == 1 and constant.dtype in ("int8", "uint8"):
            return values[0] - 128 if constant.dtype == "uint8" else values[0]
    if len(values) != 1:
        raise Skip("constant_value must be one value")
    return float32(values[0])


def on_grid(value, t):
    """Whether pad value ``value`` (pad_value's) is an int8 value of t's quantization."""
    if isinstance(value, int):
        return True
    q = round(value / t.scale[0]) + t.zero_point[0]
    return -128 <= q <= 127 and float32((q - t.zero_point[0]) * t.scale[0]) == value


def pad_value_index(ctx, value, t, requantized=False):
    """The pad value as an int8 constant in t's quantization: exactly (on_grid), or, where t is the
    padded result's own quantization (``requantized``: import_pad requantized the input), quantized as
    onnxruntime's QuantizeLinear does."""
    if isinstance(value, int):
        q = value
    elif on_grid(value, t):
        q = round(value / t.scale[0]) + t.zero_point[0]
    elif requantized:
        (q,) = quantize_like_onnxruntime([value], t.scale, t.zero_point, "int8")
    else:
        raise Skip(f"constant_value {value} is not exactly an int8 value of the input's quantization")
    return ctx.add_tensor(f"{t.name}/pad_value", [], "int8", t.scale, t.zero_point, data=bytes([q & 0xFF]))
