"""SLICE, STRIDED_SLICE, SPLIT, SPLIT_V and GATHER with constant indices: each output is one strided
copy of its input (strided_copy.py), or none at all when it is a contiguous part of the input
(then it shares the input's memory). Values move, their quantization stays."""

import math

from .registry import Unsupported, lowering
from .common import constant_ints
from .strided_copy import contiguous_strides, require_moved_values, strided_copy


def _moved(graph, op, output=0):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[output]]
    require_moved_values(x, y, op.type)
    if x.is_constant:
        raise Unsupported(f"input '{x.name}' is a constant; only activations are sliced at run time")
    return x, y


def _window(graph, op, y_index, starts, steps, counts, x_index=None):
    """The copy of the window starting at ``starts`` with ``steps`` and ``counts`` per input dimension."""
    x_index = op.inputs[0] if x_index is None else x_index
    x, y = graph.tensors[x_index], graph.tensors[y_index]
    strides = contiguous_strides(x.shape)
    if math.prod(counts) != y.size:
        raise Unsupported(f"the slice has {counts} elements per dimension; the output is {list(y.shape)}")
    return strided_copy(graph, x_index, y_index, counts, [s * k for s, k in zip(strides, steps)],
                        sum(s * b for s, b in zip(strides, starts)))



def _vector(graph, index, role, rank):
    values = constant_ints(graph, index, role)
    if len(values) != rank:
        raise Unsupported(f"{role} has {len(values)} values for an input of rank {rank}")
    return values


@lowering("SLICE")
def lower_slice(graph, op):
    """inputs: input, begin, size (constant; a size of -1 takes the rest of the dimension)."""
    x, y = _moved(graph, op)
    rank = len(x.shape)
    begin, size = _vector(graph, op.inputs[1], "begin", rank), _vector(graph, op.inputs[2], "size", rank)
    counts = []
    for k, (b, n, d) in enumerate(zip(begin, size, x.shape)):
        n = d - b if n == -1 else n
        if not (0 <= b <= d and 0 <= n and b + n <= d):
            raise Unsupported(f"begin {b} and size {n} leave dimension {k} (of size {d})")
        counts.append(n)
    return [_window(graph, op, op.outputs[0], begin, [1] * rank, counts)]


def strided_slice_window(shape, begin, end, strides, options):
    """(starts, steps, counts per input dimension, output shape) of TFLite's STRIDED_SLICE (numpy's
    slicing: masks per spec, one ellipsis, new axes of size 1, shrunk axes dropped)."""
    masks = {name: options.get(name, 0) for name in ("begin_mask", "end_mask", "ellipsis_mask", "new_axis_mask",
                                                     "shrink_axis_mask")}
    bit = lambda name, i: (masks[name] >> i) & 1   # noqa: E731
    if masks["ellipsis_mask"] & (masks["ellipsis_mask"] - 1):
        raise Unsupported("more than one ellipsis")
    specs = len(begin)
    consuming = sum(1 for i in range(specs) if not bit("new_axis_mask", i) and not bit("ellipsis_mask", i))
    starts, steps, counts, out_shape, dim = [], [], [], [], 0

    def full(d):
        starts.append(0), steps.append(1), counts.append(d), out_shape.append(d)

    for i in range(specs):
        if bit("ellipsis_mask", i):
            for _ in range(len(shape) - consuming):
                if dim < len(shape):
                    full(shape[dim])
                dim += 1
            continue
        if bit("new_axis_mask", i):
            out_shape.append(1)
            continue
        if dim >= len(shape):
            raise Unsupported(f"{specs} slice specs for an input of rank {len(shape)}")
        d, step = shape[dim], strides[i]
        if step == 0:
            raise Unsupported("a stride of 0")
        b, e = begin[i], end[i]
        if options.get("offset"):
            e = b + e
        if bit("shrink_axis_mask", i):
            b = 0 if bit("begin_mask", i) else b
            b = b + d if b < 0 else b
            if not 0 <= b < d:
                raise Unsupported(f"index {begin[i]} outside dimension {dim} (of size {d})")
            starts.append(b), steps.append(1), counts.append(1)
        else:
            start, stop, step = slice(None if bit("begin_mask", i) else b, None if bit("end_mask", i) else e,
                                      step).indices(d)
            count = len(range(start, stop, step))
            starts.append(start if count else 0), steps.append(step), counts.append(count), out_shape.append(count)
        dim += 1
    while dim < len(shape):
        full(shape[dim])
        dim += 1
    return starts, steps, counts, out_shape


