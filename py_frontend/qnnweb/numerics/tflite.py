"""LiteRT's integer arithmetic for the int8 ops whose tables must follow it bit for bit.

ai-edge-litert's default kernels are XNNPACK where its delegate takes the op, else TFLite's builtin
kernels. Two ops whose results depend on those kernels' fixed-point details run here as 256-entry
tables (the ``lut`` record), and ADD's fallback gets its fixed-point multipliers here:

- QUANTIZE int8 -> int8: XNNPACK's qs8 convert (``xnn_init_qs8_cvt_scalar_params``): a multiplier
  lrintf(256 * input_scale / output_scale) and (acc + 0x80) >> 8, for scale ratios in [2^-8, 2^7];
  outside that range the delegate refuses the op and TFLite's reference Requantize runs
  (MultiplyByQuantizedMultiplier with a 31-bit multiplier).
- ADD: XNNPACK's delegate takes it only when each input / output scale ratio is in [2^-10, 2^8);
  below that, TFLite's builtin integer ADD runs (kernels/add.cc: inputs shifted left by 20 bits,
  each scaled by a 31-bit multiplier, their sum scaled to the output; the add record's arithmetic
  2). Above it the builtin kernel's results wrap around in int32 (measured with ai-edge-litert
  2.3), which qnnweb does not imitate: such an ADD is refused, and so is a MUL whose
  a_scale * b_scale / output_scale is 2^8 or more (the delegate's MUL limit).
- HARD_SWISH: TFLite's int16 fixed-point algorithm (kernels/internal/reference/hard_swish.h and
  HardSwishPrepare in kernels/activations.cc); XNNPACK's delegate does not take quantized HARD_SWISH.
- GELU: the builtin kernel's float lookup table (gelu_table); XNNPACK's delegate does not take it either.

Pure Python: it runs in Pyodide, where there is no numpy.
"""

import math

from ..errors import Unsupported
from .byte_values import input_values
from .float32 import float32

INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
INT32_MAX = (1 << 31) - 1


def _round_away(x):
    """TfLiteRound: round half away from zero."""
    return int(math.floor(abs(x) + 0.5)) * (1 if x >= 0 else -1)


def _truncating_div(a, b):
    """C integer division (toward zero)."""
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b > 0) else -q


def quantize_multiplier(multiplier):
    """TFLite's QuantizeMultiplier: (int32 fixed-point multiplier in [2^30, 2^31), exponent)."""
    if multiplier == 0.0:
        return 0, 0
    q, exponent = math.frexp(multiplier)
    fixed = _round_away(q * (1 << 31))
    if fixed == 1 << 31:
        fixed //= 2
        exponent += 1
    if exponent < -31:
        return 0, 0
    return fixed, exponent


def rounding_divide_by_pot(x, exponent):
    """gemmlowp's RoundingDivideByPOT: x / 2^exponent rounded half away from zero."""
    if exponent <= 0:
        return x
    mask = (1 << exponent) - 1
    remainder = x & mask
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> exponent) + (1 if remainder > threshold else 0)


def _rounding_doubling_high_mul32(a, b):
    if a == b == -(1 << 31):
        return INT32_MAX
    ab = a * b
    nudge = (1 << 30) if ab >= 0 else 1 - (1 << 30)
    return _truncating_div(ab + nudge, 1 << 31)


def multiply_by_quantized_multiplier(x, multiplier, shift):
    """TFLite's MultiplyByQuantizedMultiplier (the reference form, left shift before the multiply)."""
    left, right = (shift, 0) if shift > 0 else (0, -shift)
    return rounding_divide_by_pot(_rounding_doubling_high_mul32(x * (1 << left), multiplier), right)


# ------------------------------------------------------------------------------ QUANTIZE int8 -> int8

