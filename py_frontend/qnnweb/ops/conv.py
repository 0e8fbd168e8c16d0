"""CONV_2D, DEPTHWISE_CONV_2D and FULLY_CONNECTED (a 1x1 convolution over the rows). CONV_2D and
FULLY_CONNECTED take weights with a per-tensor zero point; DEPTHWISE_CONV_2D needs symmetric weights.
A CONV_2D whose weights have fewer input channels than its input is grouped (TFLite's form; ONNX Conv
with 1 < group < C imports to it): groups = input channels / weight input channels."""

import struct

from ..graph import window_output_size
from ..numerics.float32 import float32_bytes, float32s
from .registry import Step, Unsupported, lowering
from .common import activation_range, require_constant, require_int8, require_rank


def _weights(graph, op, axis, allow_zero_point=False):
    """(tensor, int8 bytes, per-channel scales, weight zero points: one int, or a list per output
    channel). Non-zero zero points only where ``allow_zero_point`` (CONV_2D, FULLY_CONNECTED): one for
    the whole tensor (the kernels subtract zw * sum(x - x_zp) per output pixel) or one per output
    channel (the kernels split w - zw[n] into two int8 halves over doubled taps)."""
    w = graph.tensors[op.inputs[1]]
    data = require_constant(w, "weights", "int8")
    if w.size == 0:
        raise Unsupported(f"weights '{w.name}' of shape {list(w.shape)} are empty")
    channels = w.shape[axis]
    if len(w.scale) not in (1, channels) or (len(w.scale) == channels > 1 and w.quantized_dimension != axis):
        raise Unsupported(f"weights '{w.name}' must be quantized per tensor or per output channel (axis {axis})")
    zero_points = set(w.zero_point) or {0}
    if zero_points != {0}:
        if not allow_zero_point:
            raise Unsupported(f"weights '{w.name}' have a zero point; {op.type} needs symmetric weights "
                              "(zero point 0)")
    if any(not -128 <= z <= 127 for z in zero_points):
        raise Unsupported(f"weights '{w.name}' have a zero point outside int8")
    scales = list(w.scale) if len(w.scale) == channels else [w.scale[0]] * channels
    if len(zero_points) == 1:
        return w, data, scales, zero_points.pop()
    if len(w.zero_point) != channels or w.quantized_dimension != axis:
        raise Unsupported(f"weights '{w.name}' have zero points that are not one per output channel (axis {axis})")
    return w, data, scales, list(w.zero_point)


def _bias(graph, op, channels):
    if len(op.inputs) < 3 or op.inputs[2] < 0:
        return None
    b = graph.tensors[op.inputs[2]]
    data = require_constant(b, "bias", "int32")
    if b.size != channels:
        raise Unsupported(f"bias '{b.name}' has {b.size} values for {channels} output channels")
    return data


def _requantization(graph, op, weight_scales):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_scale, x_zp = require_int8(x, "input")
    y_scale, y_zp = require_int8(y, "output")
    # float32 arithmetic in this order, as XNNPACK and onnxruntime compute their requantization scales
    scales = float32s([s / y_scale for s in float32s([x_scale * s for s in weight_scales])])
    lo, hi = activation_range(op.options.get("activation", "NONE"), y_scale, y_zp)
    return x, y, x_zp, y_zp, scales, lo, hi


def _weight_zero_point_fields(w_zp, fields, constants):
    """conv2d's weights_zero_point (per tensor) or weights_zero_points (int32 per output channel)."""
    if isinstance(w_zp, list):
        fields["weights_zero_point"] = 0
        constants["weights_zero_points"] = struct.pack(f"<{len(w_zp)}i", *w_zp)
    else:
        fields.update(weights_zero_point=w_zp, weights_zero_points=0)


# IR weight layouts (op.options["weights_layout"]) -> the records' weights_layout field.
CONV_LAYOUTS = {"OHWI": 0, "OIHW": 1}          # CONV_2D [O,KH,KW,I] / [O,I,KH,KW]
DEPTHWISE_LAYOUTS = {"OHWI": 0, "OIHW": 1}     # DEPTHWISE_CONV_2D [1,KH,KW,C*M] / [C*M,1,KH,KW]
FC_LAYOUTS = {"OI": 0, "IO": 2}                # FULLY_CONNECTED [out,in] / [in,out]


def _layout(op, layouts, default):
    layout = op.options.get("weights_layout", default)
    if layout not in layouts:
        raise Unsupported(f"weights_layout {layout!r} not supported (expected one of {sorted(layouts)})")
    return layout


