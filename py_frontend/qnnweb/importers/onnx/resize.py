"""Resize (nearest and linear, over the height and width of a feature map) as IR RESIZE_NEAREST_NEIGHBOR /
RESIZE_BILINEAR with ONNX's coordinate rules in the options (ops/resize.py computes the source pixels
as onnxruntime does)."""

import struct

from ...numerics.float32 import float32
from .attributes import attributes
from .constants import float_values, int_values
from .context import Value, producers
from .layout import nhwc_index, onnx_shape, reshaped
from .quantization import activation_input, float_tail, moved_output
from .registry import onnx_op
from .skip import Skip

COORDINATE_MODES = ("half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners")

# QDQ float ops onnxruntime fuses into its QLinear kernels, by the QOperator op each becomes
QDQ_AS_QLINEAR = {"Conv": "QLinearConv", "Add": "QLinearAdd", "Mul": "QLinearMul", "Concat": "QLinearConcat",
                  "Sigmoid": "QLinearSigmoid", "LeakyRelu": "QLinearLeakyRelu", "AveragePool": "QLinearAveragePool",
                  "GlobalAveragePool": "QLinearGlobalAveragePool"}

NEAREST_MODES = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")

# float ops QOperator leaves between a DequantizeLinear and a QuantizeLinear; onnxruntime's transpose
# optimizer moves a transpose through them as through QLinearSigmoid
FLOAT_UNARY = ("Relu", "Clip", "Sigmoid", "Tanh", "LeakyRelu", "HardSigmoid", "HardSwish", "Elu")

# one-input ops onnxruntime moves an NHWC transpose through only where it then vanishes (a float
# HardSwish: difftest s20261222-c582; a Pad: s20261224-c184; a Slice: s20261227-c12)
NHWC_WHERE_ABSORBED = ("QLinearSigmoid", "QLinearLeakyRelu", "QLinearAveragePool", "Resize", "Pad",
                       "Slice") + FLOAT_UNARY

# The ops qnnweb imports that onnxruntime 1.32's transpose optimizer has a handler for (its handler_map
# and OrtExtendedHandlers) and whose outputs a pushed transpose reaches. Before pushing, it marks every
# tensor with a path through such ops to a Transpose node (those it wraps each QLinearConv in among
# them): its "outputs leading to transpose". A one-input op (or one with a constant operand) takes the
# transpose only if its output is so marked. The path may run through ops it then declines to push
# through: a Gather on the channels (difftest s20261242-c5). Reshape, Flatten, DepthToSpace,
# SpaceToDepth, MatMul, Gemm, QGemm, QLinearMatMul and a float ConvTranspose end the path (read from
# the graphs it optimizes, tests/onnx/test_onnx_resize.py).
TRANSPOSE_HANDLED = NHWC_WHERE_ABSORBED + (
    "QLinearGlobalAveragePool", "MaxPool", "QLinearAdd", "QLinearMul", "QLinearConcat", "QLinearSoftmax",
    "QuantizeLinear", "DequantizeLinear", "Add", "Sub", "Mul", "Div", "Max", "Min", "PRelu", "Concat", "Split",
    "Squeeze", "Gather", "Identity", "Softmax", "ReduceMean", "AveragePool", "GlobalAveragePool")


def _as_qlinear(node):
    """The op onnxruntime runs `node` as: a QDQ float op as the QLinear kernel it fuses it into."""
    return QDQ_AS_QLINEAR.get(node.op_type, node.op_type) if node.domain in ("", "ai.onnx") else node.op_type


def _text(value, default):
    value = default if value is None else value
    return value.decode("utf-8", "replace") if isinstance(value, bytes) else value


