"""Reshape / Flatten / Squeeze / Unsqueeze, Identity, Constant, Concat, Softmax, Transpose, DepthToSpace and
SpaceToDepth. A Reshape or Transpose that moves a feature map's channels alone keeps it NHWC
(ShuffleNet's channel shuffle)."""

from ..shape_folding import product
from .attributes import attributes
from .constants import Constant, int32_constant, int8_data, required_constant
from .context import Value
from .layout import NCHW_TO_NHWC, channels_first, nhwc_index, onnx_shape, plain_index, reshaped, transpose
from .booleans import cast_to_bool
from .float32_path import float32_result
from .proto import tensor_bytes
from .quantization import (activation_input, bool_cast, float32_operand, float_cast, float_value, moved_output,
                           new_output, outputs_like_input, params_of, qlinear_input, qparams,
                           quantize_like_onnxruntime, quantized_output, requantize_to, unary_op)
from .registry import arity_problem, onnx_op
from .skip import Skip


def _moves_channels_only(perm):
    """Whether a Transpose by `perm` (of a feature map: N, the channel axes, H, W) keeps N, H and W."""
    rank = len(perm)
    return rank >= 4 and sorted(perm) == list(range(rank)) and perm[0] == 0 and \
        list(perm[-2:]) == [rank - 2, rank - 1]


def reshape_to(ctx, x_name, shape, out_names, channels_last=False):
    """int8 reshape of `x_name` to ONNX `shape`: shares memory with its input. `channels_last`
    (channels_stay_last): the input is held channels-last and only its channels regroup, so the
    IR tensor is reshaped as it is held, and the output is held channels-last too."""
    index = ctx.values[x_name].index if channels_last else plain_index(ctx, x_name)
    t = ctx.tensors[index]
    if product(shape) != t.size:
        raise Skip(f"cannot reshape {list(t.shape)} to {list(shape)}")
    held = (shape[0], *shape[-2:], *shape[1:-2]) if channels_last else shape
    out = ctx.add_tensor(out_names[0], held, t.dtype, t.scale, t.zero_point)
    ctx.add_op("RESHAPE", [index], [out])
    for name in out_names:
        ctx.values[name] = Value(out, channels_last)


def channels_stay_last(ctx, node, source, shape):
    """Whether `node` reshaping `source`, a feature map held channels-last, to ONNX `shape` only
    regroups its channels, N, H and W staying ([N, C, H, W] <-> [N, g, C/g, H, W]): then the IR
    tensor keeps its layout. A 5-D result only where the one node reading it is a Transpose of the
    channels alone (ShuffleNet's channel shuffle: that Transpose and the Reshape back are one strided
    copy in all, where ONNX's layout takes three), as other handlers take NHWC tensors as 4-D."""
    old = onnx_shape(ctx, source)
    if not ctx.values[source].nhwc or len(shape) not in (4, 5) or (shape[0], *shape[-2:]) != (old[0], *old[-2:]):
        return False
    if len(shape) == 4:
        return True
    reader = sole_reader(ctx, node.output[0])
    try:
        return reader is not None and reader.op_type == "Transpose" and \
            _moves_channels_only(list(attributes(reader).get("perm") or ()))
    except Skip:   # a malformed Transpose: its own handler reports it
        return False


def sole_reader(ctx, name):
    """The one node that reads `name` (past a QuantizeLinear -> DequantizeLinear pair: QDQ form), or None."""
    node = only_reader(ctx, name)
    if node is not None and node.op_type == "QuantizeLinear":
        dequantize = only_reader(ctx, node.output[0])
        node = only_reader(ctx, dequantize.output[0]) if dequantize and dequantize.op_type == "DequantizeLinear" \
            else None
    return node


def only_reader(ctx, name):
    readers = ctx.consumers.get(name, [])
    if name in ctx.outputs or len(readers) != 1 or arity_problem(readers[0]) or readers[0].input[0] != name:
        return None
    return readers[0]


