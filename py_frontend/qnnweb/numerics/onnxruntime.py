"""onnxruntime's float32 arithmetic, for the ONNX ops whose int8 results must follow it bit for bit.

ONNX models follow onnxruntime, which builds its QLinearLeakyRelu / QLinearSigmoid tables
(contrib_ops/cpu/quantization/qlinear_lookup_table.cc) and runs the float ops a QDQ model keeps
between DequantizeLinear and QuantizeLinear all in float32: x = float32(x_scale * (q - x_zp)),
y = f(x) in float32, then MlasQuantizeLinear: rint(clamp(float32(y / y_scale), lo - zp, hi - zp)) + zp.
Sigmoid and Tanh are MLAS's FMA3 kernels (mlas/lib/logistic.cpp, tanh.cpp: Eigen's rational
approximations); HardSigmoid and HardSwish Eigen's float32 expressions (without FMA); Elu Eigen's exp
(_eigen_exp). Each was checked against onnxruntime 1.32 on every dequantized value of several scales.
"""

import math

from ..errors import Unsupported
from .byte_values import RANGES, input_values
from .float32 import float32, float32_bytes, fma32 as _fma32, ieee_divide
from .mlas_fma3 import mlas_erf, mlas_exp


def _f32(x):
    return float32(x)


_LOGISTIC_ALPHA = [4.37031012579801e-11, 1.15627324459942e-07, 6.08574864600143e-05, 8.51377133304701e-03,
                   2.48287947061529e-01]
_LOGISTIC_BETA = [6.10247389755681e-13, 5.76102136993427e-09, 6.29106785017040e-06, 1.70198817374094e-03,
                  1.16817656904453e-01, 9.93151921023180e-01]


def _mlas_rational(x, alpha, beta):
    """MLAS's odd rational approximation x * P(x^2) / Q(x^2), Horner with float32 FMAs."""
    x2 = _f32(x * x)
    alpha, beta = [_f32(a) for a in alpha], [_f32(b) for b in beta]
    p = _fma32(x2, alpha[0], alpha[1])
    for a in alpha[2:]:
        p = _fma32(p, x2, a)
    p = _f32(p * x)
    q = _fma32(x2, beta[0], beta[1])
    for b in beta[2:]:
        q = _fma32(q, x2, b)
    return _f32(p / q)


def _mlas_logistic(x):
    """MlasLogisticKernelFma3 (mlas/lib/x86_64/LogisticKernelFma3.S): the result is clamped below at 0 only,
    so 20 inputs between 17.48 and 17.99 give 1.0000001, as onnxruntime's Sigmoid does."""
    x = min(max(x, -18.0), 18.0)
    return max(_f32(_mlas_rational(x, _LOGISTIC_ALPHA, _LOGISTIC_BETA) + 0.5), 0.0)


_TANH_ALPHA = [-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11, 5.12229709037114e-08,
               1.48572235717979e-05, 6.37261928875436e-04, 4.89352455891786e-03]
_TANH_BETA = [1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03, 4.89352518554385e-03]


def _mlas_tanh(x):
    return _mlas_rational(min(max(x, -9.0), 9.0), _TANH_ALPHA, _TANH_BETA)


def _onnx_hard_sigmoid(alpha, beta):
    alpha, beta = _f32(alpha), _f32(beta)
    return lambda x: min(max(_f32(_f32(alpha * x) + beta), 0.0), 1.0)


_SIXTH = _f32(1.0 / 6.0)


def _onnx_hard_swish(x):
    return _f32(x * min(max(_f32(_f32(x * _SIXTH) + 0.5), 0.0), 1.0))


