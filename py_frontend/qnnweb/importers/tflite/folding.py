"""Integer shape arithmetic (SHAPE -> STRIDED_SLICE -> PACK -> RESHAPE chains, as converters write
them) evaluated at import on static shapes."""

from .. import shape_folding as folding
from ..shape_folding import FoldError


def fold_shape_arithmetic(tensors, ops):
    """Evaluate every op of integer shape arithmetic whose inputs are constants or static shapes
    (SHAPE, STRIDED_SLICE, PACK, CONCATENATION, GATHER, CAST, RESHAPE, SQUEEZE, EXPAND_DIMS, ADD,
    SUB, MUL, DIV on int32/int64): its output becomes a constant and the op is dropped."""
    kept = []
    for op in ops:
        try:
            value = _fold(op, tensors)
        except FoldError:
            value = None
        if value is None:
            kept.append(op)
            continue
        y = tensors[op.outputs[0]]
        try:
            y.data = value.to_bytes(y.dtype)
        except FoldError:
            kept.append(op)
            continue
        if y.shape != value.shape and folding.product(y.shape) == folding.product(value.shape):
            y.shape = value.shape
    return kept


INTEGER = ("int32", "int64")


def _constant(tensors, index):
    t = tensors[index] if index >= 0 else None
    if t is None or t.data is None or t.dtype not in INTEGER + ("float32",):
        raise FoldError("not a constant")
    return folding.Folded.from_bytes(t.dtype, t.shape, t.data)


def _fold(op, tensors):
    if len(op.outputs) != 1 or op.outputs[0] < 0:
        return None
    y = tensors[op.outputs[0]]
    if y.dtype not in INTEGER or y.data is not None:
        return None
    if op.type == "SHAPE":
        return folding.shape_of(tensors[op.inputs[0]].shape)
    if op.type not in ("STRIDED_SLICE", "PACK", "CONCATENATION", "GATHER", "CAST", "RESHAPE", "SQUEEZE",
                       "EXPAND_DIMS", *folding.ARITHMETIC):
        return None
    args = [_constant(tensors, i) for i in op.inputs]
    o = op.options
    if op.type == "PACK":
        return folding.stack(args, o.get("axis", 0))
    if op.type == "CONCATENATION":
        return folding.concat(args, o.get("axis", 0))
    if op.type == "GATHER":
        return folding.gather(args[0], args[1], o.get("axis", 0))
    if op.type in ("CAST", "RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
        return folding.reshape(args[0], y.shape)
    if op.type in folding.ARITHMETIC:
        return folding.elementwise(folding.ARITHMETIC[op.type], args[0], args[1])
    return _strided_slice(args, o)


def _strided_slice(args, o):
    x, begin, end, strides = args
    if len(x.shape) != 1 or len(begin.values) != 1 or o.get("ellipsis_mask") or o.get("new_axis_mask"):
        raise FoldError("only 1-D strided slices")
    step = int(strides.values[0])
    b, e = int(begin.values[0]), int(end.values[0])
    if o.get("offset"):
        e += b
    size = x.shape[0]
    if o.get("begin_mask", 0) & 1:
        b = 0 if step > 0 else size - 1
    if o.get("end_mask", 0) & 1:
        e = size if step > 0 else -size - 1
    if o.get("shrink_axis_mask", 0) & 1:
        if not -size <= b < size:
            raise FoldError("index outside the tensor")
        return folding.Folded((), [x.values[b % size]])
    b, e = folding.clamp_bounds(b, e, step, size)
    if step < 0 and e == -1:
        e = None
    return folding.slice_1d(x, b, e, step)