def shape_passthrough(ctx, node, shape_of):
    """Flatten/Reshape/Squeeze/Unsqueeze: on a dequantized int8 tensor, with the quantized output
    (QDQ) or the float output feeding only QuantizeLinear of the same parameters."""
    x = node.input[0]
    source = activation_input(ctx, x) if x in ctx.views else x
    if source not in ctx.values:
        raise Skip(f"input '{x}' is not available")
    shape = shape_of(onnx_shape(ctx, source))
    out = node.output[0]
    channels_last = channels_stay_last(ctx, node, source, shape)
    if x not in ctx.views:
        reshape_to(ctx, source, shape, [out], channels_last)
    elif all(c.op_type == "QuantizeLinear" for c in ctx.consumers[out]) and ctx.consumers[out] and out not in ctx.outputs:
        out_names, params, activation = quantized_output(ctx, node)
        t = ctx.tensors[ctx.values[source].index]
        if params[:2] != (t.scale, t.zero_point) or activation != "NONE":
            # reshaped in float (a Relu / Clip after it in float too), quantized again
            reshape_to(ctx, source, shape, [out + "/reshaped"], channels_last)
            requantize_to(ctx, out + "/reshaped", out_names, params, activation)
        else:
            reshape_to(ctx, source, shape, out_names, channels_last)
    else:  # the float result is used dequantized: reshape the int8 tensor and view that
        reshape_to(ctx, source, shape, [out + "/int8"], channels_last)
        ctx.views[out] = out + "/int8"


@onnx_op("Flatten")
def import_flatten(ctx, node, attrs):
    axis = attrs.get("axis", 1)

    def shape_of(shape):
        a = axis + len(shape) if axis < 0 else axis   # in [-rank, rank]: rank gives [size, 1]
        if not 0 <= a <= len(shape):
            raise Skip(f"Flatten axis {axis} of a rank-{len(shape)} tensor")
        return (product(shape[:a]), product(shape[a:]))

    shape_passthrough(ctx, node, shape_of)


@onnx_op("Reshape")
def import_reshape(ctx, node, attrs):
    target = required_constant(ctx, node.input[1], "Reshape shape").values()

    def shape_of(shape):
        copies = [i for i, d in enumerate(target) if d == 0 and not attrs.get("allowzero", 0)]
        if copies and copies[-1] >= len(shape):  # a 0 copies the input's dimension at its position
            raise Skip(f"Reshape shape {list(target)}: the 0 at position {copies[-1]} copies a dimension "
                       f"the input {list(shape)} does not have")
        out = [shape[i] if i in copies else d for i, d in enumerate(target)]
        if out.count(-1) == 1:
            known = product([d for d in out if d != -1])
            out[out.index(-1)] = product(shape) // known if known else 0
        return tuple(out)

    shape_passthrough(ctx, node, shape_of)


@onnx_op("Squeeze")
def import_squeeze(ctx, node, attrs):
    axes = attrs.get("axes") or (required_constant(ctx, node.input[1], "axes").values() if len(node.input) > 1 else None)
    shape_passthrough(ctx, node, lambda s: tuple(d for i, d in enumerate(s)
                                                  if not (d == 1 and (axes is None or i in [a % len(s) for a in axes]))))


@onnx_op("Unsqueeze")
def import_unsqueeze(ctx, node, attrs):
    """Unsqueeze of an activation (MobileNetV4-hybrid's attention): a reshape, the new axes of size 1."""
    axes = attrs.get("axes") or (required_constant(ctx, node.input[1], "axes").values() if len(node.input) > 1 else None)
    if not axes:
        raise Skip("Unsqueeze without axes")

    def shape_of(shape):
        rank = len(shape) + len(axes)
        out = list(shape)
        for position in sorted(a % rank for a in axes):
            out.insert(position, 1)
        return tuple(out)

    shape_passthrough(ctx, node, shape_of)


