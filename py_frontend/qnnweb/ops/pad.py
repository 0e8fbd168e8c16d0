"""The PAD, PADV2 and MIRROR_PAD lowerings. PAD / PADV2: the pad record (folded into the next
convolution when possible: passes.py reads ``pad_amounts`` and ``pad_value``); MIRROR_PAD: strided
copies (strided_copy.py)."""

import itertools

from .registry import Step, Unsupported, lowering
from .common import constant_ints, require_int8
from .strided_copy import contiguous_strides, require_moved_values, strided_copy


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
