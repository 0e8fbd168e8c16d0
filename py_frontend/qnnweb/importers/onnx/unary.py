"""The unary ops (Relu, Sigmoid, HardSwish, HardSigmoid, Tanh, LeakyRelu, Elu, Clip, PRelu and their QLinear
forms) as 256-entry tables, and the float runs onnxruntime's QOperator form leaves between
DequantizeLinear and QuantizeLinear: one table of the composed functions, through the moves between
them (reshapes, transposes, slices ...) and after them (ops/unary.py, ops/prelu.py)."""

from ...errors import Unsupported
from ...numerics.float32 import float32, float32_bytes
from ...numerics.onnxruntime import float_table, onnxruntime_function, prelu_function
from .context import Value
from .element_steps import FLOAT_FUNCTIONS, element_step
from .float32_path import element_f32
from .float_region import float_region
from .layout import nhwc_index, onnx_shape
from .pooling import add_pool
from .quantization import (EXACT_ON_DEQUANTIZED, LAYOUT_OPS, activation_input, float_tail, float_value, params_of,
                           qlinear_input, qparams, quantization_ahead, quantized_output, unary_op)
from .registry import arity_problem, onnx_op
from .skip import Skip
from .tabulated import VALUE_MOVES, replay_moves, tabulated


def float_chain(ctx, name, mark_done=True):
    """(ONNX name of its last output, [(op type, options)], [moving nodes]) of the float unary ops
    that follow the float tensor `name` one after another before it is quantized or used (QOperator
    leaves such runs unquantized), moves between them (VALUE_MOVES) included: the unary ops become one
    table of the composed functions (ops/unary.py), computed before the moves (replay_moves). The nodes
    it takes are marked done (handled here), unless ``mark_done`` is False (a look ahead)."""
    chain, moves, written = [], [], {name}
    while True:
        follower, passed = next_float_op(ctx, name)
        step = element_step(ctx, follower, passed[-1].output[0] if passed else name) if follower else None
        if step is None or any(o in written or o in ctx.values or o in ctx.views for o in follower.output):
            break   # (a follower writing a known value: a malformed graph whose run feeds back into itself)
        written.add(follower.output[0])
        moves += passed
        for node in [*passed, follower] if mark_done else []:
            ctx.mark_done(node)
        chain.append(step)
        name = follower.output[0]
    return name, chain, moves


def starts_float_run(ctx, node):
    """Whether `node` (Add / Sub / Mul / Div) is a constant-scalar step on a dequantized int8 tensor with a
    further float element op after it (Div -> Erf of GELU): the run is then one table (qdq_unary)."""
    source = next((n for n in node.input[:2] if n not in ctx.constants), None)
    if source not in ctx.views or element_step(ctx, node, source) is None:
        return False
    follower, passed = next_float_op(ctx, node.output[0])
    name = passed[-1].output[0] if passed else node.output[0]
    return follower is not None and (follower.op_type == "PRelu" or element_step(ctx, follower, name) is not None)


def next_float_op(ctx, name):
    """(the one node that uses float `name` next, past moves (VALUE_MOVES); the moves) or (None, []). A
    node met twice (a malformed graph with a cycle) or already handled ends the search."""
    passed = []
    while name not in ctx.outputs and len(ctx.consumers[name]) == 1 and quantization_ahead(ctx, name) is None:
        follower = ctx.consumers[name][0]
        if (arity_problem(follower) or follower in passed or ctx.node_index[id(follower)] in ctx.done
                or (follower.input[0] != name and element_step(ctx, follower, name) is None)):
            break
        if follower.op_type not in VALUE_MOVES:
            return follower, passed
        passed.append(follower)
        name = follower.output[0]
    return None, []


def moves_to_output(ctx, name, max_pool_commutes=lambda: False):
    """The nodes from float `name` to a model output when each is the only consumer and only moves
    values (VALUE_MOVES; MaxPool too where `max_pool_commutes()`), and that output's name; else
    ([], None)."""
    moves = []
    while name not in ctx.outputs:
        consumers = ctx.consumers.get(name, [])
        if len(consumers) != 1 or len(moves) > 32 or consumers[0] in moves:
            return [], None
        node = consumers[0]
        movable = node.op_type in VALUE_MOVES or (node.op_type == "MaxPool" and max_pool_commutes())
        if not movable or arity_problem(node) or node.input[0] != name or len(node.output) != 1:
            return [], None
        moves.append(node)
        name = node.output[0]
    return moves, name