@onnx_op("Identity", "Dropout")
def import_identity(ctx, node, attrs):
    x = node.input[0]
    if x in ctx.views:
        ctx.views[node.output[0]] = ctx.views[x]
    elif x in ctx.values:
        ctx.values[node.output[0]] = ctx.values[x]
    elif x in ctx.constants:
        ctx.constants[node.output[0]] = ctx.constants[x]
    elif x in ctx.quantized_constants:
        ctx.quantized_constants[node.output[0]] = ctx.quantized_constants[x]
    else:
        raise Skip(f"input '{x}' is not available")


@onnx_op("Cast")
def import_cast(ctx, node, attrs):
    """A Cast of an activation (a constant's is folded): to float32 of a float32 tensor (or of a bool, held
    as 0 / 1), the identity; to bool, its truth (booleans.py)."""
    x = node.input[0]
    if bool_cast(node):
        cast_to_bool(ctx, node)
        return
    if not float_cast(node) or not (x in ctx.views or (x in ctx.values
                                                       and ctx.tensors[ctx.values[x].index].dtype == "float32")):
        raise Skip("only a Cast of a float32 activation to float32 (the identity) is supported")
    import_identity(ctx, node, attrs)


@onnx_op("Constant")
def import_constant(ctx, node, attrs):
    value = attrs.get("value")
    if value is None or not hasattr(value, "t"):
        raise Skip("only Constant with a tensor 'value' is supported")
    dtype, shape, data = tensor_bytes(value.t)
    ctx.constants[node.output[0]] = Constant(node.output[0], dtype, shape, data)


def concat(ctx, node, axis, inputs, out_names, params):
    shapes = [onnx_shape(ctx, n) for n in inputs]
    rank = len(shapes[0])
    if rank == 0:
        raise Skip("a Concat of scalars (rank 0) is not supported")
    axis %= rank
    nhwc = rank == 4 and any(ctx.values[n].nhwc for n in inputs)
    indexes = [nhwc_index(ctx, n) if nhwc else plain_index(ctx, n) for n in inputs]
    out_shape = list(shapes[0])
    out_shape[axis] = sum(s[axis] for s in shapes)
    if nhwc:
        axis = NCHW_TO_NHWC.index(axis)
        out_shape = [out_shape[i] for i in NCHW_TO_NHWC]
    out = new_output(ctx, out_names, out_shape, params, nhwc)
    ctx.add_op("CONCATENATION", indexes, [out], axis=axis, activation="NONE")


@onnx_op("Concat")
def import_concat(ctx, node, attrs):
    if any(float_value(ctx, n) for n in node.input):
        float_concat(ctx, node, attrs.get("axis", 1))
        return
    constant = [n in ctx.constants or n in ctx.quantized_constants for n in node.input]
    if all(constant):
        raise Skip("every input is a constant of a type not folded at load time")
    inputs = [None if c else activation_input(ctx, n) for n, c in zip(node.input, constant)]
    out_names, params, activation = quantized_output(ctx, node)
    if activation != "NONE":
        raise Skip("Concat with a fused activation is not supported")
    inputs = [concat_constant(ctx, n, params) if c else i for n, c, i in zip(node.input, constant, inputs)]
    concat(ctx, node, attrs.get("axis", 1), inputs, out_names, params)


