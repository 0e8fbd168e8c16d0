"""Unary int8 / uint8 ops through a 256-entry lookup table (the ``lut`` record).

The table is computed here, at lowering: for each of the 256 input values v,
    real = function((v - input_zero_point) * input_scale)              (Python float, float64)
    q    = round_half_to_even(real / output_scale) + output_zero_point  (Python's round())
clamped to the output type's range (and the fused activation's, when an op has one). TFLite's int8
HARD_SWISH follows LiteRT's fixed-point algorithm instead (qnnweb.numerics.tflite), its ELU XNNPACK's
float32 table (``elu_table``), its int8 EXP and RSQRT its builtin kernels' arithmetic (LiteRT's
LUTPopulate in float32; a fixed-point inverse square root). Requantizing
conversions (QUANTIZE between uint8 and int8) follow the kernels' fp32 REQUANTIZE instead:
float32(v - zp_in) * float32(scale_in / scale_out), rounded half to even: with equal scales that is
exactly v ^ 0x80.
"""

import math

from ..numerics.byte_values import RANGES, input_values
from ..numerics.float32 import float32
from ..numerics.onnxruntime import float_table, make_table_onnxruntime, onnxruntime_function
from ..numerics.tflite import exp_table, gelu_table, hard_swish_table, rsqrt_table
from .registry import Step, Unsupported, lowering
from .common import activation_range, require_byte_quantized, require_int8


def make_table(x_dtype, x_scale, x_zp, y_dtype, y_scale, y_zp, function, lo=None, hi=None):
    """256 bytes: table[byte] = the output byte for the input byte."""
    type_lo, type_hi = RANGES[y_dtype]
    lo = type_lo if lo is None else max(lo, type_lo)
    hi = type_hi if hi is None else min(hi, type_hi)
    table = bytearray(256)
    for byte, v in enumerate(input_values(x_dtype)):
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
    for byte, v in enumerate(input_values(x_dtype)):
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
    functions = {
        "LOGISTIC": _logistic,
        "TANH": math.tanh,
        "HARD_SWISH": lambda x: x * min(max(x + 3.0, 0.0), 6.0) / 6.0,
        "RELU": lambda x: max(x, 0.0),
        "RELU6": lambda x: min(max(x, 0.0), 6.0),
        "RELU_N1_TO_1": lambda x: min(max(x, -1.0), 1.0),
        "ELU": lambda x: x if x >= 0 else math.expm1(x),
    }
    if op.type not in functions:   # ONNX's float functions (ONNX_FLOAT_FUNCTIONS) follow onnxruntime only
        raise Unsupported(f"{op.type} is computed as onnxruntime computes it, in ONNX models only")
    return functions[op.type]


def _onnx_composed(op):
    """The op's float32 function followed by those of options["then"] (float ops in a row), or None."""
    steps = [(op.type, op.options)] + list(op.options.get("then", ()))
    function = onnxruntime_function(steps)
    if function is None and len(steps) > 1:
        raise Unsupported(f"no float32 model of onnxruntime's {[t for t, _ in steps]} to compose")
    return function


def elu_table(x_dtype, x_scale, x_zp, y_scale, y_zp, lo=-128, hi=127):
    """TFLite's int8 ELU as LiteRT's default kernels (XNNPACK's qs8 ELU) tabulate it, all in float32:
    x = x_scale * (v - x_zp), y = x < 0 ? expm1(x) : x, q = rint(y * (1 / y_scale) + y_zp), clamped
    (the zero point added before rounding: ties round to even *after* it). Checked against
    ai-edge-litert 2.3 on every input of 26 scale / zero-point pairs, ties included."""
    x_scale, inverse = float32(x_scale), float32(1.0 / float32(y_scale))
    table = bytearray(256)
    for byte, v in enumerate(input_values(x_dtype)):
        x = float32(x_scale * (v - x_zp))
        y = float32(math.expm1(x)) if x < 0 else x
        q = round(float32(float32(y * inverse) + y_zp))
        table[byte] = min(max(q, lo), hi) & 0xFF
    return bytes(table)