# Eigen's float32 exp (pexp_float: Cephes' range reduction, a degree-6 minimax polynomial), as
# onnxruntime's Elu computes it on SSE packets of 4, without FMA. The elements past the last whole
# packet (a tensor's last size % 4, on one thread; each thread's share has such a tail) go to glibc's
# expf instead, one float32 ulp apart on a few values: a table cannot tell them apart, so there the
# float result may differ by that ulp (a quantized one did not, on every value tried).
_EIGEN_EXP_POLY = [_f32(c) for c in (1.37449637986719608306884765625e-3, 8.36894474923610687255859375e-3,
                                     4.166965186595916748046875e-2, 0.16666518151760101318359375,
                                     0.49999988079071044921875)]   # p6, p5, p4, p3, p2


def _eigen_exp(x):
    """exp of a finite float32 `x`, step by step as Eigen's pexp_float rounds it."""
    if x < -104.0:
        return 0.0
    p6, p5, p4, p3, p2 = _EIGEN_EXP_POLY
    clamped = min(x, _f32(88.723))
    m = math.floor(_f32(_f32(clamped * _f32(1.44269504088896341)) + 0.5))
    r = _f32(_f32(m * -0.693359375) + clamped)
    r = _f32(_f32(m * _f32(2.12194440e-4)) + r)
    r2 = _f32(r * r)
    even = _f32(_f32(r2 * p6) + p4)
    odd = _f32(_f32(r2 * p5) + p3)
    even = _f32(_f32(r2 * even) + p2)
    y = _f32(_f32(r * odd) + even)
    y = _f32(_f32(r2 * y) + _f32(r + 1.0))
    return max(_f32(math.ldexp(y, m)), x)


def _onnx_elu(alpha):
    """onnxruntime's Elu (activations.h): x >= 0 ? x : alpha * (exp(x) - 1), in float32, with Eigen's exp
    (not expm1: exp(x) - 1 loses the low bits of small |x|, as onnxruntime does). Checked against
    onnxruntime 1.32 on 122,000 values (every one the same bits) and on every dequantized value of int8
    and uint8 inputs at several scales and alphas."""
    alpha = _f32(alpha)
    return lambda x: x if x >= 0 else _f32(alpha * _f32(_eigen_exp(x) - 1.0))


_SQRT1_2 = _f32(math.sqrt(0.5))
_GELU_TANH_B, _GELU_TANH_C = _f32(0.7978845608028654), _f32(0.035677408136300125)


def _onnx_gelu(x):
    """onnxruntime's Gelu (providers/cpu/tensor/gelu.cc; com.microsoft Gelu, which its GeluFusion writes
    for x * 0.5 * (1 + erf(x / sqrt 2)) in float, is the same kernel): 0.5 * x * (erf(x * M_SQRT1_2) + 1)."""
    return _f32(_f32(0.5 * x) * _f32(mlas_erf(_f32(x * _SQRT1_2)) + 1.0))


def _onnx_gelu_tanh(x):
    """Gelu's approximate="tanh" (gelu.cc): 0.5 * x * (tanh(x * (C * x * x + B)) + 1), MLAS's tanh."""
    inner = _f32(x * _f32(_f32(_f32(_GELU_TANH_C * x) * x) + _GELU_TANH_B))
    return _f32(_f32(0.5 * x) * _f32(_mlas_tanh(inner) + 1.0))


def _onnx_sqrt(x):
    return _f32(math.sqrt(x)) if x >= 0 else math.nan   # the double root rounds to float32 exactly


def _onnx_pow(exponent):
    """onnxruntime's Pow with a constant exponent (providers/cpu/math/element_wise_ops.cc): 2 and 3 as
    products (x * x, x * x * x in float32); other exponents call std::pow, which has no exact model here."""
    if exponent == 2.0:
        return lambda x: _f32(x * x)
    if exponent == 3.0:
        return lambda x: _f32(_f32(x * x) * x)
    if exponent == 1.0:
        return lambda x: x
    return None


