"""Checks and quantization arithmetic shared by the lowering functions."""

import math

from .registry import Unsupported
from ..records import FLOAT32_MAX


def round_half_away(x):
    if not math.isfinite(x):  # a NaN or infinite option (alpha, a clip bound, a scale ratio): no int8 value
        raise Unsupported(f"the value {x} cannot be quantized")
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def require_int8(tensor, role):
    if tensor.dtype != "int8":
        raise Unsupported(f"{role} '{tensor.name}' is {tensor.dtype}; only int8 is supported")
    if len(tensor.scale) != 1 or len(tensor.zero_point) != 1:
        raise Unsupported(f"{role} '{tensor.name}' must be quantized per tensor (one scale and zero point)")
    if not _valid_scale(tensor.scale[0]) or not -128 <= tensor.zero_point[0] <= 127:
        raise Unsupported(f"{role} '{tensor.name}' has an invalid scale or zero point")
    return tensor.scale[0], tensor.zero_point[0]


def _valid_scale(scale):
    """A quantization scale the kernels' float32 arithmetic can use: positive, finite as a float32."""
    return isinstance(scale, (int, float)) and 0 < scale <= FLOAT32_MAX


def constant_ints(graph, index, role):
    """The values of a constant int32 / int64 tensor (axes, shapes, paddings, indices) as Python ints."""
    tensor = graph.tensors[index] if index >= 0 else None
    if tensor is None or not tensor.is_constant or tensor.dtype not in ("int32", "int64"):
        raise Unsupported(f"{role} must be a constant int32 or int64 tensor")
    width = 4 if tensor.dtype == "int32" else 8
    data = bytes(tensor.data)
    if len(data) != tensor.size * width:
        raise Unsupported(f"{role} has {len(data)} bytes of data for shape {list(tensor.shape)}")
    return [int.from_bytes(data[i:i + width], "little", signed=True) for i in range(0, len(data), width)]


def require_constant(tensor, role, dtype):
    if not tensor.is_constant:
        raise Unsupported(f"{role} '{tensor.name}' must be a constant")
    if tensor.dtype != dtype:
        raise Unsupported(f"{role} '{tensor.name}' is {tensor.dtype}; expected {dtype}")
    if len(tensor.data) != tensor.nbytes:
        raise Unsupported(f"{role} '{tensor.name}' has {len(tensor.data)} bytes of data for shape {list(tensor.shape)}")
    return tensor.data


def require_rank(tensor, rank, role):
    if len(tensor.shape) != rank:
        raise Unsupported(f"{role} '{tensor.name}' has shape {list(tensor.shape)}; expected rank {rank}")


def activation_range(activation, scale, zero_point):
    """The fused activation as an int8 clamp, as TFLite computes it."""
    def quantize(x):
        return zero_point + round_half_away(x / scale)

    if activation == "NONE":
        return -128, 127
    if activation == "RELU":
        return max(-128, zero_point), 127
    if activation == "RELU6":
        return max(-128, zero_point), min(127, quantize(6.0))
    if activation == "RELU_N1_TO_1":
        return max(-128, quantize(-1.0)), min(127, quantize(1.0))
    raise Unsupported(f"fused activation {activation} not supported")


def require_byte_quantized(tensor, role):
    """(scale, zero_point) of a per-tensor quantized int8 or uint8 tensor."""
    if tensor.dtype == "int8":
        return require_int8(tensor, role)
    if tensor.dtype != "uint8":
        raise Unsupported(f"{role} '{tensor.name}' is {tensor.dtype}; expected int8 or uint8")
    if len(tensor.scale) != 1 or len(tensor.zero_point) != 1:
        raise Unsupported(f"{role} '{tensor.name}' must be quantized per tensor (one scale and zero point)")
    if not _valid_scale(tensor.scale[0]) or not 0 <= tensor.zero_point[0] <= 255:
        raise Unsupported(f"{role} '{tensor.name}' has an invalid scale or zero point")
    return tensor.scale[0], tensor.zero_point[0]


def broadcast_strides(shape, dims):
    """Element strides of a tensor of ``shape`` read as the rank-4 output ``dims`` (numpy
    broadcasting, leading 1s): 0 along broadcast dimensions."""
    padded = [1] * (4 - len(shape)) + list(shape)
    strides, stride = [0] * 4, 1
    for k in range(3, -1, -1):
        strides[k] = 0 if padded[k] == 1 and dims[k] != 1 else stride
        stride *= padded[k]
    return strides


def broadcast_shape(a, b):
    """numpy's broadcast of two shapes, or None when they do not broadcast."""
    rank = max(len(a), len(b))
    a = [1] * (rank - len(a)) + list(a)
    b = [1] * (rank - len(b)) + list(b)
    out = []
    for x, y in zip(a, b):
        if x != y and x != 1 and y != 1:
            return None
        out.append(y if x == 1 else x)
    return out


REDUCTIONS = ("MEAN", "SUM", "REDUCE_MAX")   # input, axes (a constant), keep_dims


def given_axes(graph, op):
    """The axes a reduction (REDUCTIONS) names, non-negative, sorted and distinct (a scalar's one axis: 0)."""
    rank = max(len(graph.tensors[op.inputs[0]].shape), 1)
    given = constant_ints(graph, op.inputs[1], "reduction axes")
    if not given or not all(-rank <= a < rank for a in given):
        raise Unsupported(f"reduction axes {given} for an input of rank {rank}")
    return sorted({a % rank for a in given})


def reduction_axes(graph, op):
    """The axes a reduction reduces (given_axes) without those of size 1 (the batch of a [1, tokens,
    channels] layer norm's MEAN over [0, 2]: reducing them changes nothing), or the first axis when every
    one has size 1."""
    x, axes = graph.tensors[op.inputs[0]], given_axes(graph, op)
    return [a for a in axes if len(x.shape) > a and x.shape[a] != 1] or axes[:1]
