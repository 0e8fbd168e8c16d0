"""AveragePool, GlobalAveragePool, MaxPool and their QLinear forms; ReduceMean and ReduceSum."""

from .attributes import window_pads
from .constants import int32_constant
from .float32_path import float32_result
from .float_reduce import import_float_reduction, reduced_shape, reduction_axes
from .layout import NCHW_TO_NHWC, nhwc_index, onnx_shape, plain_index
from .quantization import (activation_input, float_value, new_output, outputs_like_input, qlinear_input, qparams,
                           quantized_output, requantize_to)
from .registry import onnx_op
from .skip import Skip


def add_pool(ctx, op_type, node, attrs, x_name, out_names, params, activation, global_pool=False, **ir_options):
    """``ir_options``: more IR options (a float pool's ``float_table``)."""
    x = nhwc_index(ctx, x_name)
    n, h, w, c = ctx.tensors[x].shape
    if global_pool:
        kernel, strides, pads, ceil_mode = [h, w], [h, w], [0, 0, 0, 0], 0
    else:
        kernel = attrs.get("kernel_shape")
        if not kernel or len(kernel) != 2:
            raise Skip("only 2-D pooling is supported")
        strides = attrs.get("strides", [1, 1])
        dilations = list(attrs.get("dilations", [1, 1]))
        if dilations != [1, 1] and op_type != "MAX_POOL_2D":
            raise Skip("dilated average pooling is not supported")
        if dilations != [1, 1] and attrs.get("auto_pad", "NOTSET") in ("SAME_UPPER", "SAME_LOWER"):
            # onnxruntime pads such pools as if undilated, so its output is smaller than the model
            # (and ONNX shape inference) says
            raise Skip("dilated MaxPool with auto_pad SAME: onnxruntime's output shape disagrees with the model's")
        pads = window_pads(attrs, (h, w), kernel, strides, dilations)
        ceil_mode = attrs.get("ceil_mode", 0)
    if global_pool:
        dilations = [1, 1]
    sizes = []
    for i, (size, before, after) in enumerate(((h, pads[0], pads[1]), (w, pads[2], pads[3]))):
        span = size + before + after - ((kernel[i] - 1) * dilations[i] + 1)
        out = (-(-span // strides[i]) if ceil_mode else span // strides[i]) + 1
        if ceil_mode and (out - 1) * strides[i] >= size + before:
            out -= 1
        sizes.append(out)
        extra = max((out - 1) * strides[i] + (kernel[i] - 1) * dilations[i] + 1 - (size + before + after), 0)
        if extra:
            pads[2 * i + 1] += extra
    options = dict(kernel=tuple(kernel), stride=tuple(strides), padding=pads, activation=activation)
    if op_type == "MAX_POOL_2D":
        options["dilation"] = tuple(dilations)
    if op_type == "AVERAGE_POOL_2D":
        # with ceil_mode the extra bottom/right padding counts too: onnxruntime's divisor, which
        # the kernel follows (ONNX arithmetic, avgpool2d.c)
        options["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
    out = new_output(ctx, out_names, (n, sizes[0], sizes[1], c), params, True)
    ctx.add_op(op_type, [x], [out], **options, **ir_options)


@onnx_op("AveragePool", "GlobalAveragePool")
def import_average_pool(ctx, node, attrs):
    if node.op_type == "GlobalAveragePool" and float_value(ctx, node.input[0]):
        float_global_average_pool(ctx, node)
        return
    x = activation_input(ctx, node.input[0])
    out_names, params, activation = quantized_output(ctx, node)
    add_pool(ctx, "AVERAGE_POOL_2D", node, attrs, x, out_names, params, activation,
             global_pool=node.op_type == "GlobalAveragePool")


def float_global_average_pool(ctx, node):
    """GlobalAveragePool of a float32 value (a dynamically quantized ConvNeXt's head): the MEAN of each channel
    of the NCHW tensor, summed as MLAS's global pooling kernel sums it (ops/reduce.py)."""
    shape = onnx_shape(ctx, node.input[0])
    if len(shape) < 3:
        raise Skip(f"input of shape {list(shape)}: a GlobalAveragePool needs rank 3 or more")
    out = float32_result(ctx, node.output[0], list(shape[:2]) + [1] * (len(shape) - 2), False)
    axes = int32_constant(ctx, f"{node.output[0]}/axes", list(range(2, len(shape))))
    ctx.add_op("MEAN", [plain_index(ctx, node.input[0]), axes], [out], keep_dims=True, arithmetic="onnxruntime_pool")


@onnx_op("MaxPool")
def import_max_pool(ctx, node, attrs):
    if len(node.output) > 1 and node.output[1]:
        raise Skip("MaxPool with an Indices output is not supported")
    x = activation_input(ctx, node.input[0])
    out_names, params, activation = outputs_like_input(ctx, node, x)
    t = ctx.tensors[ctx.values[x].index]
    if params[:2] != (t.scale, t.zero_point):
        # QDQ with another output quantization: onnxruntime pools in float and quantizes again,
        # which is the int8 pool (max commutes with quantization) and a requantization
        pooled = node.output[0] + "/pooled"
        add_pool(ctx, "MAX_POOL_2D", node, attrs, x, [pooled], (t.scale, t.zero_point, "int8"), "NONE")
        requantize_to(ctx, pooled, out_names, params, activation)
    else:
        add_pool(ctx, "MAX_POOL_2D", node, attrs, x, out_names, params, activation)


@onnx_op("QLinearAveragePool", "QLinearGlobalAveragePool")
def import_qlinear_average_pool(ctx, node, attrs):
    if attrs.get("channels_last", 0):
        raise Skip(f"channels_last {node.op_type} is not supported")
    x = qlinear_input(ctx, node.input[0], node.input[1], node.input[2])
    params = qparams(ctx, node.input[3], node.input[4] if len(node.input) > 4 else "", "output")
    add_pool(ctx, "AVERAGE_POOL_2D", node, attrs, x, [node.output[0]], params, "NONE",
             global_pool=node.op_type == "QLinearGlobalAveragePool")


@onnx_op("ReduceMean", "ReduceSum")
def import_reduce_mean(ctx, node, attrs):
    """ReduceMean / ReduceSum as quantize_static leaves them (in float between a DequantizeLinear and the
    next QuantizeLinear: squeeze-excite blocks, pooled heads, MobileViTv2's linear attention) over any axes:
    the IR MEAN / SUM, as onnxruntime's float kernels compute them (dequantized taps summed in float32,
    divided for the mean, quantized half to even; within one quantum where its float sum rounds
    otherwise). A reduction of a float32 activation (a float op's result, the model's float input) runs in
    float32 instead (float_reduce.py)."""
    if import_float_reduction(ctx, node, attrs):
        return
    x = activation_input(ctx, node.input[0])
    out_names, params, activation = quantized_output(ctx, node)
    if activation != "NONE":
        raise Skip(f"a {activation} after {node.op_type} is not supported")
    axes = reduction_axes(ctx, node, attrs, len(onnx_shape(ctx, x)))
    keep = attrs.get("keepdims", 1)
    # a feature map is averaged in NHWC when the output keeps its rank (axes apart there are moved
    # together by passes.reductions_over_adjacent_axes); else in ONNX's own layout (one transpose back)
    nhwc = bool(ctx.values[x].nhwc and keep)
    index, ir_axes = ((ctx.values[x].index, sorted(NCHW_TO_NHWC.index(a) for a in axes)) if nhwc
                      else (plain_index(ctx, x), axes))
    out = new_output(ctx, out_names, reduced_shape(ctx.tensors[index].shape, ir_axes, keep), params, nhwc)
    ctx.add_op("MEAN" if node.op_type == "ReduceMean" else "SUM",
               [index, int32_constant(ctx, f"{node.output[0]}/axes", ir_axes)], [out], keep_dims=bool(keep))