def requantize_int8_table(x_scale, x_zp, y_scale, y_zp):
    """int8 -> int8 as ai-edge-litert computes it (XNNPACK's convert, or the reference Requantize)."""
    ratio = float32(float32(x_scale) / float32(y_scale))
    table = bytearray(256)
    if 2.0 ** -8 <= ratio <= 2.0 ** 7:
        multiplier = round(float32(256.0 * ratio))  # lrintf: half to even, as Python's round
        bias = (y_zp << 8) - multiplier * x_zp + 0x80
        for byte in range(256):
            v = byte - 256 if byte >= 128 else byte
            table[byte] = min(max((bias + v * multiplier) >> 8, -128), 127) & 0xFF
        return bytes(table)
    multiplier, shift = quantize_multiplier(ratio)
    for byte in range(256):
        v = byte - 256 if byte >= 128 else byte
        q = multiply_by_quantized_multiplier(v - x_zp, multiplier, shift) + y_zp
        table[byte] = min(max(q, -128), 127) & 0xFF
    return bytes(table)


# ----------------------------------------------------------------------------------------------- ADD

XNNPACK_ADD_RATIOS = (2.0 ** -10, 2.0 ** 8)  # the delegate's [min, max) for each input / output scale
XNNPACK_MUL_RATIO_MAX = 2.0 ** 8             # and for a_scale * b_scale / output_scale
ADD_LEFT_SHIFT = 20
NO_ADD_FIXED_POINT = dict(a_fixed_multiplier=0, a_fixed_shift=0, b_fixed_multiplier=0, b_fixed_shift=0,
                          output_fixed_multiplier=0, output_fixed_shift=0)


def add_arithmetic(a_scale, b_scale, y_scale):
    """The add record's arithmetic and fixed-point fields for LiteRT's choice of ADD kernel."""
    ratios = [float32(float32(s) / float32(y_scale)) for s in (a_scale, b_scale)]
    lo, hi = XNNPACK_ADD_RATIOS
    if any(r >= hi for r in ratios):
        raise Unsupported(f"input scale / output scale is {max(ratios):g}, 2^8 or more: LiteRT's fallback ADD "
                          "kernel overflows there, and qnnweb does not imitate it")
    if all(r >= lo for r in ratios):
        return dict(arithmetic=0, **NO_ADD_FIXED_POINT)  # XNNPACK's
    # PrepareGeneralSubOp / add.cc Prepare: float32 scales, the ratios in double
    a, b, y = (float(float32(s)) for s in (a_scale, b_scale, y_scale))
    twice_max = 2 * max(a, b)
    fields = dict(arithmetic=2)
    for name, real in (("a", a / twice_max), ("b", b / twice_max),
                       ("output", twice_max / ((1 << ADD_LEFT_SHIFT) * y))):
        multiplier, exponent = quantize_multiplier(real)  # QuantizeMultiplierSmallerThanOneExp: exponent <= 0
        fields[f"{name}_fixed_multiplier"], fields[f"{name}_fixed_shift"] = multiplier, -exponent
    return fields


# ----------------------------------------------------------------------------------------- HARD_SWISH

def _saturate16(x):
    return min(max(x, INT16_MIN), INT16_MAX)


def _rounding_doubling_high_mul16(a, b):
    if a == b == INT16_MIN:
        return INT16_MAX
    ab = a * b
    nudge = (1 << 14) if ab >= 0 else 1 - (1 << 14)
    return _saturate16(_truncating_div(ab + nudge, 1 << 15))


def _doubling_high_mul16(a, b):
    """TFLite's SaturatingDoublingHighMul (no rounding nudge)."""
    if a == b == INT16_MIN:
        return INT16_MAX
    return _saturate16(_truncating_div(a * b, 1 << 15))


def _int16_multiplier(multiplier32):
    """DownScaleInt32ToInt16Multiplier."""
    if multiplier32 >= INT32_MAX - (1 << 15):
        return INT16_MAX
    return (multiplier32 + (1 << 15)) >> 16


