"""Strided copies (the copy_strided record, or an aliased copy when the values need not move): the
one way values move between layouts, for TRANSPOSE, DEPTH_TO_SPACE, MIRROR_PAD, slicing and resizing."""

import math

from ..graph import DTYPE_SIZES
from .registry import Step, Unsupported


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
    the output shares the input's memory from that byte on. A constant ``x_index`` is copied from its data
    (the record's constant)."""
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
            and total == y.size and not x.is_constant):
        return Step("copy", dict(input=x_index, output=y_index, bytes=y.nbytes), alias=True,
                    alias_offset=input_offset * element_bytes)
    if len(merged) > COPY_RANK:
        raise Unsupported(f"the copy needs {len(merged)} dimensions; at most {COPY_RANK} are supported")
    merged = [(1, 0, 0)] * (COPY_RANK - len(merged)) + merged
    fields = dict(input=y_index if x.is_constant else x_index, output=y_index, element_bytes=element_bytes,
                  input_offset=input_offset, output_offset=output_offset, constant=0)
    for k, (d, si, so) in enumerate(merged):
        fields[f"dim{k}"], fields[f"input_stride{k}"], fields[f"output_stride{k}"] = d, si, so
    return Step("copy_strided", fields, {"constant": bytes(x.data)} if x.is_constant else {})
