"""Layouts: ONNX's activations are NCHW, the IR's feature maps NHWC. Which layout a value is held in
(context.Value.nhwc), the transposes and reshapes between them, and permuted constant data."""

from ...graph import DTYPE_SIZES, permuted_bytes
from .context import Value
from .skip import Skip

NCHW_TO_NHWC = (0, 2, 3, 1)


def channels_first(rank):
    """The perm from a channels-last IR tensor (Value.nhwc) of `rank` back to ONNX's layout:
    [N, H, W, C...] -> [N, C..., H, W] ((0, 3, 1, 2) for rank 4)."""
    return (0, *range(3, rank), 1, 2)


def onnx_shape(ctx, name):
    """The tensor's shape in ONNX's layout."""
    value = ctx.values[name]
    shape = ctx.tensors[value.index].shape
    return tuple(shape[i] for i in channels_first(len(shape))) if value.nhwc else shape


def transpose(ctx, index, perm):
    """IR index of tensor ``index`` permuted; a constant is permuted here, into a new constant."""
    key = (index, tuple(perm))
    if key not in ctx.transposed:
        t = ctx.tensors[index]
        shape = [t.shape[p] for p in perm]
        if t.is_constant:
            data = permuted_bytes(t.data, t.shape, perm, DTYPE_SIZES[t.dtype])
            out = ctx.add_tensor(t.name + "/transposed", shape, t.dtype, t.scale, t.zero_point, data)
        else:
            out = ctx.add_tensor(t.name + "/transposed", shape, t.dtype, t.scale, t.zero_point)
            ctx.add_op("TRANSPOSE", [index], [out], perm=list(perm))
        ctx.transposed[key] = out
    return ctx.transposed[key]


def reshaped(ctx, index, shape, suffix):
    """IR index of tensor ``index`` with another shape, the same bytes: a RESHAPE (no copy), or for
    a constant a new constant sharing the data (an op would leave it without data)."""
    t = ctx.tensors[index]
    if t.is_constant:
        return ctx.add_tensor(t.name + suffix, shape, t.dtype, t.scale, t.zero_point, t.data)
    out = ctx.add_tensor(t.name + suffix, shape, t.dtype, t.scale, t.zero_point)
    ctx.add_op("RESHAPE", [index], [out])
    return out


def nhwc_index(ctx, name):
    """IR index of the int8 tensor `name` in NHWC (a 4-D ONNX tensor)."""
    value = ctx.values[name]
    if value.nhwc:
        return value.index
    shape = ctx.tensors[value.index].shape
    if len(shape) != 4:
        raise Skip(f"expected a 4-D NCHW tensor, '{name}' has shape {list(shape)}")
    return transpose(ctx, value.index, NCHW_TO_NHWC)


def plain_index(ctx, name):
    """IR index of `name` in ONNX's own layout."""
    value = ctx.values[name]
    if not value.nhwc:
        return value.index
    shape = ctx.tensors[value.index].shape
    perm = channels_first(len(shape))
    if shape[1] == 1 and shape[2] == 1:  # [N,1,1,C] and [N,C,1,1] are the same bytes
        out = reshaped(ctx, value.index, [shape[p] for p in perm], "/nchw")
        ctx.values[name] = Value(out)
        return out
    return transpose(ctx, value.index, perm)