def non_decreasing(ctx, x, steps):
    """Whether the float32 function of the unary ops `steps` never decreases over the 256 values of
    int8 `x` dequantized (checked on each, as onnxruntime computes them)."""
    function = onnxruntime_function(steps)
    t = ctx.tensors[ctx.values[x].index]
    if function is None or len(t.scale) != 1:
        return False
    scale, zero_point = float32(t.scale[0]), t.zero_point[0]
    values = [function(float32(scale * (v - zero_point))) for v in range(-128, 128)]
    return all(a <= b for a, b in zip(values, values[1:]))


@onnx_op("Relu", "Sigmoid", "HardSwish", "HardSigmoid", "Tanh", "LeakyRelu", "Elu", "Clip", *FLOAT_FUNCTIONS, "Pow")
def qdq_unary(ctx, node, attrs):
    """A float element-wise op on a dequantized int8 tensor (element_steps.py; Add / Sub / Mul / Div with a
    constant scalar come here from binary.py when a further element op follows) and the run of such ops
    after it: one table. On a float32 value read in float (float32_path.py): the op alone, in float32."""
    source = next((n for n in node.input[:2] if n not in ctx.constants), node.input[0])
    step = element_step(ctx, node, source)
    if step is None:
        raise Skip("Pow with an exponent that is not a constant 1, 2 or 3 (onnxruntime computes the others with "
                   "std::pow, which has no exact model here)")
    x = activation_input(ctx, source, float32=True)
    if float_value(ctx, x):
        element_f32(ctx, node, step, x)
        return
    if source in ctx.views and float_region(ctx, node, source, x):
        return
    op_type, options = step
    name, chain, moves = float_chain(ctx, node.output[0])
    steps = [(op_type, dict(options))] + chain   # the run's functions, in order
    follower, passed = next_float_op(ctx, name)
    if follower is not None and follower.op_type == "PRelu" and not moves and not passed:
        # a PRelu next in the float run: its tables compose these ops before it
        ctx.mark_done(follower)
        prelu(ctx, follower, x, before=steps)
        return
    if chain:
        options["then"] = chain
    tail, output = moves_to_output(ctx, name, lambda: non_decreasing(ctx, x, steps)) if not moves else ([], None)
    if tail and any(m.op_type not in LAYOUT_OPS for m in tail):
        # the float result only moves on to the model's output, through ops that take int8 tensors
        # only (Slice, Gather ..., MaxPool where the function never decreases: max commutes with
        # it): they move the int8 input first, the float32 table comes last
        for m in tail:
            ctx.mark_done(m)
        replay_moves(ctx, x, tail, [f"{output}/int8"])
        value = ctx.values[f"{output}/int8"]
        out = ctx.add_tensor(output, ctx.tensors[value.index].shape, "float32")
        ctx.values[output] = Value(out, value.nhwc)
        ctx.add_op(op_type, [value.index], [out], **options)
        return
    if moves and float_tail(ctx, name) and not reshapes_only(moves):
        # a float32 result: the moves (Slice, Transpose ...) run on the int8 input first, which they
        # commute with, and the table writes the model's float output last
        replay_moves(ctx, x, moves, [f"{name}/int8"])
        x, moves = f"{name}/int8", []
    first_type, first_options = steps[0]
    value = ctx.values[x]

    def branch_table(reader, branch, after):
        tabulated(ctx, reader, branch, [], first_type, [value.index], value.nhwc,
                        **dict(first_options, then=[*steps[1:], *after]))
    if not moves and not (float_branches(ctx, name, branch_table)
                          and float_pools(ctx, name, x, onnxruntime_function(steps))):
        return   # only pools and further float ops read the run: each made its own int8 result
    # a Relu alone (no run, no moves): its result may be read in float too (EXACT_ON_DEQUANTIZED)
    alone = (node.op_type in EXACT_ON_DEQUANTIZED and node.input[0] in ctx.views and name == node.output[0]
             and not moves)
    tabulated(ctx, node, name, moves, op_type, [value.index], value.nhwc,
                    input_params=params_of(ctx, x) if alone else None, source=x, **options)


