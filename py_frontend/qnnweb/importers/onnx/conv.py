"""Conv / QLinearConv (CONV_2D, DEPTHWISE_CONV_2D), ConvTranspose (TRANSPOSE_CONV) and Gemm / MatMul / QLinearMatMul / QGemm
(FULLY_CONNECTED; BATCH_MATMUL where the second input is an activation)."""

import struct

from ...graph import permuted_bytes, window_output_size
from ..shape_folding import FoldError, broadcast_shape
from .attributes import window_pads
from .layout import nhwc_index, onnx_shape, plain_index, transpose
from .float32_path import float32_result
from .quantization import (activation_input, float32_operand, float_value, new_output, qlinear_input, qparams,
                           quantized_output)
from .registry import onnx_op
from .skip import Skip
from .weights import bias_index, weights_index


def conv(ctx, node, attrs, x_name, w_index, bias_name, out_names, params, activation):
    x = nhwc_index(ctx, x_name)
    n, h, w_, c = ctx.tensors[x].shape
    weights = ctx.tensors[w_index]
    if len(weights.shape) != 4:
        raise Skip("only 2-D convolutions are supported")
    m, c_per_group, kh, kw = weights.shape
    group = attrs.get("group", 1)
    if not isinstance(group, int) or group < 1 or c_per_group * group != c or m % group != 0:
        raise Skip(f"group {group} does not fit {c} input channels and weights {list(weights.shape)}")
    # depthwise with a weight zero point runs as a grouped CONV_2D (the kernels that subtract
    # zw * sum(x - x_zp) are the IGEMM ones)
    symmetric = set(weights.zero_point) <= {0}
    op_type = "DEPTHWISE_CONV_2D" if group == c > 1 and c_per_group == 1 and symmetric else "CONV_2D"
    strides = attrs.get("strides", [1, 1])
    dilations = attrs.get("dilations", [1, 1])
    pads = window_pads(attrs, (h, w_), (kh, kw), strides, dilations)
    out_h = window_output_size(h, pads[0], pads[1], kh, strides[0], dilations[0])
    out_w = window_output_size(w_, pads[2], pads[3], kw, strides[1], dilations[1])
    x_scale = ctx.tensors[x].scale[0]
    bias = bias_index(ctx, bias_name, x_scale, list(weights.scale), m, float_bias=node.op_type == "Conv")
    out = new_output(ctx, out_names, (n, out_h, out_w, m), params, True)
    inputs = [x, w_index] + ([bias] if bias >= 0 else [])
    ctx.add_op(op_type, inputs, [out], stride=tuple(strides), dilation=tuple(dilations), padding=pads,
             activation=activation, weights_layout="OIHW")


@onnx_op("Conv")
def import_conv(ctx, node, attrs):
    x = activation_input(ctx, node.input[0])
    w = weights_index(ctx, node.input[1])
    out_names, params, activation = quantized_output(ctx, node)
    conv(ctx, node, attrs, x, w, node.input[2] if len(node.input) > 2 else "", out_names, params, activation)


