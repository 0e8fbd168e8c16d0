"""RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (TFLite, NHWC int8 / uint8): separable tables for the
resize record, computed as LiteRT's default kernels compute their source pixels, so the kernel is
bit-exact with them (tests/tflite/test_tflite_resize.py):

- bilinear: XNNPACK's ``xnn_indirection_init_resize_bilinear2d_hwc_q11`` (float32 source coordinates,
  weights rounded to 1/2048ths), the three modes TFLite's delegate maps its options to: align_corners,
  half_pixel_centers, and neither (TensorFlow's legacy mode);
- nearest: TFLite's builtin kernel: its optimized 16.16 fixed-point rule when neither option is set,
  else the reference's float32 rule (``GetNearestNeighbor``: floor, or round half away from zero with
  align_corners); zero weights make the record a gather;
- ONNX Resize: onnxruntime's source coordinates (half_pixel, pytorch_half_pixel, asymmetric,
  align_corners; float32) and nearest modes; linear with the arithmetic onnxruntime uses for the form
  (``ARITHMETIC``): its float32 bilinear of the dequantized values (QDQ), of the int8 values truncated
  (QOperator in NCHW) or its 1/1024 integer bilinear (QOperator in NHWC), bit-exact
  (tests/onnx/test_onnx_resize.py).
"""

import math
import struct
from array import array

from ..numerics.float32 import float32 as f32  # every step of the reference runtimes' coordinate arithmetic
from .registry import Step, Unsupported, lowering
from .common import require_int8
from .strided_copy import require_moved_values

MAX_SIZE = 1 << 24  # XNNPACK's bound on every height and width

# The axis tables below are flat int32 arrays, (first, second, weight) per output position: a huge
# (or corrupt) output size costs 12 bytes a position, not a Python tuple of three ints (~150).


def bilinear_axis(input_size, output_size, align_corners, half_pixel_centers):
    """(first index, second index, alpha in 1/2048ths) per output position, as XNNPACK's q11 indirection."""
    adjustment = 1 if align_corners and output_size != 1 else 0
    scale = f32(f32(input_size - adjustment) / f32(output_size - adjustment))
    last = input_size - 1
    entries = array("i")
    for o in range(output_size):
        if align_corners or not half_pixel_centers:
            v = f32(o * scale)
        else:  # offset = 0.5 * scale - 0.5, in float32
            v = f32(f32(o * scale) + f32(0.5 * scale - 0.5))
            v = min(max(v, 0.0), float(last))
        first = int(v)
        alpha = f32(v - first)
        entries.extend((first, min(first + 1, last), round(alpha * 2048.0)))  # lrintf: to nearest-even
    return entries


