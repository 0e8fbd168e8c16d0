"""RESHAPE (shares memory, no kernel), PAD (folded into the next convolution when possible),
CONCATENATION (one copy_slice record per input), TRANSPOSE and DEPTH_TO_SPACE / SPACE_TO_DEPTH
(strided copies, ``strided_copy``: the one way values move between layouts)."""

import itertools
import math

from ..graph import DTYPE_SIZES
from . import Step, Unsupported, lowering
from .common import constant_ints, require_int8



@lowering("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def lower_reshape(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.nbytes != y.nbytes or x.dtype != y.dtype:
        raise Unsupported(f"{list(x.shape)} {x.dtype} -> {list(y.shape)} {y.dtype} changes the data")
    return [Step("copy", dict(input=op.inputs[0], output=op.outputs[0], bytes=x.nbytes), alias=True)]


def pad_amounts(graph, op):
    """[(before, after)] per dimension, from the constant paddings tensor."""
    values = constant_ints(graph, op.inputs[1], "paddings")
    return [(values[2 * i], values[2 * i + 1]) for i in range(len(values) // 2)]


def pad_value(graph, op):
    """The int8 value PAD / PADV2 pads with: PADV2's constant_values (an int8 scalar in the input's
    quantization), else the output zero point (a real 0)."""
    y = graph.tensors[op.outputs[0]]
    if op.type != "PADV2" or len(op.inputs) < 3 or op.inputs[2] < 0:
        return y.zero_point[0] if y.zero_point else 0
    value = graph.tensors[op.inputs[2]]
    if not value.is_constant or value.dtype != "int8" or value.size != 1 or len(value.data) != 1:
        raise Unsupported("constant_values must be one constant int8 value")
    if value.scale and (value.scale, value.zero_point) != (y.scale, y.zero_point):
        raise Unsupported("constant_values are quantized otherwise than the output")
    return int.from_bytes(bytes(value.data), "little", signed=True)


@lowering("PAD", "PADV2")
def lower_pad(graph, op):
    """Constant padding of any of the last three dimensions of a tensor of rank <= 4 (NHWC: height,
    width, channels; the batch is not padded)."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_quantization = require_int8(x, "input")
    if require_int8(y, "output") != x_quantization:
        raise Unsupported("input and output quantization differ (PAD only moves values)")
    amounts = pad_amounts(graph, op)
    if len(x.shape) > 4 or len(amounts) != len(x.shape):
        raise Unsupported(f"paddings {amounts} for an input of shape {list(x.shape)}: ranks up to 4 are supported")
    if any(a < 0 for pair in amounts for a in pair):
        raise Unsupported("negative padding")
    shape = [1] * (4 - len(x.shape)) + list(x.shape)
    amounts = [(0, 0)] * (4 - len(x.shape)) + list(amounts)
    if amounts[0] != (0, 0):
        raise Unsupported("padding of the batch (first of four dimensions) is not supported")
    if list(y.shape) != [d + a + b for d, (a, b) in zip(x.shape, amounts[4 - len(x.shape):])]:
        raise Unsupported(f"output {list(y.shape)} is not input {list(x.shape)} padded by {amounts}")
    n, h, w, c = shape
    (top, bottom), (left, right), (front, back) = amounts[1:]
    return [Step("pad", dict(input=op.inputs[0], output=op.outputs[0], batch=n, input_height=h, input_width=w,
                             channels=c, padding_top=top, padding_bottom=bottom, padding_left=left,
                             padding_right=right, pad_value=pad_value(graph, op), padding_front=front,
                             padding_back=back))]


MIRROR_MODES = ("REFLECT", "SYMMETRIC", "EDGE")


@lowering("MIRROR_PAD")
def lower_mirror_pad(graph, op):
    """options: mode REFLECT (edge not repeated: TFLite's MIRROR_PAD, ONNX Pad "reflect"), SYMMETRIC (edge
    repeated) or EDGE (the edge value throughout: ONNX Pad "edge"); paddings per dimension, any rank.
    Each dimension splits into before / inside / after; every combination is one strided copy, the
    padded parts read backwards (REFLECT, SYMMETRIC) or with stride 0 (EDGE)."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    require_moved_values(x, y, op.type)
    mode = op.options.get("mode")
    if mode not in MIRROR_MODES:
        raise Unsupported(f"mode {mode!r}; expected one of {', '.join(MIRROR_MODES)}")
    amounts = pad_amounts(graph, op)
    if len(amounts) != len(x.shape):
        raise Unsupported(f"{len(amounts)} paddings for an input of rank {len(x.shape)}")
    segments = []   # per dimension: [(output start, count, input start, input step)]
    for k, ((before, after), d) in enumerate(zip(amounts, x.shape)):
        limit = {"REFLECT": d - 1, "SYMMETRIC": d, "EDGE": None}[mode]
        if before < 0 or after < 0 or (limit is not None and max(before, after) > limit):
            raise Unsupported(f"padding {(before, after)} of dimension {k} (of size {d}) in mode {mode}")
        parts = [(before, d, 0, 1)]
        if before:
            first = {"REFLECT": before, "SYMMETRIC": before - 1, "EDGE": 0}[mode]
            parts.insert(0, (0, before, first, 0 if mode == "EDGE" else -1))
        if after:
            first = {"REFLECT": d - 2, "SYMMETRIC": d - 1, "EDGE": d - 1}[mode]
            parts.append((before + d, after, first, 0 if mode == "EDGE" else -1))
        segments.append(parts)
    if list(y.shape) != [b + d + a for (b, a), d in zip(amounts, x.shape)]:
        raise Unsupported(f"output {list(y.shape)} is not input {list(x.shape)} padded by {amounts}")
    x_strides, y_strides = contiguous_strides(x.shape), contiguous_strides(y.shape)
    steps = []
    for combination in itertools.product(*segments):
        dims = [count for _, count, _, _ in combination]
        steps.append(strided_copy(graph, op.inputs[0], op.outputs[0], dims,
                                  [s * step for s, (_, _, _, step) in zip(x_strides, combination)],
                                  sum(s * start for s, (_, _, start, _) in zip(x_strides, combination)),
                                  y_strides, sum(s * start for s, (start, _, _, _) in zip(y_strides, combination))))
    return steps


@lowering("CONCATENATION")
def lower_concatenation(graph, op):
    """options: axis (of the IR's shape, negative counts from the end), activation NONE. Inputs with
    another quantization than the output's are requantized while copied (fp32, as REQUANTIZE)."""
    y = graph.tensors[op.outputs[0]]
    y_scale, y_zp = require_int8(y, "output")
    if op.options.get("activation", "NONE") != "NONE":
        raise Unsupported(f"fused activation {op.options['activation']} not supported")
    if "axis" not in op.options:
        raise Unsupported("the option 'axis' is missing")
    rank = len(y.shape)
    axis = op.options["axis"]
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} is outside the output's rank {rank}")
    axis %= rank
    outer, inner_output = math.prod(y.shape[:axis]), math.prod(y.shape[axis:])
    steps, offset, along = [], 0, 0
    for i, index in enumerate(op.inputs):
        x = graph.tensors[index]
        x_scale, x_zp = require_int8(x, f"input {i}")
        if x.is_constant:
            raise Unsupported(f"input {i} '{x.name}' is a constant (not supported)")
        if len(x.shape) != rank or any(x.shape[k] != y.shape[k] for k in range(rank) if k != axis):
            raise Unsupported(f"input {i} {list(x.shape)} does not fit output {list(y.shape)} along axis {axis}")
        along += x.shape[axis]
        inner_input = math.prod(x.shape[axis:])
        if inner_input == 0:
            continue
        steps.append(Step("copy_slice", dict(
            input=index, output=op.outputs[0], outer=outer, inner_input=inner_input, inner_output=inner_output,
            output_offset=offset, scale=x_scale / y_scale, input_zero_point=x_zp, output_zero_point=y_zp)))
        offset += inner_input
    if along != y.shape[axis]:
        raise Unsupported(f"the inputs add up to {along} along axis {axis}, the output has {y.shape[axis]}")
    if outer == 0 or not steps:
        raise Unsupported("empty tensors are not supported")
    return steps


def _perm(graph, op):
    if "perm" in op.options:
        return [int(p) for p in op.options["perm"]]
    if len(op.inputs) < 2:
        raise Unsupported("the option 'perm' is missing")
    return constant_ints(graph, op.inputs[1], "perm")


@lowering("TRANSPOSE")
def lower_transpose(graph, op):
    """options: perm (output dimension k is input dimension perm[k]), any rank whose moving dimensions
    merge into at most 6, any element type of 1, 2 or 4 bytes (int8, uint8, float32, int32).
    Quantized tensors keep their quantization."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    perm = _perm(graph, op)
    if sorted(perm) != list(range(len(x.shape))):
        raise Unsupported(f"perm {perm} is not a permutation of the input's {len(x.shape)} dimensions")
    require_moved_values(x, y, op.type)
    if list(y.shape) != [x.shape[p] for p in perm]:
        raise Unsupported(f"output {list(y.shape)} is not input {list(x.shape)} permuted by {perm}")
    strides = contiguous_strides(x.shape)
    return [strided_copy(graph, op.inputs[0], op.outputs[0], list(y.shape), [strides[p] for p in perm])]


def require_moved_values(x, y, op_type):
    """An op that only moves values: the same type (of 1, 2 or 4 bytes) and quantization in and out."""
    if x.dtype != y.dtype or DTYPE_SIZES.get(x.dtype) not in (1, 2, 4):
        raise Unsupported(f"{x.dtype} -> {y.dtype}: expected the same type, of 1, 2 or 4 bytes")
    if (x.scale, x.zero_point) != (y.scale, y.zero_point):
        raise Unsupported(f"input and output quantization differ ({op_type} only moves values)")


def contiguous_strides(shape):
    """Element strides of a row-major tensor of ``shape``."""
    strides, step = [], 1
    for d in reversed(shape):
        strides.append(step)
        step *= d
    return strides[::-1]


COPY_RANK = 6  # wasm_kernels/include/qnnweb.h, qnn_copy_strided_record


def strided_copy(graph, x_index, y_index, dims, input_strides, input_offset=0, output_strides=None, output_offset=0):
    """The step copying element ``input_offset + sum(i[k] * input_strides[k])`` of tensor ``x_index`` to
    ``output_offset + sum(i[k] * output_strides[k])`` of ``y_index`` (default: row-major, i.e. filling the
    output in order) for every index i below ``dims``. Dimensions of size 1 drop out and neighbours that
    stay contiguous merge; a copy of a contiguous input range into the whole output is no copy at all:
    the output shares the input's memory from that byte on."""
    x, y = graph.tensors[x_index], graph.tensors[y_index]
    if output_strides is None:
        output_strides = contiguous_strides(dims)
    if any(d == 0 for d in dims) or x.size == 0:
        raise Unsupported("empty tensors are not supported")
    merged = []
    for d, si, so in zip(dims, input_strides, output_strides):
        if d == 1:
            continue
        if merged and merged[-1][1] == si * d and merged[-1][2] == so * d:
            merged[-1] = (merged[-1][0] * d, si, so)
        else:
            merged.append((d, si, so))
    element_bytes = DTYPE_SIZES[x.dtype]
    total = math.prod(dims)
    if (len(merged) <= 1 and all(si == 1 and so == 1 for _, si, so in merged) and output_offset == 0
            and total == y.size):
        return Step("copy", dict(input=x_index, output=y_index, bytes=y.nbytes), alias=True,
                    alias_offset=input_offset * element_bytes)
    if len(merged) > COPY_RANK:
        raise Unsupported(f"the copy needs {len(merged)} dimensions; at most {COPY_RANK} are supported")
    merged = [(1, 0, 0)] * (COPY_RANK - len(merged)) + merged
    fields = dict(input=x_index, output=y_index, element_bytes=element_bytes, input_offset=input_offset,
                  output_offset=output_offset)
    for k, (d, si, so) in enumerate(merged):
        fields[f"dim{k}"], fields[f"input_stride{k}"], fields[f"output_stride{k}"] = d, si, so
    return Step("copy_strided", fields)


MAX_BLOCK = 1 << 12  # a larger block size is a corrupt file (no image is 4096 times 4096 pixels per cell)


@lowering("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")
def lower_depth_to_space(graph, op):
    """TFLite's DEPTH_TO_SPACE / SPACE_TO_DEPTH (NHWC; channels ordered block row, block column,
    channel: ONNX's DCR) as one 4-D transpose: depth-to-space moves [N*H, W, b, b*C'] to
    [N*H, b, W, b*C'], space-to-depth the other way. Values move, their quantization stays."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    b = op.options.get("block_size")
    if type(b) is not int or not 1 <= b <= MAX_BLOCK:
        raise Unsupported(f"block_size is {b!r}; expected an integer in [1, {MAX_BLOCK}]")
    if len(x.shape) != 4:
        raise Unsupported(f"input rank {len(x.shape)}; expected an NHWC tensor")
    require_moved_values(x, y, op.type)
    n, h, w, c = x.shape
    if op.type == "DEPTH_TO_SPACE":
        if c % (b * b):
            raise Unsupported(f"{c} channels are not a multiple of block_size^2 = {b * b}")
        expected, view = (n, h * b, w * b, c // (b * b)), (n * h, w, b, c // b)
    else:
        if h % b or w % b:
            raise Unsupported(f"height {h} and width {w} must be multiples of block_size {b}")
        expected, view = (n, h // b, w // b, c * b * b), (n * h // b, b, w // b, b * c)
    if tuple(y.shape) != expected:
        raise Unsupported(f"output {list(y.shape)}; expected {list(expected)}")
    strides = contiguous_strides(view)   # the output is the view with its middle dimensions swapped
    return [strided_copy(graph, op.inputs[0], op.outputs[0], [view[0], view[2], view[1], view[3]],
                         [strides[0], strides[2], strides[1], strides[3]])]
