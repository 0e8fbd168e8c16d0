"""RESHAPE (shares memory, no kernel) and PAD (folded into the next convolution when possible)."""

from . import Step, Unsupported, lowering
from .common import require_int8


@lowering("RESHAPE", "SQUEEZE")
def lower_reshape(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.nbytes != y.nbytes or x.dtype != y.dtype:
        raise Unsupported(f"{list(x.shape)} {x.dtype} -> {list(y.shape)} {y.dtype} changes the data")
    return [Step("copy", dict(input=op.inputs[0], output=op.outputs[0], bytes=x.nbytes), alias=True)]


def pad_amounts(graph, op):
    """[(before, after)] per dimension, from the constant paddings tensor."""
    paddings = graph.tensors[op.inputs[1]]
    if not paddings.is_constant or paddings.dtype not in ("int32", "int64"):
        raise Unsupported("paddings must be a constant int32 tensor")
    width = 4 if paddings.dtype == "int32" else 8
    data = bytes(paddings.data)
    values = [int.from_bytes(data[i:i + width], "little", signed=True) for i in range(0, len(data), width)]
    return [(values[2 * i], values[2 * i + 1]) for i in range(len(values) // 2)]


@lowering("PAD")
def lower_pad(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_quantization = require_int8(x, "input")
    if require_int8(y, "output") != x_quantization:
        raise Unsupported("input and output quantization differ (PAD only moves values)")
    amounts = pad_amounts(graph, op)
    if len(x.shape) != 4 or len(amounts) != 4 or amounts[0] != (0, 0) or amounts[3] != (0, 0):
        raise Unsupported("only padding of height and width of NHWC tensors is supported")
    if any(a < 0 for pair in amounts for a in pair):
        raise Unsupported("negative padding")
    n, h, w, c = x.shape
    (top, bottom), (left, right) = amounts[1], amounts[2]
    return [Step("pad", dict(input=op.inputs[0], output=op.outputs[0], batch=n, input_height=h, input_width=w,
                             channels=c, padding_top=top, padding_bottom=bottom, padding_left=left,
                             padding_right=right, pad_value=y.zero_point[0]))]
