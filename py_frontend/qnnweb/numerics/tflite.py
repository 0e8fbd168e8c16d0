"""LiteRT's integer arithmetic for the int8 ops whose tables must follow it bit for bit.

ai-edge-litert's default kernels are XNNPACK where its delegate takes the op, else TFLite's builtin
kernels. The int8 ops whose results depend on those kernels' fixed-point details run as tables
computed here, and ADD's fallback gets its fixed-point multipliers here:

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
- EXP, RSQRT (256-entry tables), SQUARED_DIFFERENCE and DIV (256 x 256 tables, the ``lut2d`` record):
  their builtin kernels, which LiteRT runs for int8 (the delegate takes them in float only); see the
  section "TFLite's builtin int8 kernels as tables" below.
- GELU: the builtin kernel's float lookup table (gelu_table); XNNPACK's delegate does not take it either.
- SOFTMAX: the builtin kernel's table of float exponentials (softmax_table), which the softmax kernel
  sums and normalizes as LiteRT does; XNNPACK's delegate takes SOFTMAX in float only.

Pure Python: it runs in Pyodide, where there is no numpy.
"""

import math

from ..errors import Unsupported
from . import glibc
from .byte_values import input_values
from .float32 import float32

INT16_MIN, INT16_MAX = -(1 << 15), (1 << 15) - 1
INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1


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
    """gemmlowp's SaturatingRoundingDoublingHighMul: (a * b + nudge) / 2^31 truncated toward zero, the nudge
    2^30 or 1 - 2^30 by the product's sign (written with shifts: the 65,536-entry tables call it often)."""
    if a == b == INT32_MIN:
        return INT32_MAX
    ab = a * b
    return (ab + (1 << 30)) >> 31 if ab >= 0 else -(((1 << 30) - 1 - ab) >> 31)


def multiply_by_quantized_multiplier(x, multiplier, shift):
    """TFLite's MultiplyByQuantizedMultiplier (the reference form, left shift before the multiply)."""
    left, right = (shift, 0) if shift > 0 else (0, -shift)
    return rounding_divide_by_pot(_rounding_doubling_high_mul32(x * (1 << left), multiplier), right)


# ------------------------------------------------------------------------------ QUANTIZE int8 -> int8

def quantize_reciprocal(scale):
    """What LiteRT's float32 -> int8 QUANTIZE multiplies by: XNNPACK's f32-qs8 convert takes the float32
    reciprocal of the output scale (it does not divide, as TFLite's reference kernel does)."""
    return float32(1.0 / float32(scale))


def quantize_float32(x, scale, zero_point):
    """One float32 value through LiteRT's QUANTIZE to int8: x * quantize_reciprocal(scale) in float32,
    rounded half to even (the convert's magic-bias rounding), plus the zero point, clamped to int8."""
    return max(-128, min(127, round(float32(float32(x) * quantize_reciprocal(scale))) + zero_point))


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


# ------------------------------------------------------------------ TFLite's builtin int8 kernels as tables
# The ops below run on TFLite's builtin kernels in LiteRT (XNNPACK's delegate takes none of them for int8:
# its VisitUnaryNode / VisitBinaryNode accept float tensors only for them). Each is a function of one or
# two int8 values, so qnnweb runs it as a 256-entry (lut) or 256 x 256 (lut2d) table computed here.


def _wrap32(x):
    """x as a C int32 after an overflowing add or shift (two's complement)."""
    return (x + (1 << 31)) % (1 << 32) - (1 << 31)


def _saturating_shift_left(x, exponent):
    """gemmlowp's SaturatingRoundingMultiplyByPOT<exponent> for exponent > 0."""
    threshold = (1 << (31 - exponent)) - 1
    return INT32_MAX if x > threshold else INT32_MIN if x < -threshold else x << exponent


def _count_leading_zeros32(x):
    return 32 - x.bit_length() if x > 0 else 32


def _table_byte(q, lo=-128, hi=127):
    return min(max(q, lo), hi) & 0xFF


