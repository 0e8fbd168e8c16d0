"""Element-wise ops: ADD in each runtime's arithmetic, MUL, PRELU, (de)quantization, concatenation, tables."""

import math

import numpy as np

from .common import activation_range, quantize_clamped, requantize_fp32, round_half_away


# ADD in TFLite models: XNNPACK's qs8 vadd (LiteRT), the larger multiplier with 21 significant bits
# (shift = 20 - exponent), or TFLite's builtin kernel where XNNPACK's delegate refuses the scales
# (add_kernel). ONNX models: onnxruntime's x86 float32 kernel (add_onnxruntime).
ADD_MULTIPLIER_BITS = 21


def add_kernel(a_scale, b_scale, y_scale):
    """Which ADD LiteRT runs for a TFLite model: "xnnpack" when its delegate takes the op (each input /
    output scale ratio, in float32, in [2**-10, 2**8)), "builtin" (TFLite's kernels/add.cc) when a
    ratio is below that, None when one is 2**8 or more (the builtin kernel overflows; qnnweb refuses)."""
    ratios = [np.float32(np.float32(s) / np.float32(y_scale)) for s in (a_scale, b_scale)]
    if any(r >= 2.0 ** 8 for r in ratios):
        return None
    return "xnnpack" if all(r >= 2.0 ** -10 for r in ratios) else "builtin"


def add_parameters(a_scale, b_scale, y_scale):
    """XNNPACK's fixed-point ADD parameters exactly as qnn_create_add (add.c) computes them:
    (a_multiplier, b_multiplier, shift)."""
    a_mul = np.float32(float(a_scale) / float(y_scale))
    b_mul = np.float32(float(b_scale) / float(y_scale))
    max_abs = max(abs(a_mul), abs(b_mul))
    exponent = int(np.frexp(max_abs)[1]) - 1  # max_abs = m * 2**exponent, 1 <= m < 2
    shift = ADD_MULTIPLIER_BITS - 1 - exponent
    a_m = int(np.rint(np.float32(a_mul * np.float32(2.0 ** shift))))
    b_m = int(np.rint(np.float32(b_mul * np.float32(2.0 ** shift))))
    return a_m, b_m, shift