def float_concat(ctx, node, axis):
    """Concat of float32 values (a dynamically quantized ViT's class token beside its patch tokens), as
    onnxruntime's float Concat: the values copied. A constant input is copied into an activation first."""
    names = [float32_operand(ctx, n) for n in node.input]
    for name in names:
        t = ctx.tensors[ctx.values[name].index]
        if t.is_constant:   # written into an activation of its own by a BROADCAST_TO, once
            copy = ctx.add_tensor(name + "/activation", t.shape, "float32")
            ctx.add_op("BROADCAST_TO", [t.index, int32_constant(ctx, f"{name}/shape", list(t.shape))], [copy])
            ctx.values[name] = Value(copy)
    shapes = [onnx_shape(ctx, n) for n in names]
    rank = len(shapes[0])
    if rank == 0 or not -rank <= axis < rank or any(len(s) != rank for s in shapes):
        raise Skip(f"axis {axis} for inputs of shapes {[list(s) for s in shapes]}")
    axis %= rank
    nhwc = rank == 4 and all(ctx.values[n].nhwc for n in names)
    indexes = [ctx.values[n].index if nhwc else plain_index(ctx, n) for n in names]
    out_shape = list(shapes[0])
    out_shape[axis] = sum(s[axis] for s in shapes)
    if nhwc:
        axis = NCHW_TO_NHWC.index(axis)
        out_shape = [out_shape[i] for i in NCHW_TO_NHWC]
    out = float32_result(ctx, node.output[0], out_shape, nhwc)
    ctx.add_op("CONCATENATION", indexes, [out], axis=axis, activation="NONE")


def concat_constant(ctx, name, params):
    """A constant Concat input (ViT's class token beside the patch tokens) as an int8 activation written
    by a BROADCAST_TO to its own shape: a dequantized int8 constant keeps its quantization (CONCATENATION
    requantizes it as it does its other inputs); a float one is quantized with the output's ``params``,
    as onnxruntime's float Concat then QuantizeLinear give it."""
    if name in ctx.quantized_constants:
        q = ctx.quantized_constants[name]
        if q.constant.dtype not in ("int8", "uint8") or len(q.scale) != 1 or len(q.zero_point) != 1:
            raise Skip(f"constant input '{name}' must be int8 or uint8 quantized per tensor")
        return constant_activation(ctx, name, q.constant, (q.scale, q.zero_point, q.constant.dtype))
    constant = ctx.constants[name]
    if constant.dtype != "float32":
        raise Skip(f"constant input '{name}' is {constant.dtype}; expected float32 or a dequantized int8 constant")
    scales, zero_points, _ = params
    q = quantize_like_onnxruntime(constant.values(), scales, zero_points, "int8")
    return constant_activation(ctx, name, Constant(name, "int8", constant.shape, bytes(v & 0xFF for v in q)),
                               (scales, zero_points, "int8"))


def constant_activation(ctx, name, constant, params):
    """ONNX name of int8 / uint8 ``constant`` with ``params`` (zero points in int8 terms) copied into an
    int8 activation of its own (in ONNX's layout), made once."""
    copy = name + "/activation"
    if copy not in ctx.values:
        scales, zero_points, _ = params
        source = ctx.add_tensor(name, constant.shape, "int8", scales, zero_points,
                                int8_data(constant, constant.dtype))
        index = new_output(ctx, [copy], constant.shape, params, False)
        shape = int32_constant(ctx, f"{copy}/shape", list(constant.shape))
        ctx.add_op("BROADCAST_TO", [source, shape], [index])
    return copy


@onnx_op("QLinearConcat")
def import_qlinear_concat(ctx, node, attrs):
    y_s, y_z = node.input[0], node.input[1]
    rest = list(node.input[2:])
    inputs = [qlinear_input_any(ctx, rest[i], rest[i + 1], rest[i + 2]) for i in range(0, len(rest), 3)]
    params = qparams(ctx, y_s, y_z, "QLinearConcat output")
    concat(ctx, node, attrs.get("axis", 1), inputs, [node.output[0]], params)


def qlinear_input_any(ctx, name, scale_name, zero_point_name):
    """Like qlinear_input, but a differently quantized input stays as it is (Concat requantizes); a
    constant one (the class token) is copied into an activation."""
    if name in ctx.constants:
        params = qparams(ctx, scale_name, zero_point_name, f"input '{name}'")
        if ctx.constants[name].dtype != params[2]:
            raise Skip(f"input '{name}' is {ctx.constants[name].dtype} but its zero point is {params[2]}")
        return constant_activation(ctx, name, ctx.constants[name], params)
    t = ctx.tensors[ctx.values[name].index] if name in ctx.values else None
    if t is not None and t.dtype == "int8" and t.scale:
        return name
    return qlinear_input(ctx, name, scale_name, zero_point_name)


