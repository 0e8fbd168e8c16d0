"""Shape arithmetic folded at import: Shape / Gather / Unsqueeze / Squeeze / Concat / Cast / Slice /
ConstantOfShape / Reshape / Add / Sub / Mul / Div over integer constants and static shapes (what torch
writes for ``x.view(x.size(0), -1)``) become constants, so the Reshape they feed sees a constant shape."""

from .. import shape_folding as folding
from ..shape_folding import FoldError
from .attributes import attributes
from .constants import Constant
from .layout import onnx_shape
from .proto import tensor_bytes

INTEGER = ("int32", "int64")

FOLDABLE = ("Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Cast", "Slice", "ConstantOfShape", "Reshape",
            "Add", "Sub", "Mul", "Div", "Identity")

CAST_TYPES = {6: "int32", 7: "int64"}   # TensorProto.INT32, INT64


def fold(ctx, node):
    """True when ``node`` computed a constant (stored in ``ctx.constants``); False to handle it as an op."""
    if node.op_type not in FOLDABLE or node.domain not in ("", "ai.onnx") or len(node.output) != 1:
        return False
    try:
        value, dtype = evaluate(ctx, node, attributes(node))
    except FoldError:
        return False
    ctx.constants[node.output[0]] = Constant(node.output[0], dtype, value.shape, value.to_bytes(dtype))
    return True


def static_shape(ctx, name):
    if name in ctx.values:
        return onnx_shape(ctx, name)
    if name in ctx.views:
        return onnx_shape(ctx, ctx.views[name])
    if name in ctx.constants:
        return ctx.constants[name].shape
    if name in ctx.quantized_constants:
        return ctx.quantized_constants[name].constant.shape
    raise FoldError(f"no static shape for '{name}'")


def folded_input(ctx, name):
    constant = ctx.constants.get(name)
    if constant is None or constant.dtype not in INTEGER:
        raise FoldError(f"'{name}' is not an integer constant")
    return folding.Folded.from_bytes(constant.dtype, constant.shape, constant.data), constant.dtype


def evaluate(ctx, node, attrs):
    op = node.op_type
    if op == "Shape":
        shape = static_shape(ctx, node.input[0])
        start, end = attrs.get("start", 0), attrs.get("end", len(shape))
        return folding.slice_1d(folding.shape_of(shape), *folding.clamp_bounds(start, end, 1, len(shape)), 1), \
            "int64"
    if op == "ConstantOfShape":
        shape, _ = folded_input(ctx, node.input[0])
        value = attrs.get("value")
        dtype, fill = "float32", [0.0]
        if value is not None and hasattr(value, "t"):
            dtype, _, data = tensor_bytes(value.t)
            fill = folding.Folded.from_bytes(dtype, (1,), data).values
        if dtype not in INTEGER:
            raise FoldError("only integer ConstantOfShape is folded")
        dims = [int(d) for d in shape.values]
        return folding.Folded(dims, fill * folding.product(dims)), dtype
    args = [folded_input(ctx, name) for name in node.input if name]
    values, dtypes = [a[0] for a in args], [a[1] for a in args]
    if not values:
        raise FoldError("no inputs")
    if op == "Identity":
        return values[0], dtypes[0]
    if op == "Cast":
        to = CAST_TYPES.get(attrs.get("to"))
        if to is None:
            raise FoldError("cast to a non-integer type")
        return values[0], to
    if op == "Gather":
        return folding.gather(values[0], values[1], attrs.get("axis", 0)), dtypes[0]
    if op == "Concat":
        return folding.concat(values, attrs.get("axis", 0)), dtypes[0]
    if op in ("Unsqueeze", "Squeeze"):
        axes = attrs.get("axes") if "axes" in attrs else ([int(v) for v in values[1].values] if len(values) > 1
                                                          else None)
        shape = list(values[0].shape)
        if op == "Unsqueeze":
            for axis in sorted(a % (len(shape) + len(axes)) for a in axes):
                shape.insert(axis, 1)
        else:
            drop = {a % len(shape) for a in axes} if axes else {k for k, d in enumerate(shape) if d == 1}
            shape = [d for k, d in enumerate(shape) if k not in drop]
        return folding.reshape(values[0], shape), dtypes[0]
    if op == "Reshape":
        target = [int(v) for v in values[1].values]
        target = [values[0].shape[k] if d == 0 else d for k, d in enumerate(target)]
        if target.count(-1) == 1:
            known = folding.product([d for d in target if d != -1])
            target[target.index(-1)] = len(values[0].values) // known if known else 0
        return folding.reshape(values[0], target), dtypes[0]
    if op == "Slice":
        return fold_slice(values), dtypes[0]
    return folding.elementwise(folding.ARITHMETIC[op.upper()], values[0], values[1]), dtypes[0]


def fold_slice(values):
    x, starts, ends = values[:3]
    axes = [int(v) for v in values[3].values] if len(values) > 3 else [0]
    steps = [int(v) for v in values[4].values] if len(values) > 4 else [1]
    if len(x.shape) != 1 or axes not in ([0], [-1]) or len(starts.values) != 1:
        raise FoldError("only 1-D slices are folded")
    size, step = x.shape[0], steps[0]
    start, end = folding.clamp_bounds(int(starts.values[0]), int(ends.values[0]), step, size)
    return folding.slice_1d(x, start, None if step < 0 and end == -1 else end, step)