def float_branches(ctx, name, branch_table):
    """The float unary ops that read float run `name` beside its other readers, a QuantizeLinear among
    them (the QOperator form quantizes a float activation's result and also feeds it to the next float
    op): each such reader, with the float unary ops after it, becomes a table of its own on the run's
    int8 input, quantized as the QuantizeLinear after it says (``branch_table(reader, its run's last
    output, [(op type, options)] of the reader and the ops after it)`` adds it), and leaves the readers
    of `name`. A reader whose run moves on in float (Transpose ...) stays: it reads the run's float32 values
    (float32_path.py). Returns False when such ops were all that read the run."""
    readers = ctx.consumers.get(name, [])
    if name in ctx.outputs or len(readers) < 2:
        return True
    for reader in list(readers):
        step = None if arity_problem(reader) else element_step(ctx, reader, name)
        if step is None:
            continue
        branch_type, branch_options = step
        if float_chain(ctx, reader.output[0], mark_done=False)[2]:
            continue
        branch, chain, _ = float_chain(ctx, reader.output[0])
        branch_table(reader, branch, [(branch_type, branch_options), *chain])
        ctx.mark_done(reader)
        readers = [c for c in readers if c is not reader]
    ctx.consumers[name] = readers
    return bool(readers)


def float_pools(ctx, name, x, function):
    """The GlobalAveragePools that read float run `name` (`function`, the float32 function of int8 `x` as
    onnxruntime computes it, a list of them, one per channel, or None: no pool then) and
    whose results are only quantized: onnxruntime's QOperator form leaves such a pool in float after a
    float op (MobileNetV3's squeeze-excite with HardSwish as one op, opset 14 on). Each becomes the int8
    pool of the run's float32 values, summed, divided and quantized as onnxruntime's float
    GlobalAveragePool and QuantizeLinear do (ops/pooling.py, arithmetic 5), and leaves the readers of
    `name`. Returns False when pools were all that read the run (it needs no table of its own)."""
    readers = ctx.consumers.get(name, [])
    if name in ctx.outputs:
        return True
    pools = [c for c in readers if c.op_type == "GlobalAveragePool" and not arity_problem(c) and c.input[0] == name
             and c.output[0] not in ctx.outputs]
    t = ctx.tensors[ctx.values[x].index]
    if not pools or function is None or len(t.scale) != 1:
        return True
    functions = function if isinstance(function, list) else [function]
    shape = onnx_shape(ctx, x)
    if len(shape) != 4 or len(functions) not in (1, shape[1]):
        return True   # not a feature map, or slopes along another axis: refused as before
    table = b"".join(float_table("int8", t.scale[0], t.zero_point[0], f) for f in functions)
    for pool in pools:
        try:
            out_names, params, activation = quantized_output(ctx, pool)
        except Skip:
            continue   # its float result is used in float too: the run stays refused
        add_pool(ctx, "AVERAGE_POOL_2D", pool, {}, x, out_names, params, activation, global_pool=True,
                   float_table=table)
        ctx.mark_done(pool)
        readers = [c for c in readers if c is not pool]
    ctx.consumers[name] = readers
    return bool(readers)   # (pools were made: when none is left, nothing else reads the run)


def reshapes_only(moves):
    """Whether the moves only reshape (they then run on float32 tensors as well)."""
    return all(m.op_type in ("Reshape", "Flatten", "Squeeze", "Unsqueeze") for m in moves)


@onnx_op("PRelu")
def import_prelu(ctx, node, attrs):
    prelu(ctx, node, activation_input(ctx, node.input[0]))


def prelu_slopes(ctx, node, x_shape):
    """A PRelu's float32 slopes and how they lie on its input of ONNX shape `x_shape`: "one" (for
    all), "feature-map" (one per channel of an NCHW feature map) or "last-axis"."""
    slope = node.input[1]
    if slope in ctx.quantized_constants:   # DequantizeLinear of an int8 constant: its float32 values
        q = ctx.quantized_constants[slope]
        slopes, shape = q.dequantized(), q.constant.shape
        if slopes is None:
            raise Skip("a slope quantized per axis is not supported")
    elif slope in ctx.constants and ctx.constants[slope].dtype == "float32":
        slopes, shape = ctx.constants[slope].values(), ctx.constants[slope].shape
    else:
        raise Skip("the slope must be a float32 constant or a dequantized int8 constant")
    if len(slopes) == 1:
        return slopes, "one"
    if len(x_shape) == 4 and list(shape) in ([x_shape[1], 1, 1], [1, x_shape[1], 1, 1]):
        return slopes, "feature-map"
    if len(x_shape) >= 1 and [d for d in shape if d != 1] == [x_shape[-1]]:
        return slopes, "last-axis"
    raise Skip(f"slope of shape {list(shape)} for an input of shape {list(x_shape)}: only one slope, or "
               "one per channel")