def softmax(ctx, x, axis, out_names, params):
    """SOFTMAX runs over the IR tensor's last dimension: an ONNX tensor's last axis, or the channels
    (axis 1) of a feature map, which are last in NHWC; any other axis is moved last and back."""
    shape = onnx_shape(ctx, x)
    if not shape or not -len(shape) <= axis < len(shape):
        raise Skip(f"axis {axis} for a tensor of shape {list(shape)}")
    axis %= len(shape)
    if ctx.values[x].nhwc and axis != 1:  # over another axis of a feature map: in ONNX's layout
        ctx.values[x + "/nchw"] = Value(plain_index(ctx, x))
        x = x + "/nchw"
    if axis != (1 if ctx.values[x].nhwc else len(shape) - 1):
        # over another axis: onnxruntime moves that axis last, takes the softmax of each row and moves it
        # back; so does qnnweb
        perm = [a for a in range(len(shape)) if a != axis] + [axis]
        rows = transpose(ctx, ctx.values[x].index, perm)
        soft = ctx.add_tensor(f"{out_names[0]}/axis_last", ctx.tensors[rows].shape, "int8", params[0], params[1])
        ctx.add_op("SOFTMAX", [rows], [soft], beta=1.0)
        out = new_output(ctx, out_names, list(shape), params, False)
        ctx.add_op("TRANSPOSE", [soft], [out], perm=[perm.index(a) for a in range(len(shape))])
        return
    unary_op(ctx, "SOFTMAX", x, out_names, params, beta=1.0)


def coerced_softmax(ctx, x, axis, out_names, params):
    """Softmax before opset 13 (and QLinearSoftmax with opset < 13): over the tensor coerced to 2-D at
    `axis`, [prod(shape[:axis]), prod(shape[axis:])], as onnxruntime computes it: the rows' SOFTMAX of that
    view, in ONNX's layout, reshaped back (no copy either way)."""
    shape = onnx_shape(ctx, x)
    if not shape or not -len(shape) <= axis < len(shape):
        raise Skip(f"axis {axis} for a tensor of shape {list(shape)}")
    axis %= len(shape)
    if axis == len(shape) - 1:
        softmax(ctx, x, axis, out_names, params)
        return
    columns = product(shape[axis:])
    rows = reshaped(ctx, plain_index(ctx, x), [product(shape[:axis]), columns], "/coerced")
    soft = ctx.add_tensor(f"{out_names[0]}/coerced", [ctx.tensors[rows].shape[0], columns], "int8", params[0],
                          params[1])
    ctx.add_op("SOFTMAX", [rows], [soft], beta=1.0)
    out = new_output(ctx, out_names, list(shape), params, False)
    ctx.add_op("RESHAPE", [soft], [out])


@onnx_op("Softmax")
def import_softmax(ctx, node, attrs):
    x = activation_input(ctx, node.input[0], float32=True)
    if float_value(ctx, x):
        float_softmax(ctx, node, attrs, x)
        return
    out_names, params, _ = quantized_output(ctx, node)
    if ctx.opsets.get("ai.onnx", 13) < 13:
        coerced_softmax(ctx, x, attrs.get("axis", 1), out_names, params)
    else:
        softmax(ctx, x, attrs.get("axis", -1), out_names, params)


