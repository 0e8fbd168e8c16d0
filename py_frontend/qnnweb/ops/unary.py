"""Unary int8 / uint8 ops through a 256-entry lookup table (the ``lut`` record).

The table is computed here, at lowering: for each of the 256 input values v,
    real = function((v - input_zero_point) * input_scale)              (Python float, float64)
    q    = round_half_to_even(real / output_scale) + output_zero_point  (Python's round())
clamped to the output type's range (and the fused activation's, when an op has one). Requantizing
conversions (QUANTIZE between uint8 and int8) follow the kernels' fp32 REQUANTIZE instead:
float32(v - zp_in) * float32(scale_in / scale_out), rounded half to even: with equal scales that is
exactly v ^ 0x80.
"""

import math

from . import Step, Unsupported, lowering
from .common import activation_range, float32, require_byte_quantized

RANGES = {"int8": (-128, 127), "uint8": (0, 255)}


def _input_values(dtype):
    """The value of each table index (the input byte) for int8 / uint8 inputs."""
    return [b - 256 if dtype == "int8" and b >= 128 else b for b in range(256)]


def make_table(x_dtype, x_scale, x_zp, y_dtype, y_scale, y_zp, function, lo=None, hi=None):
    """256 bytes: table[byte] = the output byte for the input byte."""
    type_lo, type_hi = RANGES[y_dtype]
    lo = type_lo if lo is None else max(lo, type_lo)
    hi = type_hi if hi is None else min(hi, type_hi)
    table = bytearray(256)
    for byte, v in enumerate(_input_values(x_dtype)):
        real = function((v - x_zp) * x_scale)
        scaled = real / y_scale
        if math.isnan(scaled):
            raise Unsupported("the function gives NaN inside the input's range")
        q = lo if scaled == -math.inf else hi if scaled == math.inf else round(scaled) + y_zp
        table[byte] = min(max(q, lo), hi) & 0xFF
    return bytes(table)


def requantize_table(x_dtype, x_scale, x_zp, y_dtype, y_scale, y_zp):
    """int8 / uint8 -> int8 / uint8 as the REQUANTIZE kernel computes it (fp32)."""
    scale = float32(x_scale / y_scale)
    lo, hi = RANGES[y_dtype]
    table = bytearray(256)
    for byte, v in enumerate(_input_values(x_dtype)):
        f = float32((v - x_zp) * scale)   # a float32 product, exactly rounded
        f = min(max(f, lo - y_zp), hi - y_zp)
        table[byte] = (round(f) + y_zp) & 0xFF
    return bytes(table)


def _logistic(x):
    return 1.0 / (1.0 + math.exp(-x)) if x >= 0 else math.exp(x) / (1.0 + math.exp(x))


def _functions(op):
    o = op.options
    if op.type == "LEAKY_RELU":
        if "alpha" not in o:
            raise Unsupported("LEAKY_RELU needs the option 'alpha'")
        alpha = float(o["alpha"])
        return lambda x: x if x >= 0 else alpha * x
    if op.type == "HARD_SIGMOID":  # ONNX HardSigmoid: max(0, min(1, alpha * x + beta))
        alpha, beta = float(o.get("alpha", 0.2)), float(o.get("beta", 0.5))
        return lambda x: min(max(alpha * x + beta, 0.0), 1.0)
    if op.type == "CLIP":
        low = -math.inf if o.get("min") is None else float(o["min"])
        high = math.inf if o.get("max") is None else float(o["max"])
        return lambda x: min(max(x, low), high)
    return {
        "LOGISTIC": _logistic,
        "TANH": math.tanh,
        "HARD_SWISH": lambda x: x * min(max(x + 3.0, 0.0), 6.0) / 6.0,
        "RELU": lambda x: max(x, 0.0),
        "RELU6": lambda x: min(max(x, 0.0), 6.0),
        "RELU_N1_TO_1": lambda x: min(max(x, -1.0), 1.0),
    }[op.type]


@lowering("LOGISTIC", "TANH", "HARD_SWISH", "HARD_SIGMOID", "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "CLIP")
def lower_unary(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_scale, x_zp = require_byte_quantized(x, "input")
    y_scale, y_zp = require_byte_quantized(y, "output")
    if x.size != y.size:
        raise Unsupported(f"input {list(x.shape)} and output {list(y.shape)} sizes differ")
    lo = hi = None
    activation = op.options.get("activation", "NONE")
    if activation != "NONE":
        if y.dtype != "int8":
            raise Unsupported(f"fused activation {activation} on a {y.dtype} output")
        lo, hi = activation_range(activation, y_scale, y_zp)
    table = make_table(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp, _functions(op), lo, hi)
    return [Step("lut", dict(input=op.inputs[0], output=op.outputs[0], size=x.size), {"table": table})]