def prelu(ctx, node, x, before=()):
    """PRelu between DequantizeLinear and QuantizeLinear (onnxruntime's quantizer leaves it in float):
    IR PRELU with the float32 slopes, one per channel of a feature map or one for all, which the
    lowering tabulates as onnxruntime's float op computes them (ops/prelu.py), composed with the
    float unary ops `before` it (on int8 `x`) and after it, further PRelus among them."""
    x_shape = onnx_shape(ctx, x)
    slopes, layout = prelu_slopes(ctx, node, x_shape)
    name, chain, moves = float_chain(ctx, node.output[0])   # float unary ops after it: composed into its tables
    while not moves:
        follower, passed = next_float_op(ctx, name)
        if follower is None or follower.op_type != "PRelu" or passed:
            break
        # another PRelu in the run: its slopes (per channel too) go into the same tables
        more, more_layout = prelu_slopes(ctx, follower, x_shape)
        if "one" not in (layout, more_layout) and layout != more_layout:
            raise Skip("PRelus in a row with slopes along different axes are not supported")
        layout = layout if more_layout == "one" else more_layout
        ctx.mark_done(follower)
        name, after, moves = float_chain(ctx, follower.output[0])
        chain = chain + [("PRELU", {"slopes": more})] + after
    if moves and float_tail(ctx, name) and not reshapes_only(moves):
        raise Skip("a PRelu's float result moved (Transpose, Slice ...) on its way to the model's output is not "
                   "supported")
    if layout == "last-axis" and ctx.values[x].nhwc:
        raise Skip(f"slopes along the last axis of an input of shape {list(x_shape)} held as NHWC are not supported")
    made = []   # (the input as the tables read it, the slopes, whether NHWC): made once, when a table reads them

    def inputs():
        if not made:
            index = nhwc_index(ctx, x) if layout == "feature-map" else ctx.values[x].index
            alpha = ctx.add_tensor(f"{node.output[0]}/slope", [len(slopes)], "float32", data=float32_bytes(slopes))
            made.append((index, alpha, index != ctx.values[x].index or ctx.values[x].nhwc))
        return made[0]

    def branch_table(reader, branch, after):
        index, alpha, nhwc = inputs()
        tabulated(ctx, reader, branch, [], "PRELU", [index, alpha], nhwc, before=list(before), then=chain + after)
    if not moves and layout in ("one", "feature-map") and \
            not (float_branches(ctx, name, branch_table)
                 and float_pools(ctx, name, x, slope_functions(slopes, before, chain))):
        return   # only pools and further float ops read the run: each made its own int8 result
    index, alpha, nhwc = inputs()
    tabulated(ctx, node, name, moves, "PRELU", [index, alpha], nhwc, before=list(before), then=chain)


def slope_functions(slopes, before, chain):
    """The float32 function of a PRelu run (the ops `before` it, the PRelu, the ops and PRelus `chain` after
    it) as onnxruntime computes it: one where every PRelu has one slope, else a list, one per channel; None
    where an op has no exact model here."""
    further = [o["slopes"] for t, o in chain if t == "PRELU"]
    try:
        function = prelu_function(list(before), chain)
    except Unsupported:
        return None
    count = max([len(slopes)] + [len(f) for f in further])
    if any(len(v) not in (1, count) for v in [slopes] + further):
        return None

    def of_channel(c):
        constants = [v[c if len(v) > 1 else 0] for v in [slopes] + further]
        return lambda v: function(v, constants)
    return of_channel(0) if count == 1 else [of_channel(c) for c in range(count)]


@onnx_op("QLinearSigmoid")
def import_qlinear_sigmoid(ctx, node, attrs):
    x = qlinear_input(ctx, node.input[0], node.input[1], node.input[2])
    params = qparams(ctx, node.input[3], node.input[4] if len(node.input) > 4 else "", "QLinearSigmoid output")
    unary_op(ctx, "LOGISTIC", x, [node.output[0]], params)


@onnx_op("QLinearLeakyRelu")
def import_qlinear_leaky_relu(ctx, node, attrs):
    x = qlinear_input(ctx, node.input[0], node.input[1], node.input[2])
    params = qparams(ctx, node.input[3], node.input[4] if len(node.input) > 4 else "", "QLinearLeakyRelu output")
    unary_op(ctx, "LEAKY_RELU", x, [node.output[0]], params, alpha=attrs.get("alpha", 0.01))
