"""Graph rewrites run before lowering. They return new graphs: the imported one stays as read."""

import dataclasses

from .ops import Unsupported
from .ops.shape import pad_amounts, pad_value


def fold_pads(graph):
    """A copy of the graph with each explicit PAD of height/width folded into the convolution that
    consumes it. TensorFlow's converter puts a PAD before stride-2 convolutions; padding with the
    input zero point is exactly what the convolution's own padding does, so the PAD costs nothing.
    """
    graph = dataclasses.replace(graph, ops=[dataclasses.replace(op) for op in graph.ops])
    graph.ops = [op for op in graph.ops if not (op.type in ("PAD", "PADV2") and _fold(graph, op))]
    return graph


def _fold(graph, pad):
    padded = pad.outputs[0]
    consumers = graph.consumers(padded)
    if len(consumers) != 1 or padded in graph.outputs:
        return False
    conv = consumers[0]
    if conv.type not in ("CONV_2D", "DEPTHWISE_CONV_2D") or conv.inputs[0] != padded:
        return False
    x, y = graph.tensors[pad.inputs[0]], graph.tensors[padded]
    if x.dtype != "int8" or x.scale != y.scale or x.zero_point != y.zero_point or len(x.shape) != 4:
        return False
    try:
        amounts = pad_amounts(graph, pad)
        if pad_value(graph, pad) != x.zero_point[0]:  # PADV2 with another value than a real 0
            return False
    except Unsupported:
        return False
    if len(amounts) != 4 or amounts[0] != (0, 0) or amounts[3] != (0, 0) or min(min(a) for a in amounts) < 0:
        return False
    top, bottom, left, right = conv.options["padding"]
    conv.options = dict(conv.options, padding=[top + amounts[1][0], bottom + amounts[1][1],
                                               left + amounts[2][0], right + amounts[2][1]])
    conv.inputs = [pad.inputs[0]] + conv.inputs[1:]
    return True