def nearest_axis(input_size, output_size, align_corners, half_pixel_centers):
    """(index, index, 0) per output position, as TFLite's builtin RESIZE_NEAREST_NEIGHBOR."""
    if not align_corners and not half_pixel_centers:
        # optimized_ops::ResizeNearestNeighbor: 16.16 fixed point in int32
        scale = (input_size << 16) // output_size + 1
        indices = [min(_int32(o * scale) >> 16, input_size - 1) for o in range(output_size)]
    else:
        scale = (f32(f32(input_size - 1) / f32(output_size - 1)) if align_corners and output_size > 1
                 else f32(f32(input_size) / f32(output_size)))
        offset = 0.5 if half_pixel_centers else 0.0
        indices = []
        for o in range(output_size):
            v = f32(f32(o + offset) * scale)
            i = int(v + 0.5) if align_corners else int(v // 1)   # TfLiteRound (v >= 0 here) / floor
            i = min(i, input_size - 1)
            indices.append(max(i, 0) if half_pixel_centers else i)
    return array("i", (v for i in indices for v in (i, i, 0)))


def onnx_source(o, input_size, output_size, scale, mode):
    """ONNX's source coordinate of output position o, in float32 as onnxruntime's upsamplebase.h."""
    x = f32(o)
    if mode == "asymmetric":
        return f32(x / scale)
    if mode == "align_corners":
        return 0.0 if output_size == 1 else f32(f32(x * (input_size - 1)) / (output_size - 1))
    if mode == "pytorch_half_pixel" and output_size == 1:
        return 0.0
    return f32(f32(f32(x + 0.5) / scale) - 0.5)       # half_pixel, pytorch_half_pixel


# onnxruntime 1.32 takes a source coordinate within 1e-6 of a half as a tie (2 / (4/7 in float32) =
# 3.4999998 rounds as 3.5 does): measured for every size pair up to 40 and every mode
# (tests/onnx/test_onnx_resize.py); its WebGPU kernel states the same rule (onnxruntime PR 28757)
NEAREST_TIE = f32(1e-6)


def onnx_nearest_axis(input_size, output_size, scale, mode, nearest_mode):
    """(index, index, 0) per output position: onnxruntime's nearest pixel, clamped into the input."""
    entries = array("i")
    for o in range(output_size):
        v = onnx_source(o, input_size, output_size, scale, mode)
        floor = math.floor(v)
        if nearest_mode == "floor":
            i = floor
        elif nearest_mode == "ceil":
            i = math.ceil(v)
        elif abs(v - floor - 0.5) <= NEAREST_TIE:
            i = floor if nearest_mode == "round_prefer_floor" else floor + 1
        else:
            i = int(math.copysign(math.floor(abs(v) + 0.5), v))   # std::round
        i = min(max(i, 0), input_size - 1)
        entries.extend((i, i, 0))
    return entries


# The resize record's arithmetic (qnnweb.h, enum qnn_resize_arithmetic), by the ONNX Resize's form:
# "float" for QDQ (onnxruntime resizes the dequantized floats; "float_output" when that float result is
# the model's output, not quantized again), "float_truncate" and "q10" for QOperator's int8 Resize in
# NCHW and in NHWC (importers/onnx/resize.py says which onnxruntime runs)
ARITHMETIC = {"xnnpack": 0, "float": 1, "float_truncate": 2, "q10": 3, "float_output": 4}


def _float_bits(v):
    return struct.unpack("<i", struct.pack("<f", v))[0]


def onnx_bilinear_axis(input_size, output_size, scale, mode, arithmetic="float"):
    """(first, second, weight of the second) per output position, as onnxruntime's SetupUpsampleBilinear
    (float32 source coordinate clamped into the input; d = its distance from the first) and its integer
    twin (d in 1/1024ths, truncated): the weight as float32 bits, or in 1/1024ths for "q10"."""
    entries = array("i")
    for o in range(output_size):
        v = f32(onnx_source(o, input_size, output_size, scale, mode)) if scale != 1 else float(o)
        v = min(max(v, 0.0), float(input_size - 1))
        first = min(int(v), input_size - 1)
        second = min(first + 1, input_size - 1)
        if arithmetic == "q10":
            d = 512 if first == second else int(f32(v * 1024.0)) - first * 1024
        else:
            d = _float_bits(0.5 if first == second else f32(v - first))
        entries.extend((first, second, d))
    return entries


def _int32(v):
    return (v + (1 << 31)) % (1 << 32) - (1 << 31)


def _table(entries):
    return entries.tobytes()   # little-endian, as WebAssembly


@lowering("RESIZE_BILINEAR", "RESIZE_NEAREST_NEIGHBOR")
def lower_resize(graph, op):
    x, size, y = (graph.tensors[i] for i in (*op.inputs, *op.outputs))
    # the kernel interpolates int8 values; a nearest-neighbour gather moves any byte
    if x.dtype != "int8" and not (op.type == "RESIZE_NEAREST_NEIGHBOR" and x.dtype == "uint8"):
        raise Unsupported(f"{x.dtype} input; qnnweb resizes int8 tensors (and uint8 ones to the nearest neighbour)")
    onnx_mode = op.options.get("coordinate_transformation_mode")   # set for ONNX Resize (importers/onnx/resize.py)
    arithmetic = op.options.get("onnx_arithmetic", "float") if onnx_mode is not None and op.type == "RESIZE_BILINEAR" \
        else "xnnpack"
    if arithmetic == "float" and y.dtype == "float32":
        arithmetic = "float_output"
    elif arithmetic != "float":   # "float" quantizes with the output's own parameters (its QuantizeLinear)
        require_moved_values(x, y, op.type)
    if len(x.shape) != 4 or len(y.shape) != 4:
        raise Unsupported(f"input rank {len(x.shape)}, output rank {len(y.shape)}; expected NHWC tensors")
    if not size.is_constant or size.dtype != "int32" or size.size != 2:
        raise Unsupported("the size input must be a constant of two int32 values (height, width)")
    out_h, out_w = struct.unpack("<2i", bytes(size.data))
    n, in_h, in_w, c = x.shape
    if tuple(y.shape) != (n, out_h, out_w, c):
        raise Unsupported(f"output {list(y.shape)}; the size input says {[n, out_h, out_w, c]}")
    if not all(1 <= d <= MAX_SIZE for d in (in_h, in_w, out_h, out_w)):
        raise Unsupported(f"heights and widths must be in [1, {MAX_SIZE}]")
    if onnx_mode is not None:
        (scale_h, scale_w), nearest = op.options["scales"], op.options.get("nearest_mode")
        if op.type == "RESIZE_BILINEAR":
            rows, columns = (onnx_bilinear_axis(in_h, out_h, scale_h, onnx_mode, arithmetic),
                             onnx_bilinear_axis(in_w, out_w, scale_w, onnx_mode, arithmetic))
        else:
            rows, columns = (onnx_nearest_axis(in_h, out_h, scale_h, onnx_mode, nearest),
                             onnx_nearest_axis(in_w, out_w, scale_w, onnx_mode, nearest))
    else:
        align, half = op.options.get("align_corners", False), op.options.get("half_pixel_centers", False)
        if align and half:
            raise Unsupported("align_corners and half_pixel_centers are both set (TFLite refuses that too)")
        axis = bilinear_axis if op.type == "RESIZE_BILINEAR" else nearest_axis
        rows, columns = axis(in_h, out_h, align, half), axis(in_w, out_w, align, half)
    fields = dict(input=op.inputs[0], output=op.outputs[0], batch=n, input_height=in_h, input_width=in_w,
                  channels=c, output_height=out_h, output_width=out_w, rows=0, columns=0,
                  arithmetic=ARITHMETIC[arithmetic], scale=1.0, zero_point=0, output_scale=1.0, output_zero_point=0)
    if arithmetic == "float":
        (x_scale, x_zp), (y_scale, y_zp) = require_int8(x, "input"), require_int8(y, "output")
        fields.update(scale=x_scale, zero_point=x_zp, output_scale=y_scale, output_zero_point=y_zp)
    elif arithmetic == "float_output":
        x_scale, x_zp = require_int8(x, "input")
        fields.update(scale=x_scale, zero_point=x_zp)
    return [Step("resize", fields, constants={"rows": _table(rows), "columns": _table(columns)})]
