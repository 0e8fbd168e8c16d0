"""The one IR op whose 256-entry tables compute a float run of one int8 tensor (unary.py's runs of element
ops, float_region.py's regions, batch_norm.py), and the moves the run passed replayed after it. Where the
run's float result only moves on to a LayerNormalization (onnxruntime's QOperator form leaves it all in
float: BatchNormalization -> Reshape -> Transpose -> LayerNormalization), the tables become that
normalization's input values instead (norm.py): the moves run on the int8 input. Where it is read in float
otherwise, the tables write float32 values (float32_path.py)."""

from ...numerics.onnxruntime import batch_norm_function, element_function, float_table, onnxruntime_function
from ..shape_folding import Folded, product, transpose
from .attributes import attributes
from .float32_path import float32_result
from .layout import onnx_shape
from .quantization import float_tail, new_output, quantized_output, read_in_float
from .registry import arity_problem, handle_node
from .skip import Skip

# ops that only move or select values (one input tensor, one output): they commute with
# element-wise functions, and run on int8 tensors
VALUE_MOVES = ("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "Slice", "Gather", "DepthToSpace",
               "SpaceToDepth")
# the moves whose element order numpy follows from their output's shape alone (a Transpose: its perm)
ORDER_KEEPING = ("Reshape", "Flatten", "Squeeze", "Unsqueeze")


def replay_moves(ctx, first, moves, out_names):
    """Copies of the nodes `moves` (the moves a float run passed, or the moves after it to the model's
    output) applied in order to tensor `first` (the run's table output, or its int8 input), the last
    one writing `out_names`."""
    name = first
    for i, move in enumerate(moves):
        node = type(move)()
        node.CopyFrom(move)
        node.input[0] = name
        node.output[0] = out_names[0] if i == len(moves) - 1 else f"{move.output[0]}/composed"
        handle_node(ctx, node)
        name = node.output[0]
    for alias in out_names[1:]:
        ctx.values[alias] = ctx.values[out_names[0]]


def table_functions(op_type, options):
    """The float32 functions (one, or one per channel: BATCH_NORM) of a tabulated op as onnxruntime
    computes them, or None where this has no exact model (PRELU: its own lowering)."""
    after = onnxruntime_function(list(options.get("then", ())))
    if after is None:
        return None
    if op_type == "BATCH_NORM":
        return [(lambda f: lambda v: after(f(v)))(batch_norm_function(*c)) for c in options["coefficients"]]
    function = element_function(op_type, options)
    return None if function is None else [lambda v: after(function(v))]


def moves_to_normalization(ctx, name):
    """(the moves, the LayerNormalization) when float `name` goes through moves (VALUE_MOVES, each the
    only reader of its input) to a LayerNormalization's input and nowhere else; else None."""
    moves = []
    while name not in ctx.outputs and len(ctx.consumers.get(name, [])) == 1 and len(moves) <= 32:
        reader = ctx.consumers[name][0]
        if arity_problem(reader) or reader.input[0] != name or ctx.node_index[id(reader)] in ctx.done:
            return None
        if reader.op_type == "LayerNormalization":
            return moves, reader
        if reader.op_type not in VALUE_MOVES or len(reader.output) != 1:
            return None
        moves.append(reader)
        name = reader.output[0]
    return None


def moved_channels(ctx, source, moves):
    """Where the channels (ONNX dimension 1) of int8 `source` are after the replayed `moves`: a Folded of
    the moved tensor's shape holding each element's channel, or None when a move selects values (pure
    Python: the importer runs in Pyodide without numpy)."""
    shape = onnx_shape(ctx, source)
    inner = product(shape[2:])
    channels = Folded(shape, [(i // inner) % shape[1] for i in range(product(shape))])
    for i, move in enumerate(moves):
        if move.op_type == "Transpose":
            perm = attributes(move).get("perm") or list(reversed(range(len(channels.shape))))
            channels = transpose(channels, perm)
        elif move.op_type in ORDER_KEEPING:
            moved = move.output[0] if i == len(moves) - 1 else f"{move.output[0]}/composed"
            channels = Folded(onnx_shape(ctx, moved), channels.values)
        else:
            return None
    return channels


def normalization_input(ctx, name, moves, source, op_type, options):
    """Whether float run `name` (tables `op_type` / `options` of int8 `source`, the moves it passed
    `moves`) only moves on to a LayerNormalization: then the moves run on `source` and the tables become
    the normalization's input values, one table, or one per column of its rows where each column holds
    one channel (ctx.tabulated_inputs, norm.py); where a column holds several, it raises Skip."""
    found = moves_to_normalization(ctx, name)
    functions = table_functions(op_type, options) if source is not None else None
    if found is None or functions is None:
        return False
    after, normalization = found
    moved = f"{normalization.input[0]}/int8" if moves or after else source
    replay_moves(ctx, source, [*moves, *after], [moved])
    t = ctx.tensors[ctx.values[source].index]
    tables = [float_table("int8", t.scale[0], t.zero_point[0], f) for f in functions]
    if len(tables) > 1:
        channels = moved_channels(ctx, source, [*moves, *after])
        rank = len(onnx_shape(ctx, moved))
        axis = attributes(normalization).get("axis", -1) % rank
        row = None if channels is None else product(channels.shape[axis:])
        values = None if channels is None else channels.values
        if row is None or any(values[k:k + row] != values[:row] for k in range(row, len(values), row)):
            raise Skip(f"its float output '{name}' is used in float by LayerNormalization '{normalization.name}', "
                       "whose rows hold its channels otherwise than one per column (a float32 table per column "
                       "computes only that)")
        tables = [tables[c] for c in values[:row]]
    for m in after:
        ctx.mark_done(m)
    ctx.tabulated_inputs[normalization.input[0]] = (moved, b"".join(tables))
    return True


def tabulated(ctx, node, name, moves, op_type, inputs, nhwc, input_params=None, source=None, **options):
    """The one op whose tables compute float run `name` (started by `node`): float32 where the
    QOperator form leaves the model's last activation in float, or where another float op reads the
    result in float (read_in_float; not an int8 view, `input_params`: quantization.dequantized_view),
    else quantized as the QuantizeLinear after the run says, a Relu / Clip after it (two activations in
    a row) clamping in the same table. The moves the run passed (`moves`) follow the table's output.
    Where the run only moves on to a LayerNormalization, the tables are its input values (`source`: the
    ONNX name of the int8 tensor the tables read, in ONNX's layout; normalization_input)."""
    if normalization_input(ctx, name, moves, source, op_type, options):
        return
    composed = f"{node.output[0]}/composed"
    shape = ctx.tensors[inputs[0]].shape
    if float_tail(ctx, name) or (input_params is None and read_in_float(ctx, name)):
        out = float32_result(ctx, composed if moves else name, shape, nhwc)
        ctx.add_op(op_type, inputs, [out], **options)
        if moves:
            replay_moves(ctx, composed, moves, [name])
        return
    out_names, params, activation = quantized_output(ctx, node, name, input_params)
    out = new_output(ctx, [composed] if moves else out_names, shape, params, nhwc)
    ctx.add_op(op_type, inputs, [out], activation=activation, **options)
    if moves:
        replay_moves(ctx, composed, moves, out_names)
