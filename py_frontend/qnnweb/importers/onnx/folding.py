"""Constants folded at import: a node of FOLDABLE whose inputs are all constants (initializers, Constant
nodes, earlier folded nodes, int8 constants dequantized per tensor; for Shape, any tensor of static shape)
is computed here, once, and its result becomes a constant that later handlers take as they take an
initializer (a QuantizeLinear -> DequantizeLinear after it, a float constant operand, a Reshape's shape).
torch.onnx writes such arithmetic even when every shape is static: ``x.view(x.size(0), -1)``, the attention
scale of scaled_dot_product_attention (Shape -> Slice -> Cast -> Sqrt -> Div), a class token expanded to
the batch (ConstantOfShape -> Equal -> Where -> Expand), attention-bias tables gathered by constant
indices, a detector's anchor grid (Range, Tile, Transpose).

Values of float32, int32, int64 and bool are folded as onnxruntime computes them (constant_math.py), and
int8 / uint8 ones moved (MOVES); a node on other types is left to its handler. A node whose inputs are all
constants but that cannot be computed (shapes that do not broadcast, a Cast to an unsupported type, a
result over shape_folding.MAX_RESULT elements) is refused with the reason."""

from .. import shape_folding as folding
from ..shape_folding import FoldError
from . import constant_math
from .attributes import attributes
from .constants import Constant, QuantizedConstant
from .layout import onnx_shape
from .proto import tensor_bytes
from .skip import Skip

FOLDED_TYPES = ("float32", "int32", "int64", "bool")
# int8 / uint8 constants are only moved (QOperator's Gather of a quantized table: the values keep their
# quantization); their arithmetic is the quantized ops' own
BYTE_TYPES = ("int8", "uint8")
MOVES = ("Gather", "Reshape", "Squeeze", "Unsqueeze", "Slice", "Concat", "Expand", "Tile", "Transpose")
UNARY = ("Sqrt", "Neg", "Reciprocal", "Not", "IsNaN")
BINARY = ("Add", "Sub", "Mul", "Div", "Mod", "Pow", "Equal", "Less", "Greater", "LessOrEqual", "GreaterOrEqual", "And",
          "Or", "Xor")
# the inputs that are indices, shapes or axes: integers
INTEGER_INPUTS = {"Gather": (1,), "Expand": (1,), "Tile": (1,), "Reshape": (1,), "Slice": (1, 2, 3, 4),
                  "Unsqueeze": (1,), "Squeeze": (1,), "ConstantOfShape": (0,)}
# what torch writes on tensors' shapes (``x.view(x.size(0), -1)``): read as known ops even after a node that
# cannot run, whose own problem is then the one reported (registry.known)
SHAPE_ARITHMETIC = ("Shape", "Gather", "Unsqueeze", "Squeeze", "Concat", "Cast", "Slice", "ConstantOfShape",
                    "Reshape", "Add", "Sub", "Mul", "Div", "Identity")
FOLDABLE = tuple(dict.fromkeys((*SHAPE_ARITHMETIC, "Where", "Expand", "Tile", "Range", "Transpose", *UNARY, *BINARY)))


def fold(ctx, node):
    """True when ``node`` computed a constant (stored in ``ctx.constants``); False to handle it as an op.
    Raises Skip when its inputs are all constants but it cannot be computed."""
    if node.op_type not in FOLDABLE or node.domain not in ("", "ai.onnx") or len(node.output) != 1:
        return False
    if node.op_type == "Transpose" and per_axis_constant(ctx, node.input[0]):
        transpose_per_axis_constant(ctx, node)
        return True
    if not foldable_inputs(ctx, node):
        return False
    try:
        value, dtype = evaluate(ctx, node, attributes(node))
        data = value.to_bytes(dtype)
    except (FoldError, ArithmeticError) as e:
        raise Skip(f"its inputs are constants, but it cannot be computed at load time: {e}") from None
    ctx.constants[node.output[0]] = Constant(node.output[0], dtype, value.shape, data)
    return True


def per_axis_constant(ctx, name):
    q = ctx.quantized_constants.get(name)
    return q is not None and q.constant.dtype in BYTE_TYPES and len(q.scale) > 1


def transpose_per_axis_constant(ctx, node):
    """A Transpose of int8 weights dequantized per axis (torch.onnx's Linear on a 3-D input: the
    weights transposed for a MatMul): the int8 values moved, their axis with them, still dequantized
    weights for the MatMul (onnxruntime's transpose optimizer moves the Transpose before the
    DequantizeLinear the same way)."""
    q = ctx.quantized_constants[node.input[0]]
    rank = len(q.constant.shape)
    perm = attributes(node).get("perm")
    perm = list(perm) if perm else list(range(rank))[::-1]
    try:
        moved = folding.transpose(folding.Folded.from_bytes(q.constant.dtype, q.constant.shape, q.constant.data), perm)
    except FoldError as e:
        raise Skip(f"its input is constant weights, but they cannot be transposed: {e}") from None
    constant = Constant(node.output[0], q.constant.dtype, moved.shape, moved.to_bytes(q.constant.dtype))
    ctx.quantized_constants[node.output[0]] = QuantizedConstant(constant, q.scale, q.zero_point,
                                                                perm.index(q.axis % rank))