def lut_populate_int8(x_scale, x_zp, y_scale, y_zp, function):
    """256 bytes: TFLite's LUTPopulate<int8_t> (kernels/internal/common.h), all in float32:
    x = x_scale * (v - x_zp), y = function(x) (a float32 result), q = round(y * (1 / y_scale)) half away
    from zero, plus the zero point (in float32), converted to int32 (saturating: an infinity gives the
    type's bound, as measured) and clamped."""
    x_scale, inverse = float32(x_scale), float32(1.0 / float32(y_scale))
    table = bytearray(256)
    for v in range(-128, 128):
        x = float32(x_scale * (v - x_zp))
        rescaled = float32(float32(function(x)) * inverse)
        q = float32(_round_away(rescaled) + y_zp) if math.isfinite(rescaled) else rescaled
        table[v & 0xFF] = _table_byte(int(min(max(q, -2.0 ** 31), 2.0 ** 31 - 1)))
    return bytes(table)


def exp_table(x_scale, x_zp, y_scale, y_zp):
    """TFLite's int8 EXP (kernels/exp.cc): LUTPopulate of std::exp in float32, the system libm's expf
    (numerics.glibc); an overflowing exp (an infinity) saturates."""
    return lut_populate_int8(x_scale, x_zp, y_scale, y_zp, glibc.expf)


def softmax_table(x_scale, beta):
    """TFLite's int8 SOFTMAX exponentials (PopulateSoftmaxLookupTable, kernels/internal/optimized/
    optimized_ops.h), indexed by d = max - x: expf(scale * d) with scale = -input_scale * beta, both
    products in float32; expf the system libm's (numerics.glibc), as for EXP's table."""
    scale = float32(-float32(x_scale) * float32(beta))
    return [glibc.expf(float32(scale * d)) for d in range(256)]


def _inv_sqrt_multiplier(value):
    """TFLite's GetInvSqrtQuantizedMultiplierExp(value, kReverseShift): 1 / sqrt(value) as a 31-bit
    multiplier and a left shift, by gemmlowp's fixed-point Newton-Raphson iteration (Q3.28)."""
    if value <= 1:
        return INT32_MAX, 0
    shift = 11
    while value >= 1 << 29:
        value //= 4
        shift += 1
    pairs = (_count_leading_zeros32(value) - 1) // 2 - 1
    shift -= pairs
    value <<= 2 * pairs
    half_input = rounding_divide_by_pot(value >> 1, 1)
    half_three = (1 << 28) + (1 << 27)
    x = 1 << 28
    for _ in range(5):
        x3 = _saturating_shift_left(_rounding_doubling_high_mul32(_rounding_doubling_high_mul32(x, x), x), 6)
        difference = _wrap32(_rounding_doubling_high_mul32(half_three, x)
                             - _rounding_doubling_high_mul32(half_input, x3))
        x = _saturating_shift_left(difference, 3)
    x = _rounding_doubling_high_mul32(x, 1518500250)   # times sqrt(2) / 2
    if shift < 0:
        x, shift = _wrap32(x << -shift), 0
    return x, -shift


def _multiply_by_quantized_multiplier_int32(x, multiplier, shift):
    """MultiplyByQuantizedMultiplier with the left shift wrapping in int32, as the C++ code does."""
    left, right = (shift, 0) if shift > 0 else (0, -shift)
    return rounding_divide_by_pot(_rounding_doubling_high_mul32(_wrap32(x * (1 << left)), multiplier), right)


RSQRT_SHIFT = 20