def hard_swish_table(x_dtype, x_scale, x_zp, y_dtype, y_scale, y_zp):
    """256 bytes: TFLite's quantized HARD_SWISH for each input byte (int8 or uint8)."""
    hires_input_scale = float32(float32(1.0 / 128.0) * float32(x_scale))
    reluish_scale = float32(3.0 / 32768.0)
    output_multiplier, output_exponent = quantize_multiplier(float32(hires_input_scale / float32(y_scale)))
    reluish_multiplier, reluish_exponent = quantize_multiplier(float32(hires_input_scale / reluish_scale))
    if output_exponent > 0:
        raise Unsupported("input scale / output scale is 128 or more (TFLite's HARD_SWISH refuses it)")
    output_multiplier16 = _int16_multiplier(output_multiplier)
    reluish_multiplier16 = _int16_multiplier(reluish_multiplier)
    lo, hi = (-128, 127) if y_dtype == "int8" else (0, 255)
    table = bytearray(256)
    for byte in range(256):
        v = byte - 256 if x_dtype == "int8" and byte >= 128 else byte
        hires = (v - x_zp) * (1 << 7)
        preshift_output = _rounding_doubling_high_mul16(hires, output_multiplier16)
        reluish = hires
        if reluish_exponent > 0:
            reluish = _saturate16(reluish * (1 << (reluish_exponent - 1)))
        reluish = _rounding_doubling_high_mul16(reluish, reluish_multiplier16)
        if reluish_exponent > 0:
            reluish = _saturate16(reluish * 2)
        if reluish_exponent < 0:
            reluish = rounding_divide_by_pot(reluish, -reluish_exponent)
        reluish = (reluish + (1 << 15)) >> 1
        out = rounding_divide_by_pot(_doubling_high_mul16(reluish, preshift_output), -output_exponent)
        table[byte] = min(max(out + y_zp, lo), hi) & 0xFF
    return bytes(table)


_SQRT_2_OVER_PI = float32(math.sqrt(2.0 / math.pi))
_MINUS_SQRT1_2 = float32(-math.sqrt(0.5))


def _gelu(x):
    """kernels/internal/reference/gelu.h GeluTransform, all float32: 0.5f * x * erfc(x * -M_SQRT1_2) (erfc,
    not 1 + erf: the form LiteRT 2.3 computes; 1 + erf in double differs at a tie). erfcf correctly rounded
    (math.erfc in double, rounded), as glibc's gave on every table tried."""
    return float32(float32(0.5 * x) * float32(math.erfc(float32(x * _MINUS_SQRT1_2))))


def _gelu_tanh(x):
    """GeluTransformApproximate, all float32: 0.5f * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715f * x^3))).
    tanhf correctly rounded (math.tanh in double, rounded): glibc's older tanhf is not, yet it gave the same
    table in 2,000 random scale / zero-point pairs of 256 values each."""
    cube = float32(float32(float32(float32(0.044715) * x) * x) * x)
    t = float32(math.tanh(float32(_SQRT_2_OVER_PI * float32(x + cube))))
    return float32(float32(0.5 * x) * float32(1.0 + t))


def gelu_table(x_dtype, x_scale, x_zp, y_dtype, y_scale, y_zp, approximate):
    """TFLite's int8 / uint8 GELU (kernels/gelu.cc, which XNNPACK's delegate does not take): the builtin
    kernel's lookup table (PopulateLookupTable): x = x_scale * (v - x_zp) in float32, y = GELU(x),
    q = round_half_away(y * (1 / y_scale)) + y_zp, clamped. Checked against ai-edge-litert 2.3 on every
    input of several scale / zero-point pairs, ties included, int8 and uint8, approximate or not."""
    function = _gelu_tanh if approximate else _gelu
    x_scale, inverse = float32(x_scale), float32(1.0 / float32(y_scale))
    lo, hi = (-128, 127) if y_dtype == "int8" else (0, 255)
    table = bytearray(256)
    for byte, v in enumerate(input_values(x_dtype)):
        y = function(float32(x_scale * (v - x_zp)))
        table[byte] = min(max(_round_away(float32(y * inverse)) + y_zp, lo), hi) & 0xFF
    return bytes(table)
