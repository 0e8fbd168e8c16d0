"""Quantization parameters, quantized constants (weights, bias) and the QDQ fusion of a float op's output."""

import math

from ...numerics.float32 import float32, float32_bytes
from ...records import FLOAT32_MAX
from .attributes import attributes
from .constants import required_constant
from .context import Value
from .float32_path import float32_result
from .proto import DATA_TYPES
from .registry import arity_problem
from .skip import Skip

# ops that move values without changing them, through which a float result may reach a model output
LAYOUT_OPS = ("Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")

# ONNX ops that commute with quantization (they move or select values, or clamp them, and quantization
# is monotonic): quantizing before them or after them gives the same bytes (a constant Pad where its
# value is exactly representable: the Pad handler refuses the others)
VALUE_PRESERVING = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "MaxPool", "Relu", "Clip", "Slice",
                    "Gather", "Pad", "Expand"}

# ops whose float result, on a dequantized int8 tensor, is itself exactly a dequantized int8 tensor of the
# same quantization (they move or select values, or take max(x, 0) with 0 on the grid): where such a result
# is also read in float, the op runs in int8 and its float readers see the result dequantized
EXACT_ON_DEQUANTIZED = {"Reshape", "Flatten", "Squeeze", "Unsqueeze", "Transpose", "MaxPool", "Relu", "Slice",
                        "Gather", "Expand"}


def float_cast(node):
    """A Cast to float32 (``x.float()`` in torch, EfficientViT's attention): on a float32 tensor, the
    identity."""
    return node.op_type == "Cast" and DATA_TYPES.get(attributes(node).get("to"), (None,))[0] == "float32"


def bool_cast(node):
    """A Cast to bool (an attention mask's truth: booleans.py)."""
    return node.op_type == "Cast" and DATA_TYPES.get(attributes(node).get("to"), (None,))[0] == "bool"


def _nearest_resize(node):
    """A nearest Resize only moves values (it picks input pixels), as VALUE_PRESERVING ops do."""
    if node.op_type != "Resize":
        return False
    try:
        return attributes(node).get("mode", "nearest") == "nearest"
    except Skip:   # malformed: its own handler reports it
        return False


def quantize_like_onnxruntime(values, scales, zero_points, dtype, channel_of=None):
    """Float32 values quantized as onnxruntime's QuantizeLinear does (MLAS: float32 division by the scale,
    rounding half to even, saturated to ``dtype``; the zero point added after rounding): a list of ints in
    ``dtype``'s own range. ``zero_points`` are the model's (uint8 ones not moved); per axis,
    ``channel_of(i)`` is element i's channel."""
    low, high = (0, 255) if dtype == "uint8" else (-128, 127)
    if channel_of is None:
        scale, zero_point = float32(scales[0]), zero_points[0]
        return [min(max(round(float32(v / scale)) + zero_point, low), high) for v in values]
    per_channel = [(float32(s), z) for s, z in zip(scales, zero_points)]
    return [min(max(round(float32(v / scale)) + zero_point, low), high)
            for i, v in enumerate(values) for scale, zero_point in (per_channel[channel_of(i)],)]


def float_tail(ctx, name, depth=0):
    """Whether float `name` is a model output, or reaches model outputs only through ops that move
    values (Transpose, Reshape ...), none quantizing it again: then it is computed in float32."""
    consumers = ctx.consumers.get(name, [])
    if depth > 32 or (name not in ctx.outputs and not consumers):
        return False
    return all(c.op_type in LAYOUT_OPS and c.input and c.input[0] == name and len(c.output) == 1
               and float_tail(ctx, c.output[0], depth + 1) for c in consumers)


def qparams(ctx, scale_name, zero_point_name, what, allow_vector=False):
    """(scales, zero points as int8, source dtype) from constant scale / zero point inputs."""
    scale = required_constant(ctx, scale_name, f"{what} scale")
    if scale.dtype not in ("float32", "float16"):
        raise Skip(f"{what} scale is {scale.dtype}; only float32 and float16 scales are supported")
    scales = scale.values()
    dtype = "uint8"
    if zero_point_name:
        zp = required_constant(ctx, zero_point_name, f"{what} zero point")
        dtype = zp.dtype
        if dtype not in ("int8", "uint8"):
            raise Skip(f"{what} is {dtype}; only int8 and uint8 are supported")
        zero_points = zp.values()
    else:
        zero_points = [0] * len(scales)
    if len(scales) != 1 and not allow_vector:
        raise Skip(f"{what} is quantized per axis; activations must be quantized per tensor")
    if len(zero_points) == 1 and len(scales) > 1:
        zero_points = zero_points * len(scales)
    if not scales or len(zero_points) != len(scales):
        raise Skip(f"{what} has {len(scales)} scale(s) and {len(zero_points)} zero point(s)")
    if any(not (s > 0 and math.isfinite(s)) for s in scales):
        raise Skip(f"{what} has a scale that is not positive and finite")
    shift = 128 if dtype == "uint8" else 0
    return tuple(scales), tuple(z - shift for z in zero_points), dtype


