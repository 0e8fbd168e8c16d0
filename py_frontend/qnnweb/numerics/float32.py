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