def float_softmax(ctx, node, attrs, x):
    """Softmax of a float32 value (a dynamically quantized model's attention), as onnxruntime's float kernel
    computes it (float32_path.py), over the last axis: a feature map's channels where it is held NHWC; another
    axis moved last and back, as onnxruntime moves it (opset 13 on)."""
    value, shape = ctx.values[x], list(onnx_shape(ctx, x))
    axis = attrs.get("axis", -1 if ctx.opsets.get("ai.onnx", 13) >= 13 else 1)
    if not shape or not -len(shape) <= axis < len(shape):
        raise Skip(f"axis {axis} for a tensor of shape {shape}")
    axis %= len(shape)
    if ctx.opsets.get("ai.onnx", 13) < 13 and axis != len(shape) - 1:
        raise Skip(f"a float Softmax of opset < 13 over axis {axis} of a rank-{len(shape)} tensor (the tensor "
                   "coerced to 2-D): only the last axis is supported")
    if value.nhwc and axis == 1:
        out = float32_result(ctx, node.output[0], ctx.tensors[value.index].shape, True)
        ctx.add_op("SOFTMAX", [value.index], [out], beta=1.0)
        return
    index = plain_index(ctx, x)
    if axis == len(shape) - 1:
        out = float32_result(ctx, node.output[0], shape, False)
        ctx.add_op("SOFTMAX", [index], [out], beta=1.0)
        return
    perm = [k for k in range(len(shape)) if k != axis] + [axis]
    moved = transpose(ctx, index, perm)
    last = ctx.add_tensor(node.output[0] + "/last_axis", ctx.tensors[moved].shape, "float32")
    ctx.add_op("SOFTMAX", [moved], [last], beta=1.0)
    out = float32_result(ctx, node.output[0], shape, False)
    ctx.add_op("TRANSPOSE", [last], [out], perm=[perm.index(k) for k in range(len(shape))])


@onnx_op("QLinearSoftmax")
def import_qlinear_softmax(ctx, node, attrs):
    """com.microsoft QLinearSoftmax(X, X_scale, X_zero_point, Y_scale, Y_zero_point), axis (-1), opset (the
    Softmax's it replaces: before 13, over the tensor coerced to 2-D)."""
    x = qlinear_input(ctx, node.input[0], node.input[1], node.input[2])
    params = qparams(ctx, node.input[3], node.input[4] if len(node.input) > 4 else "", "QLinearSoftmax output")
    over_axis = coerced_softmax if attrs.get("opset", 13) < 13 else softmax
    over_axis(ctx, x, attrs.get("axis", -1), [node.output[0]], params)


def transpose_perm(attrs, rank):
    """A Transpose's perm for a tensor of `rank` (reversed axes by default), checked: a permutation."""
    perm = list(attrs.get("perm") or reversed(range(rank)))
    if sorted(perm) != list(range(rank)):
        raise Skip(f"perm {perm} is not a permutation of the {rank} axes of its input")
    return perm


@onnx_op("Transpose")
def import_transpose(ctx, node, attrs):
    value = ctx.values.get(node.input[0])
    if value is not None and ctx.tensors[value.index].dtype == "float32" and \
            value.index not in ctx.graph_input_indices:
        # a float32 result (a float op's tail, or read in float: float32_path.py): moved in float32
        if float_layout_change(ctx, node, value, transpose_perm(attrs, len(onnx_shape(ctx, node.input[0])))):
            return
        index = plain_index(ctx, node.input[0])
        shape = ctx.tensors[index].shape
        perm = transpose_perm(attrs, len(shape))
        out = ctx.add_tensor(node.output[0], [shape[p] for p in perm], "float32")
        ctx.values[node.output[0]] = Value(out)
        ctx.add_op("TRANSPOSE", [index], [out], perm=list(perm))
        return
    x = activation_input(ctx, node.input[0])
    perm = transpose_perm(attrs, len(onnx_shape(ctx, x)))
    channels_last = channels_alone(ctx, node, x, perm)
    if channels_last:   # the IR tensor [N, H, W, C...] as held: ONNX axis k (a channel axis) is its k + 2
        index, perm = ctx.values[x].index, [0, 1, 2, *(p + 2 for p in perm[1:-2])]
    else:
        index = plain_index(ctx, x)
    out_names, params, activation = outputs_like_input(ctx, node, x)
    t = ctx.tensors[index]
    same = params[:2] == (t.scale, t.zero_point) and activation == "NONE"
    moved = out_names if same else [f"{node.output[0]}/moved"]
    out = new_output(ctx, moved, [t.shape[p] for p in perm], params_of(ctx, x), channels_last)
    ctx.add_op("TRANSPOSE", [index], [out], perm=perm)
    if not same:   # moved in float, then quantized with other parameters, or a Relu / Clip between
        requantize_to(ctx, moved[0], out_names, params, activation)