# the float32 operations of two values (in double, then rounded: exact for +, -, *, / of two float32
# values), and of a value and a constant (`value`; `first`: the constant is the left operand)
_OPERATIONS = {"ADD": lambda a, b: a + b, "SUB": lambda a, b: a - b, "MUL": lambda a, b: a * b, "DIV": ieee_divide}
_SCALAR_OPERATIONS = {f"{k}_SCALAR": operation for k, operation in _OPERATIONS.items()}


def _scalar_operation(op_type, value, first):
    operation, c = _SCALAR_OPERATIONS[op_type], _f32(value)
    if first:
        return lambda x: _f32(operation(c, x))
    return lambda x: _f32(operation(x, c))


def region_function(program):
    """The float32 function of a float region of one input (element functions and float32 operations on
    values it computed, onnxruntime running each op as it is): ``program`` lists its steps in order,
    ("step", op type, options, k) applies an element function to value k, ("binary", "ADD" | "SUB" |
    "MUL" | "DIV", k, m) combines values k and m; value 0 is the input, value i the result of step i,
    the last value the region's result. None when a step has no exact model."""
    steps = []
    for entry in program:
        if entry[0] == "step":
            function = element_function(entry[1], entry[2])
            if function is None:
                return None
            steps.append((lambda f, k: lambda values: f(values[k]))(function, entry[3]))
        else:
            operation, k, m = _OPERATIONS[entry[1]], entry[2], entry[3]
            steps.append((lambda op, k, m: lambda values: _f32(op(values[k], values[m])))(operation, k, m))

    def region(x):
        values = [x]
        for step in steps:
            values.append(step(values))
        return values[-1]
    return region


def element_function(op_type, options):
    """float32 functions as onnxruntime's CPU kernels compute them, or None (no exact model)."""
    o = options
    if op_type == "FLOAT_REGION":
        return region_function(o["program"])
    if op_type in _SCALAR_OPERATIONS:
        return _scalar_operation(op_type, float(o["value"]), bool(o.get("first", False)))
    if op_type == "ERF":
        return mlas_erf
    if op_type == "EXP":   # onnxruntime's Exp kernel calls MlasComputeExp
        return mlas_exp
    if op_type == "GELU":
        return _onnx_gelu_tanh if o.get("approximate", "none") == "tanh" else _onnx_gelu
    if op_type == "SQRT":
        return _onnx_sqrt
    if op_type == "POW":
        return _onnx_pow(float(o["exponent"]))
    if op_type == "NEG":
        return lambda x: -x
    if op_type == "ABS":
        return abs
    if op_type == "RECIPROCAL":
        return lambda x: _f32(ieee_divide(1.0, x))
    if op_type == "LEAKY_RELU":
        if "alpha" not in o:
            raise Unsupported("LEAKY_RELU needs the option 'alpha'")
        alpha = _f32(float(o["alpha"]))
        return lambda x: x if x >= 0 else _f32(alpha * x)
    if op_type == "ELU":
        return _onnx_elu(float(o.get("alpha", 1.0)))
    if op_type == "LOGISTIC":
        return _mlas_logistic
    if op_type == "TANH":
        return _mlas_tanh
    if op_type == "HARD_SWISH":
        return _onnx_hard_swish
    if op_type == "HARD_SIGMOID":
        return _onnx_hard_sigmoid(float(o.get("alpha", 0.2)), float(o.get("beta", 0.5)))
    if op_type == "CLIP":
        low = -math.inf if o.get("min") is None else _f32(float(o["min"]))
        high = math.inf if o.get("max") is None else _f32(float(o["max"]))
        return lambda x: min(max(x, low), high)
    if op_type in ("RELU", "RELU6", "RELU_N1_TO_1"):
        low, high = {"RELU": (0.0, math.inf), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}[op_type]
        return lambda x: min(max(x, low), high)
    if op_type in ("NONZERO_TO", "ZERO_TO", "SELECT", "NAN_TO"):   # Where on a truth (NaN is true, as in C++)
        value, otherwise = _f32(float(o["value"])), _f32(float(o.get("otherwise", 0.0)))
        return {"NONZERO_TO": lambda x: value if x != 0 else x, "ZERO_TO": lambda x: x if x != 0 else value,
                "SELECT": lambda x: value if x != 0 else otherwise, "NAN_TO": lambda x: value if x != x else x}[op_type]
    return None


