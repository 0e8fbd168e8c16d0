"""Boolean tensors computed at run time: an attention mask's truth, as transformers exports it (4.x:
Where(Cast(1 - mask, bool), finfo.min, 1 - mask); 5.x: Cast(mask, bool), moved, And a constant, then
Where(b, 0, -inf) and after the Softmax Where(IsNaN(p), 0, p)). A bool tensor is held as float32 0.0 / 1.0,
so the moves (float32_path.py) carry it and a Cast of it to float32 is the identity; its functions are
element functions (ELEMENT_F32). A bool read only by Where nodes that choose between its source x and a
constant is not made at all: Where(Cast(x, bool), c, x) is NONZERO_TO c of x, Where(Cast(x, bool), x, c)
ZERO_TO, Where(IsNaN(x), c, x) NAN_TO. NaN is true, as a C++ bool conversion has it."""

from ..shape_folding import FoldError, broadcast_shape
from .constants import float_values, int32_constant
from .context import producers
from .float32_path import element_f32, float32_result
from .quantization import bool_cast, float_value
from .registry import onnx_op
from .skip import Skip


MOVES = ("Unsqueeze", "Squeeze", "Reshape", "Flatten", "Expand", "Identity", "Transpose", "Gather", "Slice")


def held_bool(ctx, name):
    """Whether `name` is a run-time bool held as float32 0 / 1: made so, or moved from one."""
    while name not in ctx.bools:
        producer = producers(ctx).get(name)
        if producer is None or producer.op_type not in MOVES or name not in ctx.values:
            return False
        name = producer.input[0]
    return True


def _only_chosen(ctx, name, source):
    """Whether every reader of bool `name` is a Where choosing between `source` and another input, or a
    Cast of it to bool read so."""
    readers = ctx.consumers.get(name, [])
    return bool(readers) and name not in ctx.outputs and all(
        (r.op_type == "Where" and r.input[0] == name and source in r.input[1:])
        or (bool_cast(r) and _only_chosen(ctx, r.output[0], source)) for r in readers)


def truth(ctx, node, source, predicate):
    """The bool output of `node`, `predicate` ("nonzero" or "nan") of float32 value `source`: a truth
    only, where Where nodes choose with it; otherwise (nonzero only) made, as 0 / 1."""
    name = node.output[0]
    ctx.truths[name] = (source, predicate)
    if _only_chosen(ctx, name, source):
        return
    if predicate != "nonzero":
        raise Skip("IsNaN runs where a Where chooses with it between its input and a constant")
    element_f32(ctx, node, ("SELECT", {"value": 1.0, "otherwise": 0.0}), source)
    ctx.bools.add(name)


def cast_to_bool(ctx, node):
    """Cast to bool of a float32 value or of a bool (the identity)."""
    x = node.input[0]
    if x in ctx.truths or held_bool(ctx, x):
        if x in ctx.truths:
            ctx.truths[node.output[0]] = ctx.truths[x]
        if held_bool(ctx, x):
            ctx.bools.add(node.output[0])
            ctx.values[node.output[0]] = ctx.values[x]
        return
    if not float_value(ctx, x):
        raise Skip(f"a Cast to bool of '{x}', which is not a float32 value computed at run time")
    truth(ctx, node, x, "nonzero")


@onnx_op("IsNaN")
def import_is_nan(ctx, node, attrs):
    if not float_value(ctx, node.input[0]):
        raise Skip(f"IsNaN of '{node.input[0]}', which is not a float32 value computed at run time")
    truth(ctx, node, node.input[0], "nan")


def _scalar(ctx, name):
    """The value of a constant float32 scalar (one element), or None."""
    c = ctx.constants.get(name)
    if c is None or c.dtype != "float32":
        return None
    values = float_values(ctx, name)
    return values[0] if len(values) == 1 else None


@onnx_op("Where")
def import_where(ctx, node, attrs):
    condition, a, b = node.input
    if condition in ctx.truths:
        source, predicate = ctx.truths[condition]
        choices = {("nonzero", 2): "NONZERO_TO", ("nonzero", 1): "ZERO_TO", ("nan", 2): "NAN_TO"}
        for kept, other in ((2, 1), (1, 2)):
            function = choices.get((predicate, kept))
            value = _scalar(ctx, node.input[other])
            if node.input[kept] == source and function and value is not None:
                element_f32(ctx, node, (function, {"value": value}), source)
                return
    if held_bool(ctx, condition):
        value, otherwise = _scalar(ctx, a), _scalar(ctx, b)
        if value is not None and otherwise is not None:
            element_f32(ctx, node, ("SELECT", {"value": value, "otherwise": otherwise}), condition)
            return
    raise Skip("a Where on a run-time condition runs where it chooses between two constant scalars, or between "
               "the tensor its condition is the truth (or IsNaN) of and a constant scalar")


@onnx_op("And", "Or")
def import_logical(ctx, node, attrs):
    """And / Or of a run-time bool and a constant bool that leaves it as it is (And with all true, Or with all
    false), of the bool's shape or broadcast to it (transformers 5's padding mask And its constant causal
    part, which an encoder's is all true)."""
    names = list(node.input[:2])
    runtime = [n for n in names if held_bool(ctx, n)]
    if len(runtime) == 1:
        other = names[1 - names.index(runtime[0])]
        constant = ctx.constants.get(other)
        neutral = node.op_type == "And"   # the constant that leaves the other operand as it is
        index = ctx.values[runtime[0]].index
        shape = list(ctx.tensors[index].shape)
        if constant is not None and constant.dtype == "bool" and all(bool(v) == neutral for v in constant.values()):
            try:
                out_shape = list(broadcast_shape(shape, constant.shape))
            except FoldError:
                raise Skip(f"shapes {shape} and {list(constant.shape)} do not broadcast") from None
            if out_shape == shape:
                ctx.values[node.output[0]] = ctx.values[runtime[0]]
            else:   # the bool broadcast to the constant's shape
                target = int32_constant(ctx, f"{node.output[0]}/shape", out_shape)
                out = float32_result(ctx, node.output[0], out_shape, False)
                ctx.add_op("BROADCAST_TO", [index, target], [out])
            ctx.bools.add(node.output[0])
            return
    raise Skip(f"{node.op_type} runs on a run-time bool and a constant that leaves it as it is (of two run-time "
               "bools it is not supported)")