@onnx_op("Resize")
def import_resize(ctx, node, attrs):
    mode = _text(attrs.get("mode"), "nearest")
    coordinates = _text(attrs.get("coordinate_transformation_mode"), "half_pixel")
    nearest = _text(attrs.get("nearest_mode"), "round_prefer_floor")
    if mode not in ("nearest", "linear"):
        raise Skip(f"mode {mode!r} is not supported (nearest and linear are)")
    if coordinates not in COORDINATE_MODES:
        raise Skip(f"coordinate_transformation_mode {coordinates!r} is not supported")
    if mode == "nearest" and nearest not in NEAREST_MODES:
        raise Skip(f"nearest_mode {nearest!r} is not supported")
    if attrs.get("antialias", 0) or "axes" in attrs:
        raise Skip("antialias and axes are not supported")
    x = activation_input(ctx, node.input[0])
    shape = onnx_shape(ctx, x)
    if len(shape) != 4:
        raise Skip(f"input of shape {list(shape)}: only 4-D feature maps are resized")
    inputs = list(node.input) + [""] * (4 - len(node.input))
    scales = float_values(ctx, inputs[2]) if inputs[2] else []
    sizes = int_values(ctx, inputs[3], "sizes") if inputs[3] else []
    if sizes:
        if len(sizes) != 4:
            raise Skip(f"sizes {sizes} for a 4-D input")
        scales = [float32(float32(o) / float32(i)) for o, i in zip(sizes, shape)]
    elif len(scales) == 4:
        sizes = [int(float32(d * s)) for d, s in zip(shape, scales)]
    else:
        raise Skip("Resize needs constant scales or sizes (4 values)")
    if sizes[0] != shape[0] or sizes[1] != shape[1] or scales[0] != 1 or scales[1] != 1:
        raise Skip(f"scales {scales} resize more than the height and width")
    n, _, out_h, out_w = sizes
    index = nhwc_index(ctx, x)
    c = ctx.tensors[index].shape[3]
    size = ctx.add_tensor(f"{node.output[0]}/size", [2], "int32", data=struct.pack("<2i", out_h, out_w))
    op_type = "RESIZE_NEAREST_NEIGHBOR" if mode == "nearest" else "RESIZE_BILINEAR"
    options = {"coordinate_transformation_mode": coordinates, "nearest_mode": nearest,
               "scales": (scales[2], scales[3])}
    emit = lambda out: ctx.add_op(op_type, [index, size], [out], **options)  # noqa: E731
    width_only = False
    if mode == "linear":   # which of onnxruntime's bilinear arithmetics runs it (ops/resize.py)
        nhwc = nhwc_in_onnxruntime(ctx, node.input[0])
        if node.input[0] in ctx.views:
            # a float Resize: the DequantizeLinear before it stays a node of its own, which takes the
            # transpose only where its output leads on to another (difftest s20261241-c8117: a
            # Reshape after the Resize ends that path, so onnxruntime resizes in NCHW)
            nhwc = nhwc and transpose_absorbed(ctx, node.input[0])
        width_only = nhwc and scales[2] == 1 and scales[3] != 1   # its NCHW kernel runs it (below)
        options["onnx_arithmetic"] = ("float" if node.input[0] in ctx.views
                                      else "q10" if nhwc and not width_only else "float_truncate")
        if width_only:
            emit = width_resize_as_onnxruntime_nhwc(ctx, index, [n, out_h, out_w, c], options)
    if options.get("onnx_arithmetic") == "float" and not width_only and float_tail(ctx, node.output[0]):
        # onnxruntime resizes float values (QOperator left the input in float) and the result is the
        # model's output, through moves at most: the float32 sums themselves, not quantized again
        out = ctx.add_tensor(node.output[0], [n, out_h, out_w, c], "float32")
        ctx.values[node.output[0]] = Value(out, True)
        emit(out)
        return
    moved_output(ctx, node, node.output[0], x, [n, out_h, out_w, c], True, emit,
                       requantizes=options.get("onnx_arithmetic") == "float")


def width_resize_as_onnxruntime_nhwc(ctx, index, out_shape, options):
    """onnxruntime resizes an NHWC tensor whose height keeps its size (scales [1, 1, s, 1]) with its
    NCHW kernel, as if it were NCHW: height as channels, width as height, channels as width (scale 1:
    the last channel weighed 1/2 and 1/2 with itself; an int8 tensor in float, truncated). The same
    here: [N, H, W, C] viewed as [N * H, W, C, 1]."""
    n, h, w, c = ctx.tensors[index].shape
    viewed = reshaped(ctx, index, [n * h, w, c, 1], "/channels_as_width")
    size = ctx.add_tensor(f"{ctx.tensors[index].name}/channels_as_width/size", [2], "int32",
                        data=struct.pack("<2i", out_shape[2], c))
    options = dict(options, scales=(options["scales"][1], 1.0))

    def emit(out):
        t = ctx.tensors[out]
        resized = ctx.add_tensor(t.name + "/channels_as_width", [n * h, out_shape[2], c, 1], "int8", t.scale,
                               t.zero_point)
        ctx.add_op("RESIZE_BILINEAR", [viewed, size], [resized], **options)
        ctx.add_op("RESHAPE", [resized], [out])
    return emit