# the ops that run on float32 values (float32_path.py), as a refusal names them
FLOAT32_OPS = ("element-wise ops, LayerNormalization, InstanceNormalization, Add / Sub / Mul / Div, the moves "
               "(Reshape, Transpose, Slice, Split, Gather, DepthToSpace) and QuantizeLinear")


def float_value(ctx, name):
    """Whether `name` is a float32 activation (the model's float input, or a float op's float32 result: the
    float32 data path), not a dequantized int8 one."""
    return name in ctx.values and name not in ctx.views and ctx.tensors[ctx.values[name].index].dtype == "float32"


def float32_operand(ctx, n):
    """ONNX name of operand `n` as the float32 values onnxruntime's float op reads: a float activation
    itself; a float32 constant; a dequantized int8 constant or activation, as DequantizeLinear gives it
    ((q - zero point) * scale in float32; the activation through a DEQUANTIZE op)."""
    if float_value(ctx, n):
        return n
    name = n + "/float32"
    if name in ctx.values:
        return name
    if n in ctx.constants and ctx.constants[n].dtype == "float32":
        c = ctx.constants[n]
        ctx.values[name] = Value(ctx.add_tensor(name, c.shape, "float32", data=c.data))
    elif n in ctx.quantized_constants:
        q = ctx.quantized_constants[n]
        values = q.dequantized() if q.constant.dtype in ("int8", "uint8") else None
        if values is None:
            raise Skip(f"constant '{n}' is quantized per axis or is {q.constant.dtype}")
        ctx.values[name] = Value(ctx.add_tensor(name, q.constant.shape, "float32", data=float32_bytes(values)))
    else:
        x = activation_input(ctx, n)
        value = ctx.values[x]
        index = ctx.add_tensor(name, ctx.tensors[value.index].shape, "float32")
        ctx.add_op("DEQUANTIZE", [value.index], [index])
        ctx.values[name] = Value(index, value.nhwc)
    return name


def activation_input(ctx, name, float32=False):
    """The int8 ONNX tensor a float input dequantizes (QDQ), or the int8 tensor itself. ``float32``: the
    reading op also runs on float32 values (the float32 data path, float32_path.py): a float value that no
    quantized copy serves (it is read in float, onnxruntime's op computes on its float values) is
    returned itself."""
    if name in ctx.views:
        return ctx.views[name]
    if name in ctx.values and ctx.tensors[ctx.values[name].index].dtype == "int8":
        return name
    if name in ctx.values and ctx.tensors[ctx.values[name].index].dtype == "float32":
        # a float model input that reaches QuantizeLinear only through ops that commute with it
        # (onnxruntime runs them in float first): quantize it first
        params = quantization_ahead(ctx, name)
        if params is not None:
            ctx.views[name] = quantized_copy(ctx, name, params, name + "/quantized")
            return ctx.views[name]
        # its paths quantize it differently (a Relu's result with its own parameters beside the input's
        # own QuantizeLinear): this node's path alone, when the node commutes with quantization
        node = ctx.node
        preserving = node is not None and (node.op_type in VALUE_PRESERVING or float_cast(node))
        if preserving and list(node.input[:1]) == [name] and len(node.output) == 1:
            params = quantization_ahead(ctx, node.output[0])
            if params is not None:
                return quantized_copy(ctx, name, params, f"{name}/quantized/{params[0][0]:g}/{params[1][0]}")
        if float32:
            return name
        if ctx.values[name].index in ctx.graph_input_indices:
            raise Skip(f"it computes in float on the model's float input '{name}' before it is quantized "
                       "(only int8 ops run: quantize the model with this op included)")
        raise Skip(f"input '{name}' is a float32 result read in float: onnxruntime runs this op on float values, "
                   f"which qnnweb does for {FLOAT32_OPS} only")
    raise Skip(f"input '{name}' is a float tensor that is not a dequantized int8 tensor")


