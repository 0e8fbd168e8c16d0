"""ONNX's element operations on constants as onnxruntime's CPU kernels compute them, for folding at import
(folding.py). Values are Python numbers. float32: every + - * / and sqrt of float32 operands is computed
in double, which holds the exact result to more than twice float32's precision, then rounded once to
float32 (``float32s``): the correctly rounded float32 operation, as onnxruntime's. Integers as C++
computes them: Div and Mod(fmod=1) truncate toward zero. A form onnxruntime refuses, or that this does not
compute, raises FoldError with the reason."""

import math
import struct

from ...numerics.float32 import float32, float32s
from ..shape_folding import FoldError, int_div

INTEGER = ("int32", "int64")
NUMERIC = ("float32", *INTEGER)
CAST_TARGETS = {1: "float32", 6: "int32", 7: "int64", 9: "bool"}   # TensorProto.DataType -> dtype
INT_RANGE = {"int32": (-(1 << 31), (1 << 31) - 1), "int64": (-(1 << 63), (1 << 63) - 1)}


def float_div(a, b):
    """IEEE division: x / 0 is an infinity with the signs' product, 0 / 0 is NaN."""
    if b == 0:
        if a == 0 or a != a:
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def fmod(a, b):
    """C's fmod: the remainder with the dividend's sign (exact for floats, so rounding does not move it)."""
    if isinstance(a, float) or isinstance(b, float):
        try:
            return math.fmod(a, b)
        except ValueError:   # fmod(inf, y), fmod(x, 0)
            return math.nan
    return a - b * int_div(a, b)


def floor_mod(a, b):
    """Mod with fmod=0 (integers): the remainder with the divisor's sign, Python's %."""
    if b == 0:
        raise FoldError("an integer Mod by zero")
    return a % b


def power(a, b):
    """std::pow in double (a float32 base and exponent are exact doubles): a negative base to a fractional
    power is NaN; 0 to a negative power, or a result beyond double, an infinity (negative for a negative base
    to an odd power)."""
    try:
        return math.pow(a, b)
    except (ValueError, OverflowError):
        integral = float(b).is_integer()
        if a < 0 and not integral:
            return math.nan
        return math.copysign(math.inf, a) if integral and int(b) % 2 else math.inf


ARITHMETIC = {  # (float function, integer function)
    "Add": (lambda a, b: a + b, lambda a, b: a + b), "Sub": (lambda a, b: a - b, lambda a, b: a - b),
    "Mul": (lambda a, b: a * b, lambda a, b: a * b), "Div": (float_div, int_div),
}
COMPARISONS = {"Equal": lambda a, b: a == b, "Less": lambda a, b: a < b, "Greater": lambda a, b: a > b,
               "LessOrEqual": lambda a, b: a <= b, "GreaterOrEqual": lambda a, b: a >= b}
LOGICAL = {"And": lambda a, b: bool(a) and bool(b), "Or": lambda a, b: bool(a) or bool(b),
           "Xor": lambda a, b: bool(a) != bool(b)}


def binary_function(op, dtype, attrs, products=False):
    """The element function of binary ``op`` on ``dtype`` operands."""
    if op in LOGICAL:
        if dtype != "bool":
            raise FoldError(f"{op} of {dtype} values")
        return LOGICAL[op]
    if op in COMPARISONS:
        if dtype not in NUMERIC and op != "Equal":
            raise FoldError(f"{op} of {dtype} values")
        return COMPARISONS[op]
    if dtype not in NUMERIC:
        raise FoldError(f"{op} of {dtype} values")
    floats = dtype == "float32"
    if op in ARITHMETIC:
        return ARITHMETIC[op][0 if floats else 1]
    if op == "Mod":
        if attrs.get("fmod", 0):
            return fmod
        if floats:
            raise FoldError("Mod of floats needs fmod=1 (onnxruntime refuses fmod=0)")
        return floor_mod
    if op == "Pow":
        return pow_function(floats, products)
    raise FoldError(f"no element function for {op}")