# the float functions ONNX models compute with onnxruntime's arithmetic (numerics/onnxruntime.py), and
# one float32 operation with a constant operand
ONNX_FLOAT_FUNCTIONS = ("ERF", "GELU", "SQRT", "NEG", "ABS", "RECIPROCAL", "POW", "ADD_SCALAR", "SUB_SCALAR",
                        "MUL_SCALAR", "DIV_SCALAR", "FLOAT_REGION")


@lowering("LOGISTIC", "TANH", "HARD_SWISH", "HARD_SIGMOID", "RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "CLIP",
          "ELU", *ONNX_FLOAT_FUNCTIONS)
def lower_unary(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_scale, x_zp = require_byte_quantized(x, "input")
    if x.size != y.size:
        raise Unsupported(f"input {list(x.shape)} and output {list(y.shape)} sizes differ")
    fmt = getattr(graph, "format", "tflite")
    if y.dtype == "float32":  # a float op on the dequantized input whose float result is a model output
        if op.options.get("activation", "NONE") != "NONE":
            raise Unsupported("a fused activation on a float output")
        function = (_onnx_composed(op) if fmt == "onnx" else None) or _functions(op)
        table = float_table(x.dtype, x_scale, x_zp, function)
        return [Step("lut_f32", dict(input=op.inputs[0], output=op.outputs[0], size=x.size), {"table": table})]
    y_scale, y_zp = require_byte_quantized(y, "output")
    lo = hi = None
    activation = op.options.get("activation", "NONE")
    if activation != "NONE":
        if y.dtype != "int8":
            raise Unsupported(f"fused activation {activation} on a {y.dtype} output")
        lo, hi = activation_range(activation, y_scale, y_zp)
    onnx_function = _onnx_composed(op) if fmt == "onnx" else None
    if op.type == "HARD_SWISH" and fmt == "tflite" and not op.options.get("float_island") and lo is None:
        table = hard_swish_table(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp)
    elif op.type == "GELU" and fmt == "tflite":
        if lo is not None:
            raise Unsupported(f"a fused activation {activation} on TFLite's GELU")
        table = gelu_table(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp, op.options.get("approximate") == "tanh")
    elif op.type == "ELU" and fmt == "tflite":
        if y.dtype != "int8" or x.dtype != "int8":
            raise Unsupported(f"TFLite's ELU runs on int8 tensors (here {x.dtype} -> {y.dtype})")
        table = elu_table(x.dtype, x_scale, x_zp, y_scale, y_zp, *((lo, hi) if lo is not None else ()))
    elif onnx_function is not None:
        table = make_table_onnxruntime(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp, onnx_function, lo, hi)
    else:
        table = make_table(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp, _functions(op), lo, hi)
    return [Step("lut", dict(input=op.inputs[0], output=op.outputs[0], size=x.size), {"table": table})]


TFLITE_INTEGER_TABLES = {"EXP": exp_table, "RSQRT": rsqrt_table}


@lowering(*TFLITE_INTEGER_TABLES)
def lower_tflite_integer_unary(graph, op):
    """TFLite's int8 EXP (a softmax written out) and RSQRT (a layer norm's 1 / sqrt(variance + eps)):
    the tables of their builtin kernels, which LiteRT runs (XNNPACK's delegate takes them in float
    only): qnnweb.numerics.tflite. An EXP ai-edge-quantizer left in float between DEQUANTIZE and
    QUANTIZE (importers/tflite/quantization.py) is the float exp of each dequantized value, as the
    other float islands (XNNPACK's float exp and quantization give the same bytes: tests/tflite)."""
    if getattr(graph, "format", "tflite") != "tflite":
        if op.type == "EXP":   # ONNX's Exp: onnxruntime's float32 function, as the other float functions
            return lower_unary(graph, op)
        raise Unsupported(f"{op.type} is only run for TFLite models")
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_scale, x_zp = require_int8(x, "input")
    y_scale, y_zp = require_int8(y, "output")
    if x.size != y.size:
        raise Unsupported(f"input {list(x.shape)} and output {list(y.shape)} sizes differ")
    if op.options.get("float_island"):   # ai-edge-quantizer left it in float: exp of the dequantized values
        table = make_table(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp, lambda v: math.exp(min(v, 700.0)))
    else:
        table = TFLITE_INTEGER_TABLES[op.type](x_scale, x_zp, y_scale, y_zp)
    return [Step("lut", dict(input=op.inputs[0], output=op.outputs[0], size=x.size), {"table": table})]