def quantized_output(ctx, node, output_name=None, input_params=None):
    """For a float op in QDQ form: (ONNX name of the int8 output, fused activation) after following
    the float output through an optional Relu/Clip to the QuantizeLinear nodes that consume it.
    ``input_params``: the quantization of the op's int8 input, for an EXACT_ON_DEQUANTIZED op; where
    its float output is also read in float, or quantized with several parameters (the quantizer's
    QOperator form and DedicatedQDQPair write both), the output keeps them and is a dequantized view."""
    name = output_name or node.output[0]
    activation = "NONE"
    consumers = ctx.consumers[name]
    for consumer in consumers:  # fused here, before the node loop reaches (and checks) them
        problem = arity_problem(consumer) if consumer.op_type in ("Relu", "Clip", "QuantizeLinear") else None
        if problem:
            raise Skip(f"its consumer {consumer.op_type}: {problem}")
    if len(consumers) == 1 and consumers[0].op_type in ("Relu", "Clip") and name not in ctx.outputs:
        fused = fusable_activation(ctx, consumers[0])
        if fused is not None:
            activation = fused
            ctx.mark_done(consumers[0])
            name = consumers[0].output[0]
            consumers = ctx.consumers[name]
            for consumer in consumers:
                problem = arity_problem(consumer) if consumer.op_type == "QuantizeLinear" else None
                if problem:
                    raise Skip(f"its consumer {consumer.op_type}: {problem}")
    # a Shape reads only the static shape (folded at import): what else reads the float output decides
    shape_only = any(c.op_type == "Shape" for c in consumers)
    consumers = [c for c in consumers if c.op_type != "Shape"]
    quantizers = [c for c in consumers if c.op_type == "QuantizeLinear"]
    if not only_quantized(ctx, name):
        params = quantization_ahead(ctx, name)
        if params is None and input_params is not None:
            return dequantized_view(ctx, name, input_params, activation)
        if params is None:
            raise Skip(f"its float output '{name}' is used in float (not only by QuantizeLinear)")
        # it reaches QuantizeLinear only through ops that move or select values (onnxruntime's
        # QOperator form leaves them in float): quantizing first gives the same bytes, so the result
        # is int8 here and those ops read it through a view
        ctx.views[name] = name + "/int8"
        return [name + "/int8"], params, activation
    each = [qparams(ctx, q.input[1], q.input[2] if len(q.input) > 2 else "", "output") for q in quantizers]
    params = each[0]
    if any(p[:2] != params[:2] for p in each):
        if input_params is not None:
            return dequantized_view(ctx, name, input_params, activation)
        raise Skip("its output is quantized twice with different parameters")
    for q in quantizers:
        ctx.mark_done(q)
    if shape_only:   # the Shape's folding reads the shape of the int8 result
        ctx.views[name] = quantizers[0].output[0]
    return [q.output[0] for q in quantizers], params, activation


def only_quantized(ctx, name):
    """Whether float `name` is no model output and only QuantizeLinear nodes read it (a Shape aside)."""
    readers = [c for c in ctx.consumers.get(name, []) if c.op_type != "Shape"]
    return name not in ctx.outputs and bool(readers) and all(c.op_type == "QuantizeLinear" for c in readers)


def read_in_float(ctx, name):
    """Whether float result `name` is read in float: a model output, or read by an op other than QuantizeLinear
    (past the one Relu / Clip quantized_output fuses), with no QuantizeLinear ahead through ops that commute
    with quantization (quantization_ahead) saying how to quantize it first. quantized_output refuses such a
    result; an op that can write float32 keeps it as a float32 tensor instead (float32_path.py)."""
    fused = fused_reader(ctx, name)
    name = fused.output[0] if fused is not None else name
    return not only_quantized(ctx, name) and quantization_ahead(ctx, name) is None


def fused_reader(ctx, name):
    """The Relu / Clip quantized_output fuses into the op writing float `name` (its one reader), or None."""
    consumers = ctx.consumers.get(name, [])
    if len(consumers) == 1 and consumers[0].op_type in ("Relu", "Clip") and name not in ctx.outputs \
            and not arity_problem(consumers[0]) and fusable_activation(ctx, consumers[0]) is not None:
        return consumers[0]
    return None


def dequantized_view(ctx, name, params, activation):
    """The float output `name` as a view of an int8 tensor with ``params`` (the op's input's): its
    QuantizeLinear consumers requantize that, its float readers read it dequantized, both exactly (a
    model output: dequantized at the end, importer.import_graph). Not after a fused Clip to 6 or to [-1, 1]:
    its bounds need not be on the grid, so the int8 clamp is not the float one."""
    if activation not in ("NONE", "RELU"):
        raise Skip(f"its float output '{name}' is used in float (not only by QuantizeLinear) after a {activation}")
    ctx.views[name] = name + "/int8"
    return [name + "/int8"], params, activation