def rsqrt_table(x_scale, x_zp, y_scale, y_zp):
    """TFLite's int8 RSQRT (kernels/elementwise.cc RsqrtEvalQuantizedInt8): 1 / sqrt(v - x_zp) by
    fixed-point Newton-Raphson, scaled by 1 / (sqrt(x_scale) * y_scale) (QuantizeMultiplier); v == x_zp
    gives 127. LiteRT stops with an error on an input below the zero point (a negative value); those
    table entries are 127 as well."""
    scale = 1.0 / float32(float32(math.sqrt(float32(x_scale))) * float32(y_scale))
    multiplier, shift = quantize_multiplier(scale)
    table = bytearray(256)
    for v in range(-128, 128):
        value = v - x_zp
        if value <= 0:
            table[v & 0xFF] = 127
            continue
        inv_multiplier, inv_shift = _inv_sqrt_multiplier(value)
        data = _multiply_by_quantized_multiplier_int32(1, inv_multiplier, inv_shift + RSQRT_SHIFT)
        out = _multiply_by_quantized_multiplier_int32(data, multiplier, shift - RSQRT_SHIFT) + y_zp
        table[v & 0xFF] = _table_byte(out)
    return bytes(table)


def _smaller_than_one(real):
    """QuantizeMultiplierSmallerThanOneExp: (multiplier, exponent <= 0)."""
    multiplier, exponent = quantize_multiplier(real)
    if exponent > 0:
        raise Unsupported(f"a rescaling factor {real:g} of 1 or more (TFLite's kernel refuses it)")
    return multiplier, exponent


SQUARED_DIFFERENCE_LEFT_SHIFT = 7


def squared_difference_table(a_scale, a_zp, b_scale, b_zp, y_scale, y_zp):
    """65536 bytes [a + 128][b + 128]: TFLite's int8 SQUARED_DIFFERENCE (kernels/squared_difference.cc):
    both inputs shifted left by 7 and scaled to the larger scale's half (31-bit multipliers), their
    difference squared in int32, scaled to the output."""
    a, b, y = (float(float32(s)) for s in (a_scale, b_scale, y_scale))
    twice_max = 2 * max(a, b)
    a_multiplier, a_shift = _smaller_than_one(a / twice_max)
    b_multiplier, b_shift = _smaller_than_one(b / twice_max)
    y_multiplier, y_shift = _smaller_than_one(twice_max * twice_max / ((1 << 2 * SQUARED_DIFFERENCE_LEFT_SHIFT) * y))

    def scaled(v, zp, multiplier, shift):
        return multiply_by_quantized_multiplier((v - zp) << SQUARED_DIFFERENCE_LEFT_SHIFT, multiplier, shift)

    a_values = [scaled(v, a_zp, a_multiplier, a_shift) for v in range(-128, 128)]
    b_values = [scaled(v, b_zp, b_multiplier, b_shift) for v in range(-128, 128)]
    # the output step, multiply_by_quantized_multiplier(d * d, ...) of a non-negative square, unrolled (this
    # table is 65,536 of them): (x * m + 2^30) >> 31, then a rounding right shift by -y_shift
    exponent = -y_shift
    mask, half = (1 << exponent) - 1, ((1 << exponent) - 1) >> 1
    table = bytearray(65536)
    for i, sa in enumerate(a_values):
        row = []
        for sb in b_values:
            high = ((sa - sb) * (sa - sb) * y_multiplier + (1 << 30)) >> 31
            row.append((high >> exponent) + ((high & mask) > half) + y_zp)
        table[i * 256:(i + 1) * 256] = bytes(min(max(q, -128), 127) & 0xFF for q in row)
    return bytes(table)


def _one_over_one_plus_x(a):
    """gemmlowp's one_over_one_plus_x_for_x_in_0_1 on raw Q0.31 values (Newton-Raphson in Q2.29)."""
    half_denominator = _truncating_div(a + INT32_MAX + (1 if a + INT32_MAX >= 0 else -1), 2)
    x = _wrap32(1515870810 + _rounding_doubling_high_mul32(half_denominator, -1010580540))
    for _ in range(3):
        one_minus = _wrap32((1 << 29) - _rounding_doubling_high_mul32(half_denominator, x))
        x = _wrap32(x + _saturating_shift_left(_rounding_doubling_high_mul32(x, one_minus), 2))
    return _saturating_shift_left(x, 1)   # Rescale<0>(ExactMulByPot<-1>(x)): Q1.30 to Q0.31