@onnx_op("ConvTranspose")
def import_conv_transpose(ctx, node, attrs):
    """QDQ ConvTranspose (any group and dilations, explicit pads and output_padding) as IR TRANSPOSE_CONV:
    weights [I, O / group, KH, KW] rearranged to TFLite's [O, KH, KW, I / group] (each group's output
    channels reading their group's input channels), the output size from ONNX's rule."""
    x_name = activation_input(ctx, node.input[0])
    w_index = weights_index(ctx, node.input[1])
    out_names, params, activation = quantized_output(ctx, node)
    x = nhwc_index(ctx, x_name)
    n, h, w_, c = ctx.tensors[x].shape
    weights = ctx.tensors[w_index]
    group = attrs.get("group", 1)
    if len(weights.shape) != 4 or weights.shape[0] != c or not isinstance(group, int) or group < 1 or c % group:
        raise Skip(f"weights {list(weights.shape)} and group {group} do not fit {c} input channels")
    dilations = list(attrs.get("dilations", [1, 1]))
    if len(dilations) != 2 or min(dilations) < 1:
        raise Skip(f"dilations {dilations}")
    if "output_shape" in attrs or attrs.get("auto_pad", "NOTSET") not in ("NOTSET", "VALID"):
        raise Skip("ConvTranspose with output_shape or auto_pad SAME is not supported (give pads)")
    _, group_oc, kh, kw = weights.shape
    oc = group_oc * group
    strides = list(attrs.get("strides", [1, 1]))
    top, bottom, left, right = window_pads(attrs, (h, w_), (kh, kw), strides, dilations)
    extra = list(attrs.get("output_padding", [0, 0]))
    if len(extra) != 2 or not all(0 <= e < max(s, d) for e, s, d in zip(extra, strides, dilations)):
        raise Skip(f"output_padding {extra} must be below the strides {strides} or dilations {dilations}")
    out_h = strides[0] * (h - 1) + extra[0] + (kh - 1) * dilations[0] + 1 - top - bottom
    out_w = strides[1] * (w_ - 1) + extra[1] + (kw - 1) * dilations[1] + 1 - left - right
    scales = list(weights.scale)
    if group == 1:
        ohwi = transpose(ctx, w_index, (1, 2, 3, 0))
    else:   # [group, I / group, O / group, KH, KW] -> [group, O / group, KH, KW, I / group]
        if len(scales) not in (1, group_oc) or (len(scales) > 1 and weights.quantized_dimension != 1):
            raise Skip(f"grouped weights quantized along axis {weights.quantized_dimension} with {len(scales)} "
                       f"scales (expected one, or one per output channel of a group along axis 1)")
        if len(scales) > 1:   # the same scale for a group-local channel in every group
            scales *= group
        zero_points = list(weights.zero_point) * (group if len(weights.zero_point) > 1 else 1)
        grouped = (group, c // group, group_oc, kh, kw)
        data = permuted_bytes(weights.data, grouped, (0, 2, 3, 4, 1), 1)
        ohwi = ctx.add_tensor(weights.name + "/grouped", (oc, kh, kw, c // group), weights.dtype, scales,
                            zero_points, data)
    # a float bias (QuantizeBias=False) rounded as a Conv's: onnxruntime adds it to its float32 ConvTranspose
    # (the whole op float there: within one quantum)
    bias = bias_index(ctx, node.input[2] if len(node.input) > 2 else "", ctx.tensors[x].scale[0], scales, oc,
                      float_bias=True)
    out = new_output(ctx, out_names, (n, out_h, out_w, oc), params, True)
    shape = ctx.add_tensor(f"{node.output[0]}/output_shape", [4], "int32",
                         data=struct.pack("<4i", n, out_h, out_w, oc))
    # padding: where the output starts inside the full transposed convolution (top, left); the
    # output shape fixes the rest (bottom / right as ONNX gives them, output_padding aside)
    options = dict(stride=tuple(strides), padding=[top, bottom, left, right], activation=activation)
    if group > 1 or dilations != [1, 1]:    # (TFLite's TRANSPOSE_CONV has neither)
        options.update(groups=group, dilation=tuple(dilations))
    ctx.add_op("TRANSPOSE_CONV", [shape, ohwi, x] + ([bias] if bias >= 0 else []), [out], **options)


@onnx_op("QLinearConv")
def import_qlinear_conv(ctx, node, attrs):
    i = list(node.input) + [""] * (9 - len(node.input))
    x = qlinear_input(ctx, i[0], i[1], i[2])
    w = weights_index(ctx, i[3], i[4], i[5])
    params = qparams(ctx, i[6], i[7], "QLinearConv output")
    conv(ctx, node, attrs, x, w, i[8], [node.output[0]], params, "NONE")


def fully_connected(ctx, x_name, w_index, bias_name, out_names, params, activation, layout, float_bias=False):
    x = ctx.values[x_name]
    x_shape = onnx_shape(ctx, x_name)
    x_index = plain_index(ctx, x_name) if len(x_shape) > 2 else x.index
    weights = ctx.tensors[w_index]
    if len(weights.shape) != 2:
        raise Skip(f"weights of shape {list(weights.shape)}: only 2-D weights are supported")
    k, n_out = (weights.shape[1], weights.shape[0]) if layout == "OI" else weights.shape
    if x_shape[-1] != k:
        raise Skip(f"input {list(x_shape)} does not fit weights {list(weights.shape)}")
    if layout == "IO" and len(weights.scale) > 1:
        weights.quantized_dimension = 1
    bias = bias_index(ctx, bias_name, ctx.tensors[x_index].scale[0], list(weights.scale), n_out, float_bias)
    out = new_output(ctx, out_names, tuple(x_shape[:-1]) + (n_out,), params, False)
    ctx.add_op("FULLY_CONNECTED", [x_index, w_index] + ([bias] if bias >= 0 else []), [out], activation=activation,
             weights_layout=layout)


@onnx_op("Gemm")
def import_gemm(ctx, node, attrs):
    if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
        raise Skip("only Gemm with transA=0, alpha=1, beta=1 is supported")
    x = activation_input(ctx, node.input[0])
    w = weights_index(ctx, node.input[1])
    out_names, params, activation = quantized_output(ctx, node)
    fully_connected(ctx, x, w, node.input[2] if len(node.input) > 2 else "", out_names, params, activation,
                          "OI" if attrs.get("transB", 0) else "IO", float_bias=True)


def batch_matmul(ctx, a_name, b_name, out_names, params, activation):
    """MatMul of two int8 activations (attention's Q K^T and A V): BATCH_MATMUL on ONNX's layout, batch
    dimensions broadcast (onnxruntime fuses DequantizeLinear x2 -> MatMul -> QuantizeLinear into its
    QLinearMatMul, whose arithmetic the lowering follows). A Transpose of B's last two axes is folded
    into it (passes.transposed_matmul_operands)."""
    a_shape, b_shape = onnx_shape(ctx, a_name), onnx_shape(ctx, b_name)
    if len(a_shape) < 2 or len(b_shape) < 2:
        raise Skip(f"MatMul of shapes {list(a_shape)} and {list(b_shape)}: a 1-D operand is not supported")
    a, b = plain_index(ctx, a_name), plain_index(ctx, b_name)
    try:
        batch = broadcast_shape(a_shape[:-2], b_shape[:-2])
    except FoldError as e:
        raise Skip(str(e)) from None
    out = new_output(ctx, out_names, batch + (a_shape[-2], b_shape[-1]), params, False)
    ctx.add_op("BATCH_MATMUL", [a, b], [out], adj_x=False, adj_y=False, activation=activation)


@onnx_op("MatMul")
def import_mat_mul(ctx, node, attrs):
    if node.input[1] not in ctx.quantized_constants and any(float_value(ctx, n) for n in node.input[:2]):
        float_mat_mul(ctx, node)
        return
    x = activation_input(ctx, node.input[0])
    if node.input[1] not in ctx.quantized_constants:
        b = activation_input(ctx, node.input[1])
        out_names, params, activation = quantized_output(ctx, node)
        batch_matmul(ctx, x, b, out_names, params, activation)
        return
    w = weights_index(ctx, node.input[1], axis=1)
    if len(ctx.tensors[w].shape) != 2:
        raise Skip(f"weights of shape {list(ctx.tensors[w].shape)}: only 2-D weights are supported")
    add = bias_add(ctx, node, ctx.tensors[w].shape[-1])
    out_names, params, activation = quantized_output(ctx, node, add.output[0] if add else None)
    fully_connected(ctx, x, w, add.input[1] if add else "", out_names, params, activation, "IO", float_bias=True)


def float_mat_mul(ctx, node):
    """MatMul of two activations, one or both float32 values (the attention of a dynamically quantized
    model): in float32, as onnxruntime's float MatMul (float32_path.py); a dequantized operand is read
    dequantized."""
    if any(n in ctx.constants or n in ctx.quantized_constants for n in node.input[:2]):
        raise Skip("a float MatMul with constant weights runs quantized only (quantize the model with it)")
    a, b = (plain_index(ctx, float32_operand(ctx, n)) for n in node.input[:2])
    a_shape, b_shape = ctx.tensors[a].shape, ctx.tensors[b].shape
    try:
        if min(len(a_shape), len(b_shape)) < 2 or a_shape[-1] != b_shape[-2]:
            raise FoldError("not matrices")
        batch = broadcast_shape(a_shape[:-2], b_shape[:-2])
    except FoldError:
        raise Skip(f"operands of shapes {list(a_shape)} and {list(b_shape)}: a batched product of rank-2 or more "
                   "matrices is supported") from None
    out = float32_result(ctx, node.output[0], list(batch) + [a_shape[-2], b_shape[-1]], False)
    ctx.add_op("BATCH_MATMUL", [a, b], [out], adj_x=False, adj_y=False, activation="NONE")


def bias_add(ctx, node, channels):
    """The Add of a float bias (one value per output column) that is the MatMul's only reader: torch.onnx's
    Linear on a 3-D input (MatMul, then Add), which onnxruntime fuses into a Gemm and then quantizes the
    bias of as it does a Gemm's; marked done, or None."""
    readers = ctx.consumers[node.output[0]]
    if len(readers) != 1 or readers[0].op_type != "Add" or node.output[0] in ctx.outputs:
        return None
    add = readers[0]
    bias = add.input[1] if len(add.input) == 2 and add.input[0] == node.output[0] else None
    constant = ctx.constants.get(bias)
    if constant is None or constant.dtype != "float32" or list(constant.shape) != [channels]:
        return None
    ctx.mark_done(add)
    return add


@onnx_op("QLinearMatMul")
def import_qlinear_mat_mul(ctx, node, attrs):
    a_s, a_z, b, b_s, b_z, y_s, y_z = node.input[1:8]
    x = qlinear_input(ctx, node.input[0], a_s, a_z)
    params = qparams(ctx, y_s, y_z, "QLinearMatMul output")
    if b not in ctx.constants:
        batch_matmul(ctx, x, qlinear_input(ctx, b, b_s, b_z), [node.output[0]], params, "NONE")
        return
    if len(ctx.constants[b].shape) != 2:
        raise Skip(f"weights of shape {list(ctx.constants[b].shape)}: batched (3-D) weights are not supported")
    w = weights_index(ctx, b, b_s, b_z, axis=1)
    fully_connected(ctx, x, w, "", [node.output[0]], params, "NONE", "IO")


@onnx_op("QGemm")
def import_qgemm(ctx, node, attrs):
    i = list(node.input) + [""] * (9 - len(node.input))
    if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0:
        raise Skip("only QGemm with transA=0 and alpha=1 is supported")
    if not i[7]:
        raise Skip("QGemm with a float output is not supported")
    x = qlinear_input(ctx, i[0], i[1], i[2])
    w = weights_index(ctx, i[3], i[4], i[5], axis=0 if attrs.get("transB", 0) else 1)
    params = qparams(ctx, i[7], i[8], "QGemm output")
    fully_connected(ctx, x, w, i[6], [node.output[0]], params, "NONE", "OI" if attrs.get("transB", 0) else "IO")