@lowering("STRIDED_SLICE")
def lower_strided_slice(graph, op):
    """inputs: input, begin, end, strides (constant); options: begin_mask, end_mask, ellipsis_mask,
    new_axis_mask, shrink_axis_mask, offset (end counts from begin). Negative strides reverse."""
    x, y = _moved(graph, op)
    specs = len(constant_ints(graph, op.inputs[1], "begin"))
    begin, end, strides = (_vector(graph, op.inputs[k], role, specs) for k, role in
                           ((1, "begin"), (2, "end"), (3, "strides")))
    starts, steps, counts, out_shape = strided_slice_window(x.shape, begin, end, strides, op.options)
    if list(y.shape) != out_shape:
        raise Unsupported(f"the slice gives shape {out_shape}; the output is {list(y.shape)}")
    return [_window(graph, op, op.outputs[0], starts, steps, counts)]


def _split(graph, op, x_index, axis, sizes):
    x = graph.tensors[x_index]
    rank = len(x.shape)
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} for an input of rank {rank}")
    axis %= rank
    if len(sizes) != len(op.outputs):
        raise Unsupported(f"{len(sizes)} parts for {len(op.outputs)} outputs")
    if any(s < 0 for s in sizes) or sum(sizes) != x.shape[axis]:
        raise Unsupported(f"parts {sizes} do not add up to dimension {axis} (of size {x.shape[axis]})")
    steps, start = [], 0
    for k, size in enumerate(sizes):
        y = graph.tensors[op.outputs[k]]
        require_moved_values(x, y, op.type)
        starts = [start if j == axis else 0 for j in range(rank)]
        counts = [size if j == axis else d for j, d in enumerate(x.shape)]
        steps.append(_window(graph, op, op.outputs[k], starts, [1] * rank, counts, x_index))
        start += size
    return steps


@lowering("SPLIT")
def lower_split(graph, op):
    """inputs: axis (constant), input; options: num_splits (equal parts)."""
    x_index = op.inputs[1]
    if graph.tensors[x_index].is_constant:
        raise Unsupported("the input is a constant; only activations are split at run time")
    (axis,) = _vector(graph, op.inputs[0], "axis", 1)
    parts = op.options.get("num_splits", len(op.outputs))
    d = graph.tensors[x_index].shape[axis] if -len(graph.tensors[x_index].shape) <= axis < len(graph.tensors[x_index].shape) else 0
    if type(parts) is not int or parts != len(op.outputs) or parts < 1 or d % parts:
        raise Unsupported(f"num_splits {parts!r} for {len(op.outputs)} outputs and a dimension of {d}")
    return _split(graph, op, x_index, axis, [d // parts] * parts)


@lowering("SPLIT_V")
def lower_split_v(graph, op):
    """inputs: input, size_splits (constant; one of them may be -1: the rest), axis (constant)."""
    x, _ = _moved(graph, op)
    sizes = constant_ints(graph, op.inputs[1], "size_splits")
    (axis,) = _vector(graph, op.inputs[2], "axis", 1)
    if sizes.count(-1) == 1 and -len(x.shape) <= axis < len(x.shape):
        sizes[sizes.index(-1)] = x.shape[axis] - (sum(sizes) + 1)
    return _split(graph, op, op.inputs[0], axis, sizes)


MAX_GATHER_RUNS = 4096   # one record per run of evenly spaced indices


@lowering("GATHER")
def lower_gather(graph, op):
    """inputs: params (an activation), indices (constant, any shape); options: axis, batch_dims (0).
    Every run of evenly spaced indices is one strided copy into its part of the output."""
    x, y = _moved(graph, op)
    if op.options.get("batch_dims", 0):
        raise Unsupported("batch_dims other than 0")
    rank, axis = len(x.shape), op.options.get("axis", 0)
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} for an input of rank {rank}")
    axis %= rank
    indices_tensor = graph.tensors[op.inputs[1]]
    indices = constant_ints(graph, op.inputs[1], "indices")
    extent = x.shape[axis]
    if any(not 0 <= i < extent for i in indices):   # TFLite refuses negative indices too
        raise Unsupported(f"an index lies outside dimension {axis} (of size {extent})")
    expected = list(x.shape[:axis]) + list(indices_tensor.shape) + list(x.shape[axis + 1:])
    if list(y.shape) != expected:
        raise Unsupported(f"the gather gives shape {expected}; the output is {list(y.shape)}")
    outer, inner, n = math.prod(x.shape[:axis]), math.prod(x.shape[axis + 1:]), len(indices)
    runs, first = [], 0
    while first < n:   # greedy: the longest run of evenly spaced indices from `first`
        last = first + 1
        if last < n:
            step = indices[last] - indices[first]
            while last + 1 < n and indices[last + 1] - indices[last] == step:
                last += 1
            last += 1
        runs.append((first, last))
        first = last
    if len(runs) > MAX_GATHER_RUNS:
        raise Unsupported(f"{len(runs)} runs of evenly spaced indices; at most {MAX_GATHER_RUNS} are supported")
    steps = []
    for first, last in runs:
        step = indices[first + 1] - indices[first] if last - first > 1 else 1
        steps.append(strided_copy(graph, op.inputs[0], op.outputs[0], [outer, last - first, inner],
                                  [extent * inner, step * inner, 1], indices[first] * inner,
                                  [n * inner, inner, 1], first * inner))
    return steps