def _reciprocal(x):
    """TFLite's GetReciprocal(x, 31): (1 / x as a Q0.31 multiplier, the bits of x above 1.0)."""
    headroom_plus_one = _count_leading_zeros32(x)
    shifted_minus_one = _wrap32((x << headroom_plus_one) - (1 << 31))
    return _one_over_one_plus_x(shifted_minus_one), 31 - headroom_plus_one


def _rounding_divide_by_pot_x86(x, exponent):
    """gemmlowp's RoundingDivideByPOT(int32 x, exponent) as LiteRT's x86 build computes it, also for an
    exponent of 32 or more (C's undefined shifts, which DIV's tiny quotients reach): the mask
    (1ll << exponent) - 1 truncated to int32 (all ones), the shift count taken modulo 32 (sar),
    as measured with ai-edge-litert 2.3."""
    if exponent < 32:
        return rounding_divide_by_pot(x, exponent)
    mask = _wrap32(((1 << (exponent & 63)) - 1) & 0xFFFFFFFF)
    threshold = (mask >> 1) + (1 if x < 0 else 0)
    return (x >> (exponent & 31)) + (1 if _wrap32(x & mask) > threshold else 0)


def _count_leading_sign_bits32(x):
    return 31 if x == 0 else 32 - (x if x >= 0 else ~x).bit_length() - 1


def div_table(a_scale, a_zp, b_scale, b_zp, y_scale, y_zp, lo=-128, hi=127):
    """65536 bytes [a + 128][b + 128]: TFLite's int8 DIV (reference_ops DivElementwise): b's reciprocal
    by gemmlowp's Newton-Raphson, a times it with a's headroom, then the output multiplier
    a_scale / (b_scale * y_scale) (float32 arithmetic, QuantizeMultiplier). LiteRT stops with an error
    on a divisor equal to b's zero point; those entries are the output zero point."""
    real = float32(float32(a_scale) / float32(float32(b_scale) * float32(y_scale)))
    y_multiplier, y_shift = quantize_multiplier(real)
    # per numerator and sign (a negative divisor flips both signs): the value shifted by its headroom
    numerators = {sign: [(n << h, h) for n in (sign * (v - a_zp) for v in range(-128, 128))
                         for h in (_count_leading_sign_bits32(n),)] for sign in (1, -1)}
    high_mul = _rounding_doubling_high_mul32
    table = bytearray(65536)
    for j, bv in enumerate(range(-128, 128)):
        denominator = bv - b_zp
        if denominator == 0:
            table[j::256] = bytes([_table_byte(y_zp, lo, hi)]) * 256
            continue
        inverse, recip_shift = _reciprocal(abs(denominator))
        column = [_rounding_divide_by_pot_x86(high_mul(high_mul(shifted, inverse), y_multiplier),
                                              recip_shift + headroom - y_shift) + y_zp
                  for shifted, headroom in numerators[-1 if denominator < 0 else 1]]
        table[j::256] = bytes(min(max(q, lo), hi) & 0xFF for q in column)
    return bytes(table)


_SQRT_2_OVER_PI = float32(math.sqrt(2.0 / math.pi))
_MINUS_SQRT1_2 = float32(-math.sqrt(0.5))


def _gelu(x):
    """kernels/internal/reference/gelu.h GeluTransform, all float32: 0.5f * x * erfc(x * -M_SQRT1_2) (erfc,
    not 1 + erf: the form LiteRT 2.3 computes; 1 + erf in double differs at a tie). erfcf is the system
    libm's: glibc's (numerics.glibc, up to glibc 2.40), which is not correctly rounded; a product landing
    on x.5 one ulp away decides a table entry (46.499996 for glibc's, 46.5 rounded correctly)."""
    return float32(float32(0.5 * x) * glibc.erfcf(float32(x * _MINUS_SQRT1_2)))


def _gelu_tanh(x):
    """GeluTransformApproximate, all float32: 0.5f * x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715f * x^3))).
    tanhf the system libm's, glibc's (numerics.glibc; not correctly rounded either)."""
    cube = float32(float32(float32(float32(0.044715) * x) * x) * x)
    t = glibc.tanhf(float32(_SQRT_2_OVER_PI * float32(x + cube)))
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