def quantized_copy(ctx, name, params, copy):
    """The float value `name` quantized with `params` into the int8 value `copy` (made once)."""
    if copy not in ctx.values:
        value = ctx.values[name]
        scales, zero_points, dtype = params
        index = ctx.add_tensor(copy, ctx.tensors[value.index].shape, "int8", scales, zero_points)
        ctx.add_op("QUANTIZE", [value.index], [index])
        ctx.values[copy] = Value(index, value.nhwc)
        ctx.quantization[copy] = (scales[0], zero_points[0], dtype)
    return copy


def quantization_ahead(ctx, name, depth=0):
    """The parameters float `name` is quantized with, when every path from it reaches QuantizeLinear
    (all with the same parameters) through VALUE_PRESERVING ops only; else None."""
    consumers = ctx.consumers.get(name, [])
    if name in ctx.outputs or not consumers or depth > 32:
        return None
    found = None
    for c in consumers:
        if c.op_type == "QuantizeLinear" and not arity_problem(c) and c.input[0] == name:
            params = qparams(ctx, c.input[1], c.input[2] if len(c.input) > 2 else "", "output")
        elif (c.op_type in VALUE_PRESERVING or _nearest_resize(c) or float_cast(c)) and c.input \
                and c.input[0] == name and len(c.output) == 1:
            params = quantization_ahead(ctx, c.output[0], depth + 1)
        elif c.op_type == "Shape":   # reads only the static shape
            continue
        else:
            return None
        if params is None or (found is not None and found[:2] != params[:2]):
            return None
        found = params
    return found


def fusable_activation(ctx, node):
    if node.op_type == "Relu":
        return "RELU"
    low, high = clip_bounds(ctx, node)
    if low == 0.0 and high == 6.0:
        return "RELU6"
    if low == 0.0 and high == FLOAT32_MAX:
        return "RELU"
    if low == -1.0 and high == 1.0:
        return "RELU_N1_TO_1"
    return None


def clip_bounds(ctx, node):
    """Clip's (min, max): a bound it does not give is float32's lowest / largest value, as onnxruntime's Clip
    takes it (an infinite input comes out finite)."""
    attrs = attributes(node)
    low, high = attrs.get("min", -FLOAT32_MAX), attrs.get("max", FLOAT32_MAX)
    for position, default in ((1, low), (2, high)):
        if len(node.input) > position and node.input[position]:
            constant = required_constant(ctx, node.input[position], "Clip bound")
            value = constant.values()[0]
            low, high = (value, high) if position == 1 else (low, value)
    return low, high


def new_output(ctx, names, shape, params, nhwc):
    """Create the IR int8 tensor for ONNX outputs `names` (all aliases of one tensor)."""
    scales, zero_points, _ = params
    index = ctx.add_tensor(names[0], shape, "int8", scales, zero_points)
    for name in names:
        ctx.values[name] = Value(index, nhwc)
        ctx.quantization[name] = (scales[0], zero_points[0], params[2])
    return index


def outputs_like_input(ctx, node, x, output_name=None):
    """(output names, params, activation) for an op that only moves or selects values (MaxPool,
    Transpose): in QDQ form its output is quantized again; in QOperator form onnxruntime runs it on
    the int8/uint8 tensor itself, so the output keeps the input's quantization. On a float value (which
    activation_input quantized for this op) the op runs in float too: its output is quantized again."""
    source = node.input[0]
    float_source = source in ctx.values and ctx.tensors[ctx.values[source].index].dtype == "float32"
    if source in ctx.views:
        exact = node.op_type in EXACT_ON_DEQUANTIZED
        return quantized_output(ctx, node, output_name, params_of(ctx, x) if exact else None)
    if float_source:
        return quantized_output(ctx, node, output_name)
    return [output_name or node.output[0]], params_of(ctx, x), "NONE"


def params_of(ctx, x):
    """(scale, zero point, dtype) of int8 activation `x`, the dtype the model's own (uint8 or int8)."""
    t = ctx.tensors[ctx.values[x].index]
    return t.scale, t.zero_point, ctx.quantization.get(x, (None, None, "int8"))[2]