def add(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE", fmt="tflite"):
    """TFLite, XNNPACK's: out = clamp((2**(shift-1) + (a - a_zp) * a_m + (b - b_zp) * b_m) >> shift) + y_zp,
    computed without overflow (int64): a kernel whose int32 arithmetic wraps differs from this; or
    add_tflite_builtin where LiteRT runs that (add_kernel). ONNX: add_onnxruntime (int8 model, vector
    on vector)."""
    if fmt == "onnx":
        return add_onnxruntime(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation)
    kernel = add_kernel(a_scale, b_scale, y_scale)
    assert kernel is not None
    if kernel == "builtin":
        return add_tflite_builtin(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation)
    a_m, b_m, shift = add_parameters(a_scale, b_scale, y_scale)
    lo, hi = activation_range(activation, y_scale, y_zp)
    acc = (1 << (shift - 1)) + (a.astype(np.int64) - a_zp) * a_m + (b.astype(np.int64) - b_zp) * b_m
    out = acc >> shift  # floor
    out = np.clip(out, lo - y_zp, hi - y_zp) + y_zp
    return out.astype(np.int8)


def _tflite_multiplier(real):
    """QuantizeMultiplierSmallerThanOneExp: (31-bit multiplier in [2**30, 2**31), right shift)."""
    if real == 0.0:
        return 0, 0
    q, exponent = math.frexp(real)
    fixed = int(round_half_away(q * 2.0 ** 31))
    if fixed == 1 << 31:
        fixed, exponent = fixed // 2, exponent + 1
    if exponent < -31:
        return 0, 0
    assert exponent <= 0
    return fixed, -exponent


def _gemmlowp_multiply(x, multiplier, shift):
    """SaturatingRoundingDoublingHighMul(x, multiplier) then RoundingDivideByPOT(., shift), on int64 arrays."""
    product = x.astype(np.int64) * multiplier
    nudged = product + np.where(product >= 0, 1 << 30, 1 - (1 << 30))
    high = np.sign(nudged) * (np.abs(nudged) >> 31)  # C division, toward zero
    mask = (1 << shift) - 1
    threshold = (mask >> 1) + (high < 0)
    return (high >> shift) + ((high & mask) > threshold)


def _tflite_multiply(x, real):
    """MultiplyByQuantizedMultiplier(x, QuantizeMultiplier(real)) for any exponent: left shift first."""
    q, exponent = math.frexp(real)
    fixed = int(round_half_away(q * 2.0 ** 31))
    if fixed == 1 << 31:
        fixed, exponent = fixed // 2, exponent + 1
    return _gemmlowp_multiply(x.astype(np.int64) << max(exponent, 0), fixed, max(-exponent, 0))


def prelu(x, x_scale, x_zp, alpha, a_scale, a_zp, y_scale, y_zp):
    """TFLite's reference int8 PRELU, alpha broadcast along the last axis; its real multipliers are
    float32 arithmetic on the float32 scales (kernels/prelu.cc)."""
    v = x.astype(np.int64) - x_zp
    positive = _tflite_multiply(v, float(np.float32(x_scale) / np.float32(y_scale)))
    negative = _tflite_multiply(v * (alpha.astype(np.int64) - a_zp),
                                float(np.float32(np.float32(x_scale) * np.float32(a_scale)) / np.float32(y_scale)))
    return np.clip(np.where(v >= 0, positive, negative) + y_zp, -128, 127).astype(np.int8)


def add_tflite_builtin(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE"):
    """TFLite's builtin integer ADD (kernels/add.cc Prepare; reference_integer_ops::AddElementwise):
    inputs shifted left by 20 bits, each scaled by scale / (2 * max scale), the sum by
    2 * max scale / (2**20 * y_scale); the ratios in float64 of the float32 scales."""
    sa, sb, sy = (float(np.float32(s)) for s in (a_scale, b_scale, y_scale))
    twice_max = 2 * max(sa, sb)
    terms = [_gemmlowp_multiply((x.astype(np.int64) - zp) << 20, *_tflite_multiplier(scale / twice_max))
             for x, zp, scale in ((a, a_zp, sa), (b, b_zp, sb))]
    out = _gemmlowp_multiply(terms[0] + terms[1], *_tflite_multiplier(twice_max / (2.0 ** 20 * sy))) + y_zp
    lo, hi = activation_range(activation, y_scale, y_zp)
    return np.clip(out, lo, hi).astype(np.int8)


def _fma32(x, y, z):
    """float32 fused multiply-add of arrays (float64 holds the exact product; one rounding to float32)."""
    return (np.asarray(x, np.float64) * np.asarray(y, np.float64) + np.asarray(z, np.float64)).astype(np.float32)


def add_onnxruntime(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE", uint8=False,
                    scalar=None):
    """onnxruntime's x86 QLinearAdd (mlas/lib/intrinsics/avx2/qladd_avx2.cpp, its multiply-adds
    contracted to FMAs) on int8 data (a uint8 model's values as int8, x - 128, with uint8=True): in the
    model's own domain, with x the kernel's vector operand and y the other, rx = sx / sc, ry = sy / sc
    in float32, f = zc - fma(rx, zx, ry * zy), v = fma(x, rx, fma(y, ry, f)). x is a, unless
    ``scalar`` is "a" (its broadcasting hands a over as a per-span scalar: the kernel's second operand)."""
    if scalar == "a":
        a, a_scale, a_zp, b, b_scale, b_zp = b, b_scale, b_zp, a, a_scale, a_zp
    offset = 128 if uint8 else 0
    ra = np.float32(np.float32(a_scale) / np.float32(y_scale))
    rb = np.float32(np.float32(b_scale) / np.float32(y_scale))
    za, zb, zc = (np.float32(z + offset) for z in (a_zp, b_zp, y_zp))
    fixed = np.float32(zc - _fma32(ra, za, np.float32(rb * zb)))
    v = _fma32(a.astype(np.float32) + offset, ra, _fma32(b.astype(np.float32) + offset, rb, fixed))
    q = np.clip(np.rint(v), -128 + offset, 127 + offset) - offset
    lo, hi = activation_range(activation, y_scale, y_zp)
    return np.clip(q, lo, hi).astype(np.int8)


def add_float(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE"):
    """The real-number ADD, for a loose (+-1) sanity check of the fixed-point one."""
    real = (a.astype(np.float64) - a_zp) * a_scale + (b.astype(np.float64) - b_zp) * b_scale
    lo, hi = activation_range(activation, y_scale, y_zp)
    return np.clip(np.rint(real / y_scale) + y_zp, lo, hi).astype(np.int8)


def quantize(x, scale, zero_point):
    """float32 -> int8: rint(x / scale) + zero point in float32 (ONNX's and TFLite's reference kernels); NaN
    -128, as onnxruntime's QuantizeLinear (MLAS clamps with maxps(x, low) first, which gives the low bound)."""
    scaled = np.asarray(x, dtype=np.float32) / np.float32(scale)
    return quantize_clamped(np.where(np.isnan(scaled), np.float32(-128 - zero_point), scaled), zero_point)


def quantize_litert(x, scale, zero_point):
    """float32 -> int8 as LiteRT's default kernels (XNNPACK's convert): rint(x * (1 / scale)) + zero point,
    the reciprocal rounded to float32 first."""
    return quantize_clamped(np.asarray(x, dtype=np.float32) * (np.float32(1) / np.float32(scale)), zero_point)


def dequantize(x, scale, zero_point):
    return (x.astype(np.int32) - zero_point).astype(np.float32) * np.float32(scale)


def channel_view(values, shape, axis):
    """Per-channel parameters shaped to broadcast along ``axis`` of ``shape``."""
    view = [1] * len(shape)
    view[axis] = len(values)
    return np.asarray(values).reshape(view)


def quantize_per_axis(x, scales, zero_points, axis):
    """ONNX QuantizeLinear with ``axis``: element-wise ``quantize`` with its channel's scale and zero point."""
    scales = channel_view(np.asarray(scales, dtype=np.float32), x.shape, axis)
    zero_points = channel_view(np.asarray(zero_points, dtype=np.int32), x.shape, axis)
    f = np.asarray(x, dtype=np.float32) / scales
    lo, hi = (-128 - zero_points).astype(np.float32), (127 - zero_points).astype(np.float32)
    f = np.where(f < lo, lo, f)
    f = np.where(f > hi, hi, f)
    r = np.rint(f)
    r = np.where(np.isnan(r), 0, r)
    return (r.astype(np.int32) + zero_points).astype(np.int8)


def dequantize_per_axis(x, scales, zero_points, axis):
    scales = channel_view(np.asarray(scales, dtype=np.float32), x.shape, axis)
    zero_points = channel_view(np.asarray(zero_points, dtype=np.int32), x.shape, axis)
    return (x.astype(np.int32) - zero_points).astype(np.float32) * scales


def requantize(x, x_scale, x_zp, y_scale, y_zp):
    scale = np.float32(float(x_scale) / float(y_scale))
    return quantize_clamped((x.astype(np.int32) - x_zp).astype(np.float32) * scale, y_zp)


def mul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE"):
    """MUL with numpy broadcasting: float32((a - a_zp) * (b - b_zp)) * (float32(a_scale * b_scale) / y_scale)
    (the ratio in float32, as XNNPACK's delegate computes it), fp32-requantized (as conv)."""
    scale = np.float32(np.float32(np.float32(a_scale) * np.float32(b_scale)) / np.float32(y_scale))
    product = (a.astype(np.int32) - a_zp) * (b.astype(np.int32) - b_zp)
    lo, hi = activation_range(activation, y_scale, y_zp)
    return requantize_fp32(product, scale, y_zp, lo, hi)


def mul_onnxruntime(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE", uint8=False):
    """onnxruntime's x86 QLinearMul (mlas/lib/qlmul.cpp, SSE2) on int8 data (a uint8 model's values as
    int8, x - 128, with uint8=True): the ratio sa * sb / sc in float32, then per element
    rint(float32(product) * ratio + zc) with zc in the model's own domain (the addition rounds in float32
    too), saturated."""
    offset = 128 if uint8 else 0
    ratio = np.float32(np.float32(np.float32(a_scale) * np.float32(b_scale)) / np.float32(y_scale))
    product = (a.astype(np.int32) - a_zp) * (b.astype(np.int32) - b_zp)
    v = product.astype(np.float32) * ratio + np.float32(y_zp + offset)   # float32 all through
    q = np.clip(np.rint(v), -128 + offset, 127 + offset) - offset
    lo, hi = activation_range(activation, y_scale, y_zp)
    return np.clip(q, lo, hi).astype(np.int8)


def mul_float(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE"):
    real = (a.astype(np.float64) - a_zp) * a_scale * ((b.astype(np.float64) - b_zp) * b_scale)
    lo, hi = activation_range(activation, y_scale, y_zp)
    return np.clip(np.rint(real / y_scale) + y_zp, lo, hi).astype(np.int8)




def concatenate(inputs, axis, y_scale, y_zp):
    """inputs: [(x, x_scale, x_zp)]; each is requantized (fp32, as requantize) unless its quantization
    is the output's."""
    parts = []
    for x, x_scale, x_zp in inputs:
        same = np.float32(float(x_scale) / float(y_scale)) == np.float32(1.0) and x_zp == y_zp
        parts.append(x if same else requantize(x, x_scale, x_zp, y_scale, y_zp))
    return np.concatenate(parts, axis=axis)


def lut(x, table):
    """x: int8 or uint8 array, table: 256 output values indexed by the input byte."""
    return np.asarray(table)[x.view(np.uint8)]


def unary_table(function, x_dtype, x_scale, x_zp, y_dtype, y_scale, y_zp, lo=None, hi=None):
    """The table of a unary op: float64 function of the dequantized input, rounded half to even."""
    values = np.arange(256).astype(np.uint8).view(x_dtype).astype(np.float64)
    real = np.array([function(v) for v in (values - x_zp) * x_scale])
    info = np.iinfo(y_dtype)
    lo = info.min if lo is None else max(lo, info.min)
    hi = info.max if hi is None else min(hi, info.max)
    return np.clip(np.rint(real / y_scale) + y_zp, lo, hi).astype(y_dtype)


def requantize_table(x_dtype, x_scale, x_zp, y_dtype, y_scale, y_zp):
    """uint8 <-> int8 QUANTIZE, the fp32 requantization of every byte."""
    values = np.arange(256).astype(np.uint8).view(x_dtype).astype(np.int32)
    scale = np.float32(float(x_scale) / float(y_scale))
    f = (values - x_zp).astype(np.float32) * scale
    info = np.iinfo(y_dtype)
    f = np.clip(f, np.float32(info.min - y_zp), np.float32(info.max - y_zp))
    return (np.rint(f).astype(np.int32) + y_zp).astype(y_dtype)