def onnxruntime_function(steps):
    """The float32 function of float unary ops in a row ([(op type, options)]) as onnxruntime's kernels
    compute it, or None when one of them has no exact model here."""
    functions = [element_function(t, o) for t, o in steps]
    if any(f is None for f in functions):
        return None

    def composed(x):
        for f in functions:
            x = f(x)
        return x
    return composed


def batch_norm_coefficients(scale, bias, mean, var, epsilon):
    """Each channel's (multiplier, addend) as onnxruntime's inference BatchNormalization computes them
    (providers/cpu/nn/batch_norm.h, Eigen arrays, float32 all through): inv_std = 1 / sqrt(var + epsilon),
    new_scale = inv_std * scale, new_bias = bias - mean * new_scale; then y = x * new_scale + new_bias
    (batch_norm_function), a product and a sum, no FMA."""
    epsilon = _f32(epsilon)
    coefficients = []
    for s, b, m, v in zip(scale, bias, mean, var):
        inv_std = _f32(ieee_divide(1.0, _onnx_sqrt(_f32(_f32(v) + epsilon))))
        new_scale = _f32(inv_std * _f32(s))
        coefficients.append((new_scale, _f32(_f32(b) - _f32(_f32(m) * new_scale))))
    return coefficients


def batch_norm_function(new_scale, new_bias):
    return lambda x: _f32(_f32(x * new_scale) + new_bias)


def float_table(x_dtype, x_scale, x_zp, function):
    """256 float32 (little-endian bytes): the function of each dequantized input value, in float32."""
    x_scale = _f32(x_scale)
    return float32_bytes([_f32(function(_f32(x_scale * (v - x_zp)))) for v in input_values(x_dtype)])


def make_table_onnxruntime(x_dtype, x_scale, x_zp, y_dtype, y_scale, y_zp, function, lo=None, hi=None):
    """256 bytes as onnxruntime computes them (float32 all through, see the module's docstring)."""
    type_lo, type_hi = RANGES[y_dtype]
    lo = type_lo if lo is None else max(lo, type_lo)
    hi = type_hi if hi is None else min(hi, type_hi)
    x_scale, y_scale = _f32(x_scale), _f32(y_scale)
    table = bytearray(256)
    for byte, v in enumerate(input_values(x_dtype)):
        y = function(_f32(x_scale * (v - x_zp)))
        if math.isnan(y):
            raise Unsupported("the function gives NaN inside the input's range")
        f = _f32(y / y_scale) if math.isfinite(y) else y
        f = min(max(f, lo - y_zp), hi - y_zp)
        table[byte] = (round(f) + y_zp) & 0xFF
    return bytes(table)


def prelu_function(before, then):
    """The float32 function of the float unary ops ``before`` ([(op type, options)]), PRelu and the ops
    ``then`` after it (further PRelus among them: ("PRELU", {"slopes": [...]})), of a value and its
    channel's slopes (the first PRelu's first)."""
    first = onnxruntime_function(before)
    after = [None if t == "PRELU" else element_function(t, o) for t, o in then]
    if first is None or any(f is None and t != "PRELU" for f, (t, _) in zip(after, then)):
        raise Unsupported(f"no float32 model of onnxruntime's {[t for t, _ in [*before, *then]]} around PRelu")

    def prelu_then(v, slopes):
        v = first(v)
        v = v if v >= 0 else float32(v * slopes[0])
        k = 1
        for f in after:
            if f is None:   # a further PRelu
                v = v if v >= 0 else float32(v * slopes[k])
                k += 1
            else:
                v = f(v)
        return v
    return prelu_then
