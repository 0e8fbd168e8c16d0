"""float32 rounding: Python floats are float64, the kernels and the reference runtimes compute in
float32; these round as they do, so checks and tables see what the kernels see."""

import math
import struct
from array import array

from ..errors import Unsupported
from ..records import FLOAT32_MAX

# the binary ops computed with one IEEE float32 operation per element (the binary_f32 record's operation)
F32_OPERATIONS = {"ADD": 0, "SUB": 1, "MUL": 2, "DIV": 3}


def float32_bytes(values):
    """float32 bytes of ``values``; a value beyond float32's range is refused (Unsupported)."""
    try:
        return struct.pack(f"<{len(values)}f", *values)
    except (OverflowError, struct.error):
        bad = next((v for v in values if not isinstance(v, (int, float)) or abs(v) > FLOAT32_MAX), None)
        raise Unsupported(f"value {bad!r} does not fit in a float32") from None


def float32s(values):
    """float32() of each value, in one C loop (array('f') rounds as float32() does, and also gives
    infinity beyond float32's range): for per-channel lists."""
    return array("f", values).tolist()


def float32(x):
    """Round a Python float to float32, so checks see what the kernels see (beyond float32's range:
    infinity, as float32 arithmetic gives, which the range checks then refuse)."""
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)


def float32_bits(x):
    """The IEEE bits of float32 `x` as an unsigned 32-bit integer."""
    return struct.unpack("<I", struct.pack("<f", x))[0]


def float32_from_bits(bits):
    """The float32 whose IEEE bits are the unsigned 32-bit integer `bits`."""
    return struct.unpack("<f", struct.pack("<I", bits))[0]


def _float32_neighbour(f, toward):
    """The float32 next to float32 `f` in the direction of `toward`."""
    bits = struct.unpack("<i", struct.pack("<f", f))[0]
    step = 1 if (toward > f) == (f >= 0) else -1
    if f == 0:
        return math.copysign(struct.unpack("<f", struct.pack("<i", 1))[0], toward)
    return struct.unpack("<f", struct.pack("<i", bits + step))[0]


def fma32(a, b, c):
    """float32 fused multiply-add of float32 `a`, `b`, `c`, rounded once as the FMA3 instruction does. The
    product is exact in double; the sum's rounding error (TwoSum) decides the float32 rounding where the
    double sum lands on a float32 tie, so no double rounding shows."""
    p = a * b
    s = p + c
    if not math.isfinite(s):
        return float32(s)
    t = s - p
    error = (p - (s - t)) + (c - t)
    f = float32(s)
    if error != 0 and f != s:
        other = _float32_neighbour(f, s)
        if abs(s - f) == abs(other - s) and (error > 0) == (other > f):
            return other   # a tie in double, not in the exact sum: it rounds toward `other`
    return f


def ieee_divide(a, b):
    """a / b as float32 hardware divides (of float32 values: the double quotient rounds to float32 exactly): a
    zero divisor gives an infinity of a's sign times b's, or NaN for 0 / 0."""
    if b == 0.0:
        return math.nan if a == 0.0 or a != a else math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b