@lowering("CONV_2D", "DEPTHWISE_CONV_2D")
def lower_conv2d(graph, op):
    depthwise = op.type == "DEPTHWISE_CONV_2D"
    layout = _layout(op, DEPTHWISE_LAYOUTS if depthwise else CONV_LAYOUTS, "OHWI")
    oihw = layout == "OIHW"
    for index, role in ((op.inputs[0], "input"), (op.outputs[0], "output"), (op.inputs[1], "weights")):
        require_rank(graph.tensors[index], 4, role)
    w, weights, weight_scales, w_zp = _weights(graph, op, 3 if depthwise and not oihw else 0,
                                               allow_zero_point=not depthwise)
    x, y, x_zp, y_zp, scales, lo, hi = _requantization(graph, op, weight_scales)
    for tensor, role in ((x, "input"), (y, "output"), (w, "weights")):
        require_rank(tensor, 4, role)
    n, in_h, in_w, in_c = x.shape
    out_n, out_h, out_w, out_c = y.shape
    if depthwise:
        w_oc, w_ic, kh, kw = w.shape if oihw else (w.shape[3], w.shape[0], w.shape[1], w.shape[2])
    else:
        w_oc, w_ic, kh, kw = w.shape if oihw else (w.shape[0], w.shape[3], w.shape[1], w.shape[2])
    groups = 1 if depthwise or w_ic <= 0 else in_c // w_ic
    if out_n != n or (w_ic != 1 if depthwise else w_ic * groups != in_c):
        raise Unsupported(f"weights {list(w.shape)} ({layout}) do not fit input {list(x.shape)}")
    if out_c % groups != 0:
        raise Unsupported(f"{out_c} output channels do not divide into {groups} groups")
    if w_oc != out_c:
        raise Unsupported(f"weights {list(w.shape)} ({layout}) do not fit output {list(y.shape)}")
    if depthwise and out_c % in_c != 0:
        raise Unsupported(f"{out_c} output channels is not a multiple of {in_c} input channels")
    (sh, sw), (dh, dw) = op.options["stride"], op.options["dilation"]
    top, bottom, left, right = op.options["padding"]
    expected_h = window_output_size(in_h, top, bottom, kh, sh, dh)
    expected_w = window_output_size(in_w, left, right, kw, sw, dw)
    if (expected_h, expected_w) != (out_h, out_w):
        raise Unsupported(f"output {out_h}x{out_w} does not match the window arithmetic ({expected_h}x{expected_w})")
    bias = _bias(graph, op, out_c)
    fields = dict(
        input=op.inputs[0], output=op.outputs[0], batch=n, input_height=in_h, input_width=in_w,
        input_channels=in_c // groups, output_height=out_h, output_width=out_w, output_channels=out_c,
        kernel_height=kh, kernel_width=kw, stride_height=sh, stride_width=sw, dilation_height=dh,
        dilation_width=dw, padding_top=top, padding_left=left, input_zero_point=x_zp,
        output_zero_point=y_zp, output_min=lo, output_max=hi,
        weights_layout=(DEPTHWISE_LAYOUTS if depthwise else CONV_LAYOUTS)[layout])
    if depthwise:
        fields["depth_multiplier"] = out_c // in_c
    else:
        fields.update(groups=groups)
    constants = {"weights": weights, "scales": float32_bytes(scales)}
    if not depthwise:
        _weight_zero_point_fields(w_zp, fields, constants)
    if bias is not None:
        constants["bias"] = bias
    else:
        fields["bias"] = 0
    return [Step("dwconv2d" if depthwise else "conv2d", fields, constants)]


@lowering("FULLY_CONNECTED")
def lower_fully_connected(graph, op):
    if op.options.get("weights_format", 0) != 0:
        raise Unsupported("shuffled weights format not supported")
    layout = _layout(op, FC_LAYOUTS, "OI")
    require_rank(graph.tensors[op.inputs[1]], 2, "weights")
    w, weights, weight_scales, w_zp = _weights(graph, op, 0 if layout == "OI" else 1, allow_zero_point=True)
    x, y, x_zp, y_zp, scales, lo, hi = _requantization(graph, op, weight_scales)
    require_rank(w, 2, "weights")
    out_c, k = w.shape if layout == "OI" else w.shape[::-1]
    if x.size % k != 0 or y.size != (x.size // k) * out_c:
        raise Unsupported(f"input {list(x.shape)} and output {list(y.shape)} do not fit weights {list(w.shape)} ({layout})")
    rows = x.size // k
    bias = _bias(graph, op, out_c)
    fields = dict(
        input=op.inputs[0], output=op.outputs[0], batch=1, input_height=rows, input_width=1,
        input_channels=k, output_height=rows, output_width=1, output_channels=out_c,
        kernel_height=1, kernel_width=1, stride_height=1, stride_width=1, dilation_height=1,
        dilation_width=1, padding_top=0, padding_left=0, input_zero_point=x_zp,
        output_zero_point=y_zp, output_min=lo, output_max=hi, weights_layout=FC_LAYOUTS[layout], groups=1)
    constants = {"weights": weights, "scales": float32_bytes(scales)}
    _weight_zero_point_fields(w_zp, fields, constants)
    if bias is not None:
        constants["bias"] = bias
    else:
        fields["bias"] = 0
    return [Step("conv2d", fields, constants)]


@lowering("TRANSPOSE_CONV")
def lower_transpose_conv(graph, op):
    """TRANSPOSE_CONV runs as a CONV_2D over its output phases (passes.transpose_convs_as_convs); one
    left here is one that pass could not rewrite, for the reason it gave."""
    raise Unsupported(op.options.get("problem", "not rewritten into a convolution"))