def pow_function(floats, products):
    """onnxruntime's Pow. ``products``: its broadcasting hands the kernel a span of bases and one exponent
    (the exponent has one element, the base more), where x ** 2 and x ** 3 are float32 products (x * x * x
    rounds twice). Otherwise std::pow(float, float), glibc's powf: computed here in double and rounded
    once, which is what powf gives except where the result lies halfway between two float32 values
    (2.2265625 ** 3): powf's own error decides the rounding there, so such a Pow is refused. An integer
    base: std::pow's double truncated."""
    if not floats:
        def integer_power(a, b):
            p = power(a, b)
            if not math.isfinite(p):
                raise FoldError(f"{a} ** {b} is not an integer")
            return int(p)
        return integer_power

    def float_power(a, b):
        if products and b == 2:
            return a * a
        if products and b == 3:
            return float32(a * a) * a
        p = power(a, b)
        if halfway_between_float32s(p):
            raise FoldError(f"{a} ** {b} = {p} lies halfway between two float32 values, where onnxruntime's powf "
                            "may round either way")
        return p
    return float_power


def halfway_between_float32s(x):
    nearest = float32(x)
    if nearest == x or not math.isfinite(nearest):
        return False
    bits = struct.unpack("<I", struct.pack("<f", nearest))[0]
    other = struct.unpack("<f", struct.pack("<I", bits + (1 if abs(x) > abs(nearest) else -1)))[0]
    return nearest + other == 2 * x   # exact: both are float32, their sum fits a double


def unary_function(op, dtype):
    if op == "Not":
        if dtype != "bool":
            raise FoldError(f"Not of {dtype} values")
        return lambda a: not a
    if op == "Neg" and dtype in NUMERIC:
        return lambda a: -a
    if op == "IsNaN" and dtype == "float32":
        return lambda a: a != a
    if dtype != "float32":
        raise FoldError(f"{op} of {dtype} values")
    if op == "Sqrt":
        return lambda a: math.sqrt(a) if a >= 0 else math.nan   # NaN stays NaN (a >= 0 is False)
    if op == "Reciprocal":
        return lambda a: float_div(1.0, a)
    raise FoldError(f"no element function for {op}")


def finish(values, dtype):
    """Results as ``dtype`` holds them: float32 rounded once; integers within range (onnxruntime's int
    arithmetic wraps around; a folded shape that overflows is refused rather than wrapped)."""
    if dtype == "float32":
        return float32s(values)
    if dtype in INT_RANGE:
        low, high = INT_RANGE[dtype]
        bad = next((v for v in values if not low <= v <= high), None)
        if bad is not None:
            raise FoldError(f"the result {bad} does not fit in {dtype}")
    return values


def cast(values, source, to):
    """Cast between float32, int32, int64 and bool as static_cast does (float to int truncates; int64 to
    int32 wraps around); a NaN, an infinity or a float beyond the integer type is refused."""
    target = CAST_TARGETS.get(to)
    if target is None:
        raise FoldError(f"Cast to data type {to} is not computed at load time (float32, int32, int64 and bool "
                        "are)")
    if target == "bool":
        return [v != 0 for v in values], target
    if target == "float32":
        return [float32(v) if source == "float32" else int_to_float32(int(v)) for v in values], target
    low, high = INT_RANGE[target]
    out = []
    for v in values:
        if source == "float32":
            if not math.isfinite(v) or not low <= math.trunc(v) <= high:
                raise FoldError(f"Cast of {v} to {target}: out of range")
            v = math.trunc(v)
        out.append((int(v) - low) % (1 << (64 if target == "int64" else 32)) + low)
    return out, target


def int_to_float32(v):
    """An integer rounded once to float32 (to nearest, ties to even), as static_cast<float> of an int64:
    through a double it would round twice beyond 2**53."""
    if abs(v) < 1 << 53:
        return float32(float(v))
    shift = abs(v).bit_length() - 24
    kept, rest = divmod(abs(v), 1 << shift)
    half = 1 << (shift - 1)
    if rest > half or (rest == half and kept & 1):
        kept += 1
    return math.copysign(float(kept << shift), v)


def range_count(start, limit, delta):
    """Range's length as onnxruntime computes it: ceil((limit - start) / delta) in double, the difference
    too (a float32 difference would round 1 - (-2.8e-16) to 1 and give one element where onnxruntime gives
    two: measured against it on 300 such cases); 0 when negative."""
    if delta == 0:
        raise FoldError("Range with delta 0")
    count = (limit - start) / delta
    if not math.isfinite(count):
        raise FoldError(f"Range from {start} to {limit} by {delta} has no finite length")
    return max(math.ceil(count), 0)


def range_values(start, delta, count, dtype):
    """start, start + delta, ...: accumulated in the values' type, as onnxruntime does."""
    values = []
    for _ in range(count):
        values.append(start)
        start = float32(start + delta) if dtype == "float32" else start + delta
    return values
