"""PRELU: y = x >= 0 ? x : slope * x. TFLite (slopes quantized per tensor, int8 / uint8): as its
reference kernel computes it (ai-edge-litert runs it; XNNPACK takes no quantized PRELU), two fixed-point
multipliers, input_scale / output_scale and input_scale * slope_scale / output_scale. float32 slopes
(ONNX PRelu between DequantizeLinear and QuantizeLinear; TFLite PRELU that ai-edge-quantizer leaves in
float between DEQUANTIZE and QUANTIZE, as in MediaPipe's Face Mesh): the float op in float32, quantized
with rounding half to even (onnxruntime's QuantizeLinear and LiteRT's QUANTIZE agree on it). A
function of one int8 value per slope, so one 256-entry table per channel (lut_channels), or one table
(lut) when every channel has the same slope."""

import struct

from ..graph import DTYPE_SIZES
from ..numerics.byte_values import RANGES, input_values
from ..numerics.float32 import float32
from ..numerics.onnxruntime import float_table, make_table_onnxruntime, prelu_function
from ..numerics.tflite import multiply_by_quantized_multiplier, quantize_multiplier
from .registry import Step, Unsupported, lowering
from .common import activation_range, require_byte_quantized

MAX_CHANNELS = 1 << 12   # one 256-entry table per channel


def prelu_table(x_dtype, x_scale, x_zp, y_dtype, y_scale, y_zp, slope, slope_scale, slope_zp):
    """256 bytes for one quantized slope value (TFLite's reference PRELU, kernels/prelu.cc). Its real
    multipliers are products and quotients of the float32 scales computed in float32 (then widened):
    where that rounds to a tie (2.5), the fixed point rounds the tie, as ai-edge-litert does."""
    m1, s1 = quantize_multiplier(float32(x_scale / y_scale))
    m2, s2 = quantize_multiplier(float32(float32(x_scale * slope_scale) / y_scale))
    lo, hi = RANGES[y_dtype]
    table = bytearray(256)
    for byte, v in enumerate(input_values(x_dtype)):
        v -= x_zp
        if v >= 0:
            q = multiply_by_quantized_multiplier(v, m1, s1)
        else:
            q = multiply_by_quantized_multiplier(v * (slope - slope_zp), m2, s2)
        table[byte] = min(max(q + y_zp, lo), hi) & 0xFF
    return bytes(table)


@lowering("PRELU")
def lower_prelu(graph, op):
    """inputs: input, alpha (a constant of the input's type, quantized per tensor, broadcast against the
    input: one slope, or one per channel, the innermost dimension)."""
    x, alpha, y = (graph.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    x_scale, x_zp = require_byte_quantized(x, "input")
    float_output = y.dtype == "float32" and alpha.is_constant and alpha.dtype == "float32"
    y_scale, y_zp = (None, None) if float_output else require_byte_quantized(y, "output")
    if float_output:   # a model's last op in float (ONNX QOperator): float32 tables
        table = _float_output_tables(x, op.options.get("before", ()), op.options.get("then", ()))
    elif alpha.is_constant and alpha.dtype == "float32" and not alpha.quantized:
        table = _float_slope_tables(x, y, op.options.get("activation", "NONE"), op.options.get("before", ()),
                                    op.options.get("then", ()))
    elif alpha.is_constant and alpha.dtype == x.dtype:
        a_scale, a_zp = require_byte_quantized(alpha, "alpha")

        def table(slopes):
            return prelu_table(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp, slopes[0], a_scale, a_zp)
    else:
        raise Unsupported(f"alpha '{alpha.name}' must be a constant of the input's type ({x.dtype}), or float32")
    if list(x.shape) != list(y.shape):
        raise Unsupported(f"input {list(x.shape)} and output {list(y.shape)} differ")
    shape = [d for d in alpha.shape]
    while shape and shape[0] == 1:
        shape.pop(0)
    channels = x.shape[-1] if x.shape else 1
    if len(shape) > 1 or (shape and shape[0] not in (1, channels)) or len(alpha.shape) > max(len(x.shape), 1):
        raise Unsupported(f"alpha of shape {list(alpha.shape)} varies over more than the channels of the input "
                          f"{list(x.shape)}")
    data = bytes(alpha.data)
    if len(data) != alpha.size * DTYPE_SIZES[alpha.dtype]:
        raise Unsupported(f"alpha '{alpha.name}' has {len(data)} bytes of data for shape {list(alpha.shape)}")
    if alpha.size > MAX_CHANNELS:
        raise Unsupported(f"{alpha.size} slopes; at most {MAX_CHANNELS} are supported")
    if alpha.dtype == "float32":
        slopes = list(struct.unpack(f"<{alpha.size}f", data))
    else:
        slopes = [b - 256 if alpha.dtype == "int8" and b >= 128 else b for b in data]
    # each channel's slopes, of this PRelu and of those composed after it (one, or one per channel)
    further = [o["slopes"] for t, o in op.options.get("then", ()) if t == "PRELU"]
    if any(len(f) not in (1, channels) for f in further):
        raise Unsupported(f"a further PRelu's slopes are neither one nor one per channel ({channels})")
    count = max([len(slopes)] + [len(f) for f in further])
    keys = [tuple(v[c if len(v) > 1 else 0] for v in [slopes] + further) for c in range(count)]
    tables = {k: table(k) for k in set(keys)}
    if len(tables) == 1:
        return [Step("lut_f32" if float_output else "lut", dict(input=op.inputs[0], output=op.outputs[0], size=x.size),
                     {"table": tables[keys[0]]})]
    if channels > MAX_CHANNELS:
        raise Unsupported(f"{channels} channels; at most {MAX_CHANNELS} slopes are supported")
    return [Step("lut_channels", dict(input=op.inputs[0], output=op.outputs[0], pixels=x.size // channels,
                                      channels=channels, output_bytes=4 if float_output else 1),
                 {"tables": b"".join(tables[k] for k in keys)})]


def _float_output_tables(x, before, then):
    """256 float32 values per channel's slopes: the float32 PRelu (and the ops around it) of each
    dequantized input."""
    function = prelu_function(before, then)
    return lambda slopes: float_table(x.dtype, x.scale[0], x.zero_point[0], lambda v: function(v, slopes))


def _float_slope_tables(x, y, activation, before=(), then=()):
    """The table of one float32 slope: the float unary ops ``before`` ([(op type, options)], ONNX's float
    ops in a row before it), the float32 PRelu, then the ops ``then`` after it, of each dequantized input
    value, quantized as QuantizeLinear / QUANTIZE do (with a fused Relu / Clip as the output's clamp)."""
    x_scale, x_zp = x.scale[0], x.zero_point[0]
    y_scale, y_zp = y.scale[0], y.zero_point[0]
    lo, hi = activation_range(activation, y_scale, y_zp) if activation != "NONE" else (None, None)
    function = prelu_function(before, then)

    def table(slopes):
        return make_table_onnxruntime(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp,
                                      lambda v: function(v, slopes), lo, hi)
    return table