def nhwc_in_onnxruntime(ctx, name, depth=0):
    """Whether onnxruntime 1.32 holds the int8 tensor `name` (QOperator, or QDQ: the float op its
    DequantizeLinear / QuantizeLinear pairs wrap, which it fuses) in NHWC. Its NhwcTransformer
    turns every QLinearConv to NHWC with transposes around it, and its transpose optimizer moves
    those through the ops between (tests/onnx/test_onnx_resize.py checks the cases below against
    the graph it optimizes): QLinearAdd / QLinearMul of two NHWC activations, QLinearConcat whose
    activation inputs are all NHWC, int8 MaxPool and QLinearGlobalAveragePool stay NHWC;
    QLinearSigmoid, QLinearLeakyRelu, QLinearAveragePool, Resize, Pad, Split, the float unary ops and
    QLinearAdd / QLinearMul with a constant operand only where their output leads on to another
    transpose (``transpose_absorbed``; toward the model's output it stays before them), an int8 linear
    Resize always; a model input is NCHW."""
    producer = ort_producer(ctx, name)
    if producer is None or depth > 64:
        return False
    op_type = _as_qlinear(producer)
    if op_type == "QLinearConv":
        return True
    if op_type in ("QLinearAdd", "QLinearMul"):
        activations = [producer.input[0], producer.input[1 if producer.op_type in ("Add", "Mul") else 3]]
        if any(constant_source(ctx, a) for a in activations) and not transpose_absorbed(ctx, name):
            return False   # one activation: like the one-input ops below (difftest s20261208-c1060)
    elif op_type == "QLinearConcat":
        activations = producer.input if producer.op_type == "Concat" else producer.input[2::3]
    elif op_type in ("MaxPool", "QLinearGlobalAveragePool"):
        activations = [producer.input[0]]
    elif op_type in NHWC_WHERE_ABSORBED:
        # an int8 linear Resize takes the transpose whatever follows (OrtEPCostCheck: its NHWC kernel
        # is the faster one)
        int8_linear_resize = (op_type == "Resize" and producer.input[0] not in ctx.views
                              and _text(attributes(producer).get("mode"), "nearest") == "linear")
        if not int8_linear_resize and not transpose_absorbed(ctx, name):
            return False
        activations = [producer.input[0]]
    elif op_type == "Split":   # as the one-input ops, where any of its outputs leads on to a transpose
        if not any(transpose_absorbed(ctx, out) for out in producer.output if out):
            return False       # (difftest s20261244-c313)
        activations = [producer.input[0]]
    else:
        return False
    return all(constant_source(ctx, a) or nhwc_in_onnxruntime(ctx, a, depth + 1) for a in activations)


def transpose_absorbed(ctx, name, depth=0):
    """Whether onnxruntime's transpose optimizer counts `name` among its outputs leading to a
    transpose (TRANSPOSE_HANDLED): a path through ops it has handlers for reaches a QLinearConv (a
    QDQ Conv) or a Transpose node. Else it leaves the transpose before the op that makes `name`
    (a Flatten or the model's output further on: difftest s20261208-c1114)."""
    for consumer in ctx.consumers.get(name, []):
        op_type = _as_qlinear(consumer)
        if op_type in ("QLinearConv", "Transpose"):
            return True
        if op_type in TRANSPOSE_HANDLED and depth < 64 and \
                any(transpose_absorbed(ctx, out, depth + 1) for out in consumer.output):
            return True
    return False


def constant_source(ctx, name):
    """Whether `name` is a constant, or a DequantizeLinear of one (QDQ)."""
    producer = producers(ctx).get(name)
    return name in ctx.constants or (producer is not None and producer.op_type == "DequantizeLinear"
                                      and producer.input[0] in ctx.constants)


def ort_producer(ctx, name):
    """The node onnxruntime computes `name` with: in QDQ form, the float op between the
    DequantizeLinear / QuantizeLinear pairs it fuses (a Conv there is its QLinearConv)."""
    producer = producers(ctx).get(name)
    while producer is not None and producer.op_type in ("DequantizeLinear", "QuantizeLinear"):
        producer = producers(ctx).get(producer.input[0])
    return producer