def moved_output(ctx, node, out, x, shape, nhwc, emit, requantizes=False):
    """Output ``out`` of a node that only moves or selects the values of int8 ``x`` (DepthToSpace,
    Slice, Split, Gather): ``emit(index)`` adds the IR op writing the moved values to the IR tensor
    ``index`` (``shape``, in NHWC if ``nhwc``, x's quantization). Then, as onnxruntime computes it:
    quantized again where the quantizer gave the output other parameters (it moves values in float),
    and dequantized where the float result is a model output or feeds float ops. ``requantizes``: the
    op computes in float and quantizes with the output's parameters itself (a bilinear Resize). On a
    float32 value (float32_path.py) the float32 values move."""
    if float_value(ctx, x):
        emit(float32_result(ctx, out, shape, nhwc))
        return
    t = ctx.tensors[ctx.values[x].index]
    consumers = ctx.consumers[out]
    quantized_after = out not in ctx.outputs and consumers and all(c.op_type == "QuantizeLinear"
                                                                    for c in consumers)
    if node.input[0] in ctx.views and not quantized_after and quantization_ahead(ctx, out) is None:
        if requantizes:   # its float result (a bilinear Resize's) is no dequantized int8 tensor
            raise Skip(f"its float output '{out}' is used in float (not only by QuantizeLinear)")
        # the float result is a model output or feeds float ops: the int8 values move, and are read
        # dequantized (what onnxruntime's float op computes: it only moves values)
        out_names, params, activation = [out + "/int8"], (t.scale, t.zero_point, "int8"), "NONE"
        ctx.views[out] = out + "/int8"
    else:
        out_names, params, activation = outputs_like_input(ctx, node, x, out)
    if activation != "NONE" and requantizes:
        raise Skip(f"a {activation} after {node.op_type} is not supported")
    # a Relu / Clip after the move runs in float: in the requantizing table
    same = (params[:2] == (t.scale, t.zero_point) or requantizes) and activation == "NONE"
    moved = out_names if same else [out + "/moved"]
    emit(new_output(ctx, moved, shape, params if same else (t.scale, t.zero_point, "int8"), nhwc))
    if not same:
        requantize_to(ctx, moved[0], out_names, params, activation)


def adopt_quantization(ctx, name, params):
    """A model's own int8/uint8 input learns its quantization from its first consumer; a uint8 one is
    converted to int8 there (XOR 0x80, exact)."""
    if name not in ctx.values:
        raise Skip(f"input '{name}' is not available")
    value = ctx.values[name]
    t = ctx.tensors[value.index]
    if t.scale:
        return
    if t.dtype == "int8":
        t.scale, t.zero_point = params[0], params[1]
    elif t.dtype == "uint8":
        t.scale, t.zero_point = params[0], tuple(z + 128 for z in params[1])
        index = ctx.add_tensor(name + "/int8", t.shape, "int8", params[0], params[1])
        ctx.add_op("QUANTIZE", [value.index], [index])
        ctx.values[name] = Value(index, value.nhwc)
    else:
        raise Skip(f"input '{name}' is {t.dtype}; expected int8 or uint8")


def qlinear_input(ctx, name, scale_name, zero_point_name):
    """A QOperator int8/uint8 input, requantized if it was quantized otherwise than this op says."""
    params = qparams(ctx, scale_name, zero_point_name, f"input '{name}'")
    adopt_quantization(ctx, name, params)
    value = ctx.values[name]
    t = ctx.tensors[value.index]
    if t.dtype != "int8":
        raise Skip(f"input '{name}' is {t.dtype}; expected int8 or uint8")
    if (t.scale[0], t.zero_point[0]) != (params[0][0], params[1][0]):
        index = ctx.add_tensor(name + "/requantized", t.shape, "int8", params[0], params[1])
        ctx.add_op("QUANTIZE", [value.index], [index])
        ctx.values[name + "/requantized"] = Value(index, value.nhwc)
        return name + "/requantized"
    return name


def requantize_to(ctx, x_name, out_names, params, activation="NONE"):
    """int8 `x_name` quantized again with `params`: onnxruntime's DequantizeLinear -> QuantizeLinear
    in float32 (a table, ops/unary.py), as where a value-preserving op runs in float between them,
    with the float Relu / Clip after it (`activation`) in the same table."""
    value = ctx.values[x_name]
    t = ctx.tensors[value.index]
    out = new_output(ctx, out_names, t.shape, params, value.nhwc)
    ctx.add_op("QUANTIZE", [value.index], [out], dequantize_quantize=True, activation=activation)


def unary_op(ctx, op_type, x_name, out_names, params, **options):
    value = ctx.values[x_name]
    shape = ctx.tensors[value.index].shape
    out = new_output(ctx, out_names, shape, params, value.nhwc)
    ctx.add_op(op_type, [value.index], [out], **options)
