"""The one IR op whose 256-entry tables compute a float run of one int8 tensor (unary.py's runs of element
ops, float_region.py's regions, batch_norm.py), and the moves the run passed replayed after it."""

from .context import Value
from .quantization import float_tail, new_output, quantized_output
from .registry import handle_node


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


def tabulated(ctx, node, name, moves, op_type, inputs, nhwc, input_params=None, **options):
    """The one op whose tables compute float run `name` (started by `node`): float32 where the
    QOperator form leaves the model's last activation in float, else quantized as the
    QuantizeLinear after the run says, a Relu / Clip after it (two activations in a row) clamping
    in the same table. The moves the run passed (`moves`) follow the table's output."""
    composed = f"{node.output[0]}/composed"
    shape = ctx.tensors[inputs[0]].shape
    if float_tail(ctx, name):
        table_name = composed if moves else name
        out = ctx.add_tensor(table_name, shape, "float32")
        ctx.values[table_name] = Value(out, nhwc)
        ctx.add_op(op_type, inputs, [out], **options)
        if moves:
            replay_moves(ctx, composed, moves, [name])
        return
    out_names, params, activation = quantized_output(ctx, node, name, input_params)
    out = new_output(ctx, [composed] if moves else out_names, shape, params, nhwc)
    ctx.add_op(op_type, inputs, [out], activation=activation, **options)
    if moves:
        replay_moves(ctx, composed, moves, out_names)
