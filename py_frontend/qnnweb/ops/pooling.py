"""AVERAGE_POOL_2D, MAX_POOL_2D, and the reductions MEAN, SUM and REDUCE_MAX (a pool whose window is the
whole image, or the reduced rows of a tensor viewed as [outer, reduced, 1, inner]).

The average follows the reference runtime of the model's format (the record's ``arithmetic``):
TFLite models LiteRT's (integer average rounded half away from zero when input and output share
quantization, else fp32); ONNX models onnxruntime's, which has two: QLinearAveragePool
(contrib_ops/cpu/quantization/qlinear_pool.cc) dequantizes every tap to float32, sums, divides and
quantizes with round half to even; QLinearGlobalAveragePool, and QLinearAveragePool when its window
is the whole unpadded image (it falls back to the global kernel), is MLAS's integer sum times
float32(x_scale / (y_scale * n)) (mlas/lib/qlgavgpool.cpp). A float GlobalAveragePool the quantizer left
unquantized, of a float op's values (the op's ``float_table``: its float32 value of each input byte), is
MLAS's float global pool (four lanes, then the last taps, divided) then QuantizeLinear (arithmetic 5)."""

import math

from ..graph import window_output_size
from ..numerics.float32 import float32
from .registry import Step, Unsupported, lowering
from .common import activation_range, constant_ints, reduction_axes, require_int8, require_rank
from .reduce import is_float32_reduction, lower_float32_reduction


ARITHMETIC_TFLITE, ARITHMETIC_ONNX_FLOAT, ARITHMETIC_ONNX_GLOBAL, ARITHMETIC_XNNPACK_SUM, ARITHMETIC_XNNPACK_MEAN, \
    ARITHMETIC_ONNX_FLOAT_TABLE = 0, 1, 2, 3, 4, 5


def _arithmetic(graph, x, kernel, padding):
    if getattr(graph, "format", "tflite") != "onnx":
        return ARITHMETIC_TFLITE
    whole_image = len(x.shape) == 4 and tuple(kernel) == (x.shape[1], x.shape[2]) and not any(padding)
    return ARITHMETIC_ONNX_GLOBAL if whole_image else ARITHMETIC_ONNX_FLOAT


def _avgpool(graph, op, x, y, kernel, stride, padding, activation, count_include_pad=False, view=None,
             arithmetic=None, float_table=None, output_scale=None):
    """``view``: the input as [N, H, W, C] when it is not a 4-D tensor (MEAN over other axes);
    ``float_table``: 256 float32 (bytes) by input byte, the taps' values, or 256 per channel (arithmetic 5);
    ``output_scale``: the scale the average is quantized with, when it is not the output's (SUM's)."""
    if float_table is not None:
        if len(float_table) % 1024 or len(float_table) // 1024 not in (1, x.shape[-1] if x.shape else 1):
            raise Unsupported("a float pool's table must hold 256 float32, or 256 per channel")
        if view is not None or len(x.shape) != 4 or tuple(kernel) != tuple(x.shape[1:3]) or any(padding):
            raise Unsupported("a float pool of a float op's values must be a global pool (the whole image, no padding)")
        arithmetic = ARITHMETIC_ONNX_FLOAT_TABLE
    tables = len(float_table) // 1024 if float_table is not None else 0
    x_scale, x_zp = require_int8(x, "input")
    y_scale, y_zp = require_int8(y, "output")
    y_scale = y_scale if output_scale is None else output_scale
    if view is None:
        require_rank(x, 4, "input")
    n, in_h, in_w, c = view or x.shape
    out_h, out_w = (y.shape[1], y.shape[2]) if len(y.shape) == 4 and view is None else (1, 1)
    if y.size != n * out_h * out_w * c:
        raise Unsupported(f"output {list(y.shape)} does not fit input {list(x.shape)}")
    top, bottom, left, right = padding
    if top >= kernel[0] or left >= kernel[1]:
        raise Unsupported("padding as large as the window is not supported")
    lo, hi = activation_range(activation, y_scale, y_zp)
    return [Step("avgpool2d", dict(
        input=op.inputs[0], output=op.outputs[0], batch=n, input_height=in_h, input_width=in_w, channels=c,
        output_height=out_h, output_width=out_w, kernel_height=kernel[0], kernel_width=kernel[1],
        stride_height=stride[0], stride_width=stride[1], padding_top=top, padding_left=left,
        scale=x_scale / y_scale, input_zero_point=x_zp, output_zero_point=y_zp, output_min=lo, output_max=hi,
        count_include_pad=1 if count_include_pad else 0, arithmetic=_arithmetic(graph, x, kernel, padding) if arithmetic is None else arithmetic,
        input_scale=x_scale, output_scale=y_scale, table_channels=tables, **({} if tables else {"table": 0})),
        {"table": float_table} if tables else {})]