def foldable_inputs(ctx, node):
    """Whether every input is a constant of a folded type and size (Shape: its input's shape is static)."""
    if node.op_type == "Shape":
        try:
            static_shape(ctx, node.input[0])
        except FoldError:
            return False
        return True
    if node.op_type == "Identity" and node.input[0] in ctx.quantized_constants:
        return False   # its handler passes the int8 constant on (weights after an Identity stay int8)
    types = FOLDED_TYPES + (BYTE_TYPES if node.op_type in MOVES else ())
    return all(dequantizable(ctx.quantized_constants[name]) if name in ctx.quantized_constants else
               name in ctx.constants and ctx.constants[name].dtype in types
               and folding.product(ctx.constants[name].shape) <= folding.MAX_RESULT for name in node.input if name)


def dequantizable(q):
    """Whether a dequantized constant is folded as its float32 values (QuantizedConstant.dequantized(), as
    onnxruntime's DequantizeLinear gives them): int8 / uint8 quantized per tensor, as the quantizer leaves a
    table indexed by constant indices (LeViT's attention biases)."""
    return q.constant.dtype in ("int8", "uint8") and len(q.scale) == len(q.zero_point) == 1 \
        and folding.product(q.constant.shape) <= folding.MAX_RESULT


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
    """(Folded value, dtype) of constant ``name``; (None, None) for an absent optional input ("")."""
    if not name:
        return None, None
    if name in ctx.quantized_constants:
        q = ctx.quantized_constants[name]
        return folding.Folded(q.constant.shape, q.dequantized()), "float32"
    constant = ctx.constants[name]
    value = folding.Folded.from_bytes(constant.dtype, constant.shape, constant.data, limit=folding.MAX_RESULT)
    return value, constant.dtype


def ints(value):
    return [int(v) for v in value.values]


def scalar(value, what):
    if len(value.values) != 1:
        raise FoldError(f"{what} must be a scalar, got shape {list(value.shape)}")
    return value.values[0]


def evaluate(ctx, node, attrs):
    op = node.op_type
    if op == "Shape":
        shape = static_shape(ctx, node.input[0])
        start, end = attrs.get("start", 0), attrs.get("end", len(shape))
        return folding.slice_1d(folding.shape_of(shape), *folding.clamp_bounds(start, end, 1, len(shape)), 1), \
            "int64"
    args = [folded_input(ctx, name) for name in node.input]
    values, dtypes = [a[0] for a in args], [a[1] for a in args]
    x, dtype = values[0], dtypes[0]
    for k in INTEGER_INPUTS.get(op, ()):
        if k < len(dtypes) and dtypes[k] is not None and dtypes[k] not in constant_math.INTEGER:
            raise FoldError(f"input {k} ({node.input[k]}) is {dtypes[k]}; {op} takes integers there")
    if op in UNARY:
        function = constant_math.unary_function(op, dtype)
        to = "bool" if op == "IsNaN" else dtype
        return folding.Folded(x.shape, constant_math.finish([function(v) for v in x.values], to)), to
    if op in BINARY:
        return binary(op, values, dtypes, attrs)
    if op == "Where":
        return where(values, dtypes)
    if op == "ConstantOfShape":
        return constant_of_shape(x, attrs)
    if op == "Range":
        if dtype not in constant_math.NUMERIC or len(set(dtypes)) != 1:
            raise FoldError(f"Range of {' / '.join(dtypes)} values")
        start, limit, delta = (scalar(v, f"Range's {what}") for v, what in zip(values, ("start", "limit", "delta")))
        count = constant_math.range_count(start, limit, delta)
        folding.require_size([count])
        return folding.Folded([count], constant_math.range_values(start, delta, count, dtype)), dtype
    if op == "Identity":
        return x, dtype
    if op == "Cast":
        cast, to = constant_math.cast(x.values, dtype, attrs.get("to"))
        return folding.Folded(x.shape, cast), to
    if op == "Expand":
        shape = ints(values[1])
        if any(d < 0 for d in shape):
            raise FoldError(f"Expand to shape {shape}")
        return folding.broadcast_to(x, folding.broadcast_shape(x.shape, shape)), dtype
    if op == "Tile":
        return folding.tile(x, ints(values[1])), dtype
    if op == "Transpose":
        perm = attrs.get("perm")
        return folding.transpose(x, list(perm) if perm else list(range(len(x.shape)))[::-1]), dtype
    if op == "Gather":
        return folding.gather(x, values[1], attrs.get("axis", 0)), dtype
    if op == "Concat":
        if len(set(dtypes)) != 1:
            raise FoldError(f"Concat of {' and '.join(sorted(set(dtypes)))} values")
        return folding.concat(values, attrs.get("axis", 0)), dtype
    if op in ("Unsqueeze", "Squeeze"):
        return folding.reshape(x, squeezed_shape(op, x.shape, attrs, values)), dtype
    if op == "Reshape":
        return folding.reshape(x, reshaped_shape(x, ints(values[1]), attrs.get("allowzero", 0))), dtype
    return fold_slice(values), dtype   # Slice