def float_layout_change(ctx, node, value, perm):
    """A Transpose that only changes the layout a float32 feature map is held in, read as no copy at all: NCHW ->
    NHWC of a value held NHWC (the tensor as held is the result) and NHWC -> NCHW of a plain [N, H, W, C] one (the
    result is that tensor held NHWC); ConvNeXt's LayerNorm2d between its convolutions. Whether it applied."""
    if len(perm) != 4 or node.output[0] in ctx.outputs:
        return False
    if value.nhwc and tuple(perm) == NCHW_TO_NHWC:
        ctx.values[node.output[0]] = Value(value.index)
        return True
    if not value.nhwc and tuple(perm) == channels_first(4):
        ctx.values[node.output[0]] = Value(value.index, True)
        return True
    return False


def channels_alone(ctx, node, x, perm):
    """Whether Transpose `node` of `x`, held channels-last, permutes its channel axes alone (then it
    runs on the tensor as held). A 5-D result (channels_stay_last) only where a Reshape reads it."""
    if not ctx.values[x].nhwc or len(perm) != len(onnx_shape(ctx, x)) or not _moves_channels_only(perm):
        return False
    if len(perm) == 4:
        return True
    reader = sole_reader(ctx, node.output[0])
    return reader is not None and reader.op_type == "Reshape"


@onnx_op("DepthToSpace")
def import_depth_to_space(ctx, node, attrs):
    block_move(ctx, node, "DEPTH_TO_SPACE", attrs.get("blocksize"), attrs.get("mode", "DCR"))


@onnx_op("SpaceToDepth")
def import_space_to_depth(ctx, node, attrs):
    block_move(ctx, node, "SPACE_TO_DEPTH", attrs.get("blocksize"), "DCR")


def block_move(ctx, node, op_type, block, mode):
    """DepthToSpace / SpaceToDepth on the NHWC tensor: ONNX's DCR order (block row, block column,
    channel) is TFLite's, so one IR DEPTH_TO_SPACE / SPACE_TO_DEPTH; CRD (channel, block row, block
    column) first moves the channels into DCR order. QDQ with another output quantization: the
    values move in int8 and are quantized again (what onnxruntime does in float)."""
    if type(block) is not int or block < 1:
        raise Skip(f"blocksize {block!r}; expected a positive integer")
    if isinstance(mode, bytes):
        mode = mode.decode("utf-8", "replace")
    if mode not in ("DCR", "CRD"):
        raise Skip(f"mode {mode!r}; expected DCR or CRD")
    x = activation_input(ctx, node.input[0], float32=True)
    index = nhwc_index(ctx, x)
    n, h, w, c = ctx.tensors[index].shape
    if op_type == "DEPTH_TO_SPACE":
        if c % (block * block):
            raise Skip(f"{c} channels are not a multiple of blocksize^2 = {block * block}")
        shape = [n, h * block, w * block, c // (block * block)]
        if mode == "CRD" and block > 1:  # channel c * b^2 + k -> k * C' + c
            rows = reshaped(ctx, index, [n * h * w, c // (block * block), block * block, 1], "/crd")
            index = reshaped(ctx, transpose(ctx, rows, [0, 2, 1, 3]), [n, h, w, c], "/dcr")
    else:
        if h % block or w % block:
            raise Skip(f"height {h} and width {w} must be multiples of blocksize {block}")
        shape = [n, h // block, w // block, c * block * block]
    moved_output(ctx, node, node.output[0], x, shape, True,
                       lambda out: ctx.add_op(op_type, [index], [out], block_size=block))