@lowering("AVERAGE_POOL_2D")
def lower_average_pool(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    require_rank(y, 4, "output")
    o = op.options
    return _avgpool(graph, op, x, y, o["kernel"], o["stride"], o["padding"], o["activation"],
                    bool(o.get("count_include_pad", False)), float_table=o.get("float_table"))


@lowering("MAX_POOL_2D")
def lower_max_pool(graph, op):
    """Padded taps are ignored; ONNX ceil_mode is more bottom/right padding (the output size must
    match the floor arithmetic with the given padding)."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_quantization = require_int8(x, "input")
    y_scale, y_zp = require_int8(y, "output")
    if (y_scale, y_zp) != x_quantization:
        raise Unsupported("input and output quantization differ (MAX_POOL_2D needs them equal)")
    require_rank(x, 4, "input")
    require_rank(y, 4, "output")
    o = op.options
    (kh, kw), (sh, sw) = o["kernel"], o["stride"]
    dh, dw = o.get("dilation", (1, 1))
    top, bottom, left, right = o["padding"]
    n, in_h, in_w, c = x.shape
    out_n, out_h, out_w, out_c = y.shape
    expected_h = window_output_size(in_h, top, bottom, kh, sh, dh)
    expected_w = window_output_size(in_w, left, right, kw, sw, dw)
    if (out_n, out_c) != (n, c) or (expected_h, expected_w) != (out_h, out_w):
        raise Unsupported(f"output {list(y.shape)} does not match the window arithmetic "
                          f"([{n}, {expected_h}, {expected_w}, {c}])")
    if min(top, bottom, left, right) < 0:
        raise Unsupported("negative padding")
    lo, hi = activation_range(o.get("activation", "NONE"), y_scale, y_zp)
    return [Step("maxpool2d", dict(
        input=op.inputs[0], output=op.outputs[0], batch=n, input_height=in_h, input_width=in_w, channels=c,
        output_height=out_h, output_width=out_w, kernel_height=kh, kernel_width=kw, stride_height=sh,
        stride_width=sw, dilation_height=dh, dilation_width=dw, padding_top=top, padding_left=left,
        output_min=lo, output_max=hi))]


def _reduction_view(graph, op):
    """(outer, reduced, inner): the input viewed as [outer, reduced, inner] around its reduced axes, which
    must be adjacent (passes.reductions_over_adjacent_axes moves the others together)."""
    x = graph.tensors[op.inputs[0]]
    axes = reduction_axes(graph, op)
    if axes != list(range(axes[0], axes[-1] + 1)):
        raise Unsupported(f"the {op.type.lower()} over axes {axes}: only adjacent axes are supported")
    return (math.prod(x.shape[:axes[0]]), math.prod(x.shape[axes[0]:axes[-1] + 1]),
            math.prod(x.shape[axes[-1] + 1:]))


@lowering("MEAN")
def lower_mean(graph, op):
    """The mean over any axes that are adjacent in the input (height and width; channels; all of them):
    the input viewed as [outer, reduced, 1, inner], one average pool over the reduced rows. LiteRT's
    XNNPACK delegate takes every int8 MEAN (XNNPACK's static mean, tests/tflite/test_tflite_mean.py);
    over height and width of a 4-D tensor it is a global average pool, as before. A float32 MEAN is
    reduce.py's."""
    if is_float32_reduction(graph, op):
        return lower_float32_reduction(graph, op)
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    outer, reduced, inner = _reduction_view(graph, op)
    # ONNX ReduceMean (left in float by quantize_static): onnxruntime's float mean of the dequantized taps
    onnx = ARITHMETIC_ONNX_FLOAT if getattr(graph, "format", "tflite") == "onnx" else None
    if len(x.shape) == 4 and sorted({a % 4 for a in constant_ints(graph, op.inputs[1], "axes")}) == [1, 2]:
        _, h, w, _ = x.shape
        return _avgpool(graph, op, x, y, (h, w), (h, w), (0, 0, 0, 0), "NONE", arithmetic=onnx)
    return _avgpool(graph, op, x, y, (reduced, 1), (reduced, 1), (0, 0, 0, 0), "NONE",
                    view=(outer, reduced, 1, inner), arithmetic=ARITHMETIC_XNNPACK_MEAN if onnx is None else onnx)


@lowering("SUM")
def lower_sum(graph, op):
    """TFLite's int8 SUM (a softmax written out sums its exponentials): XNNPACK's static sum, which LiteRT's
    delegate takes: the integer sum times float32(x_scale / y_scale), plus the zero points folded into a
    float32 bias, rounded half to even (the avgpool2d record's arithmetic 3). ONNX's ReduceSum left in
    float by quantize_static (MobileViTv2's linear attention): onnxruntime's float32 sum of the dequantized
    taps, quantized: the float average pool's sum, its quotient by the count quantized with the output
    scale divided by the count (within one quantum where onnxruntime's vectorized sum, or the two
    divisions, round a tie otherwise). A float32 SUM is reduce.py's."""
    if is_float32_reduction(graph, op):
        return lower_float32_reduction(graph, op)
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    outer, reduced, inner = _reduction_view(graph, op)
    view = (outer, reduced, 1, inner)
    if getattr(graph, "format", "tflite") == "onnx":
        y_scale, _ = require_int8(y, "output")
        return _avgpool(graph, op, x, y, (reduced, 1), (reduced, 1), (0, 0, 0, 0), "NONE", view=view,
                        arithmetic=ARITHMETIC_ONNX_FLOAT, output_scale=float32(y_scale / reduced))
    return _avgpool(graph, op, x, y, (reduced, 1), (reduced, 1), (0, 0, 0, 0), "NONE", view=view,
                    arithmetic=ARITHMETIC_XNNPACK_SUM)


@lowering("REDUCE_MAX")
def lower_reduce_max(graph, op):
    """TFLite's int8 REDUCE_MAX (a softmax written out subtracts it): the largest stored value, one max
    pool over the reduced rows of the input viewed as [outer, reduced, 1, inner]. LiteRT refuses an
    output quantized otherwise than the input, and so does qnnweb."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if require_int8(x, "input") != require_int8(y, "output"):
        raise Unsupported("input and output quantization differ (REDUCE_MAX needs them equal)")
    outer, reduced, inner = _reduction_view(graph, op)
    if y.size != outer * inner:
        raise Unsupported(f"output {list(y.shape)} does not fit input {list(x.shape)}")
    return [Step("maxpool2d", dict(
        input=op.inputs[0], output=op.outputs[0], batch=outer, input_height=reduced, input_width=1, channels=inner,
        output_height=1, output_width=1, kernel_height=reduced, kernel_width=1, stride_height=reduced,
        stride_width=1, dilation_height=1, dilation_width=1, padding_top=0, padding_left=0, output_min=-128,
        output_max=127))]