def binary(op, values, dtypes, attrs):
    a, b = values
    if op != "Pow" and dtypes[0] != dtypes[1]:
        raise FoldError(f"{op} of {dtypes[0]} and {dtypes[1]} values")
    function = constant_math.binary_function(op, dtypes[0], attrs, op == "Pow" and exponent_per_span(a.shape, b.shape))
    result = folding.elementwise(function, a, b)
    dtype = "bool" if op in constant_math.COMPARISONS else dtypes[0]
    return folding.Folded(result.shape, constant_math.finish(result.values, dtype)), dtype


def exponent_per_span(base, exponent):
    """Whether onnxruntime's broadcasting hands its Pow kernel spans of bases with one exponent each (then
    x ** 2 and x ** 3 are products): a base of one element is the kernel's scalar first; else an exponent of
    one element, or one constant along the output's innermost dimension that is not 1."""
    if folding.product(base) == 1:
        return False
    if folding.product(exponent) == 1:
        return True
    out = folding.broadcast_shape(base, exponent)
    n = len(out)
    while n > 0 and out[n - 1] == 1:
        n -= 1
    padded = (1,) * (len(out) - len(exponent)) + tuple(exponent)
    return n > 0 and padded[n - 1] == 1


def where(values, dtypes):
    if dtypes[0] != "bool" or dtypes[1] != dtypes[2]:
        raise FoldError(f"Where of a {dtypes[0]} condition and {dtypes[1]} / {dtypes[2]} values")
    return folding.elementwise(lambda c, p, q: p if c else q, *values), dtypes[1]


def constant_of_shape(shape, attrs):
    value = attrs.get("value")
    dtype, fill = "float32", [0.0]
    if value is not None and hasattr(value, "t"):
        dtype, _, data = tensor_bytes(value.t)
        if dtype not in FOLDED_TYPES:
            raise FoldError(f"ConstantOfShape of {dtype} is not computed at load time")
        fill = folding.Folded.from_bytes(dtype, (1,), data).values
    dims = ints(shape)
    if any(d < 0 for d in dims):
        raise FoldError(f"ConstantOfShape of shape {dims}")
    return folding.Folded(folding.require_size(dims), fill * folding.product(dims)), dtype


def squeezed_shape(op, shape, attrs, values):
    axes = attrs.get("axes") if "axes" in attrs else (ints(values[1]) if len(values) > 1 and values[1] else None)
    shape = list(shape)
    rank = len(shape) + len(axes or ()) if op == "Unsqueeze" else len(shape)
    if any(not -rank <= a < rank for a in axes or ()):
        raise FoldError(f"{op} axes {list(axes)} for a result of rank {rank}")
    if op == "Unsqueeze":
        if not axes:
            raise FoldError("Unsqueeze without axes")
        for axis in sorted(a % rank for a in axes):
            shape.insert(axis, 1)
        return shape
    drop = {a % rank for a in axes} if axes else {k for k, d in enumerate(shape) if d == 1}
    if any(shape[k] != 1 for k in drop):
        raise FoldError(f"Squeeze of axes {sorted(drop)} of shape {shape}")
    return [d for k, d in enumerate(shape) if k not in drop]


def reshaped_shape(x, target, allowzero):
    if not allowzero:
        if any(d == 0 and k >= len(x.shape) for k, d in enumerate(target)):
            raise FoldError(f"Reshape shape {target}: a 0 copies a dimension {list(x.shape)} does not have")
        target = [x.shape[k] if d == 0 else d for k, d in enumerate(target)]
    if target.count(-1) == 1:
        known = folding.product([d for d in target if d != -1])
        target[target.index(-1)] = len(x.values) // known if known else 0
    if folding.product(target) != len(x.values) or any(d < 0 for d in target):
        raise FoldError(f"cannot reshape {list(x.shape)} to {target}")
    return target


def fold_slice(values):
    """ONNX Slice on any axes: each axis's positions from its clamped start, end and step."""
    x, starts, ends = values[:3]
    rank = len(x.shape)
    axes = ints(values[3]) if len(values) > 3 and values[3] else list(range(len(starts.values)))
    steps = ints(values[4]) if len(values) > 4 and values[4] else [1] * len(axes)
    if not len(axes) == len(steps) == len(starts.values) == len(ends.values):
        raise FoldError("Slice's starts, ends, axes and steps differ in length")
    positions = [range(d) for d in x.shape]
    for axis, start, end, step in zip(axes, ints(starts), ints(ends), steps):
        if not -rank <= axis < rank:
            raise FoldError(f"Slice axis {axis} for rank {rank}")
        size = x.shape[axis % rank]
        start, end = folding.clamp_bounds(start, end, step, size)
        positions[axis % rank] = range(start, end, step)
    return folding.select(x, positions)
