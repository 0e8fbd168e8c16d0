"""Graph rewrites run before lowering. They return new graphs: the imported one stays as read."""

import dataclasses
from collections import defaultdict

from .ops import Unsupported, op_problem
from .ops.shape import pad_amounts, pad_value


def fold_pads(graph):
    """A copy of the graph with each explicit PAD of height/width folded into the convolution that
    consumes it. TensorFlow's converter puts a PAD before stride-2 convolutions; padding with the
    input zero point is exactly what the convolution's own padding does, so the PAD costs nothing.
    Only the convolutions that change are copied (the imported graph stays as read).
    """
    consumers = defaultdict(list)
    for op in graph.ops:
        for index in set(op.inputs):
            consumers[index].append(op)
    outputs = set(graph.outputs)
    folded, replaced = set(), {}
    for op in graph.ops:
        if op.type in ("PAD", "PADV2"):
            conv = _fold(graph, op, consumers, outputs)
            if conv is not None:
                folded.add(id(op))
                replaced[id(consumers[op.outputs[0]][0])] = conv
    ops = [replaced.get(id(op), op) for op in graph.ops if id(op) not in folded]
    return dataclasses.replace(graph, ops=ops)


def _fold(graph, pad, consumers, outputs):
    """The convolution that takes this PAD's padding (a new Op), or None."""
    # Malformed ops are left alone: lowering reports them (ops.op_problem).
    if op_problem(graph, pad):
        return None
    padded = pad.outputs[0]
    if len(consumers[padded]) != 1 or padded in outputs:
        return None
    conv = consumers[padded][0]
    if conv.type not in ("CONV_2D", "DEPTHWISE_CONV_2D") or op_problem(graph, conv) or conv.inputs[0] != padded:
        return None
    x, y = graph.tensors[pad.inputs[0]], graph.tensors[padded]
    if x.dtype != "int8" or x.scale != y.scale or x.zero_point != y.zero_point or len(x.shape) != 4:
        return None
    try:
        amounts = pad_amounts(graph, pad)
        if pad_value(graph, pad) != x.zero_point[0]:  # PADV2 with another value than a real 0
            return None
    except Unsupported:
        return None
    if len(amounts) != 4 or amounts[0] != (0, 0) or amounts[3] != (0, 0) or min(min(a) for a in amounts) < 0:
        return None
    top, bottom, left, right = conv.options["padding"]
    return dataclasses.replace(conv, inputs=[pad.inputs[0]] + conv.inputs[1:],
                               options=dict(conv.options, padding=[top + amounts[1][0], bottom + amounts[1][1],
                                                                   left + amounts[2][0], right + amounts[2][1]]))
