"""Numpy reference of the int8 ops, written from the TFLite int8 semantics as qnnweb defines them
(wasm_kernels/include/qnnweb.h, wasm_kernels/src/operators/*.c).

Every function takes plain numpy arrays and Python numbers and is independent of qnnweb: the
quantization parameters a test gives its graph are the ones it gives these functions.

Conventions
  * activations are NHWC int8; conv weights OHWI int8, depthwise weights [1, KH, KW, C*M] int8;
    scales per tensor or per output channel; weights are symmetric (zero point 0) except that conv2d
    and fully_connected take a per-tensor weight zero point w_zp; bias is int32.
  * padding is (top, bottom, left, right); stride and dilation are (h, w).
  * fp32 requantization (XNNPACK "minmax_fp32", qnnweb.h): float32(acc) * float32(scale), clamped
    in float32 to [min - zp, max - zp], rounded half to even, plus zp.
  * convolution requantization scales are float32(float32(input_scale * weight_scale) / output_scale),
    as the frontend, XNNPACK and onnxruntime compute them; other ops' scales are computed in float64
    and rounded to float32.
"""

import math

import numpy as np

INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1

# ADD in TFLite models: XNNPACK's qs8 vadd (LiteRT), the larger multiplier with 21 significant bits
# (shift = 20 - exponent), or TFLite's builtin kernel where XNNPACK's delegate refuses the scales
# (add_kernel). ONNX models: onnxruntime's x86 float32 kernel (add_onnxruntime).
ADD_MULTIPLIER_BITS = 21


# ----------------------------------------------------------------------------- helpers

def f32(x):
    """Round a Python/numpy number (or array) to float32."""
    return np.float32(x) if np.ndim(x) == 0 else np.asarray(x, dtype=np.float32)


def round_half_away(x):
    """std::round / TfLiteRound: nearest, ties away from zero (numpy arrays or scalars)."""
    return np.sign(x) * np.floor(np.abs(x) + 0.5)


def activation_range(activation, scale, zero_point):
    """TFLite's CalculateActivationRangeQuantized for int8 outputs (float32 arithmetic)."""
    def quantize(v):
        return zero_point + int(round_half_away(np.float32(v) / np.float32(scale)))

    if activation == "NONE":
        return -128, 127
    if activation == "RELU":
        return max(-128, zero_point), 127
    if activation == "RELU6":
        return max(-128, zero_point), min(127, quantize(6.0))
    if activation == "RELU_N1_TO_1":
        return max(-128, quantize(-1.0)), min(127, quantize(1.0))
    raise ValueError(activation)


def requantize_fp32(acc, scale, zero_point, output_min=-128, output_max=127):
    """int32 accumulators -> int8, exactly as qnn_qs8_requantize_fp32 (requantization.h).

    ``scale`` may be a scalar or an array broadcasting against ``acc`` (per output channel)."""
    acc = np.asarray(acc)
    assert acc.min(initial=0) >= INT32_MIN and acc.max(initial=0) <= INT32_MAX, "int32 accumulator overflow"
    f = acc.astype(np.float32) * np.asarray(scale, dtype=np.float32)
    return quantize_clamped(f, zero_point, output_min, output_max)


def quantize_clamped(f, zero_point, output_min=-128, output_max=127):
    """A float32 value already in the output's units -> int8 (qnn_qs8_quantize_clamped)."""
    f = np.asarray(f, dtype=np.float32)
    lo, hi = np.float32(output_min - zero_point), np.float32(output_max - zero_point)
    f = np.where(f < lo, lo, f)
    f = np.where(f > hi, hi, f)
    r = np.rint(f)  # round half to even, in float32
    r = np.where(np.isnan(r), 0, r)  # (int32_t) of NaN is 0 with nontrapping float-to-int
    return (r.astype(np.int32) + zero_point).astype(np.int8)


def conv_output_size(size, kernel, stride, dilation, before, after):
    return (size + before + after - ((kernel - 1) * dilation + 1)) // stride + 1


def same_padding(size, kernel, stride, dilation=1):
    """TFLite's SAME padding: (before, after), the extra one after."""
    effective = (kernel - 1) * dilation + 1
    out = -(-size // stride)
    total = max((out - 1) * stride + effective - size, 0)
    return total // 2, total - total // 2


def _windows(x, kernel, stride, dilation, padding, out_hw):
    """Yields (ky, kx, view) with view[n, oy, ox, c] = padded input at the tap (ky, kx)."""
    kh, kw = kernel
    (sh, sw), (dh, dw) = stride, dilation
    top, bottom, left, right = padding
    oh, ow = out_hw
    xp = np.pad(x, ((0, 0), (top, max(bottom, 0)), (left, max(right, 0)), (0, 0)))
    for ky in range(kh):
        for kx in range(kw):
            y0, x0 = ky * dh, kx * dw
            yield ky, kx, xp[:, y0:y0 + (oh - 1) * sh + 1:sh, x0:x0 + (ow - 1) * sw + 1:sw, :]


def _requant_scales(input_scale, weight_scales, output_scale, channels):
    weight_scales = list(weight_scales)
    if len(weight_scales) == 1:
        weight_scales = weight_scales * channels
    assert len(weight_scales) == channels
    # float32 arithmetic in this order, as the frontend (qnnweb/ops/conv.py), XNNPACK and onnxruntime
    return np.array([np.float32(np.float32(float(input_scale) * float(s)) / np.float32(output_scale))
                     for s in weight_scales], dtype=np.float32)


# ----------------------------------------------------------------------------- convolutions

def conv2d_acc(x, x_zp, w, bias, stride=(1, 1), dilation=(1, 1), padding=(0, 0, 0, 0), w_zp=0):
    """int64 accumulators bias + sum((x - x_zp) * (w - w_zp)), NHWC input, OHWI weights; weights with
    fewer input channels than x make a grouped convolution (groups = ic / wic)."""
    n, ih, iw, ic = x.shape
    oc, kh, kw, wic = w.shape
    assert ic % wic == 0 and oc % (ic // wic) == 0
    groups = ic // wic
    if groups > 1:
        ocg = oc // groups
        group_zp = (lambda g: np.asarray(w_zp)[g * ocg:(g + 1) * ocg]) if np.ndim(w_zp) else (lambda g: w_zp)
        return np.concatenate([conv2d_acc(x[..., g * wic:(g + 1) * wic], x_zp, w[g * ocg:(g + 1) * ocg],
                                          None if bias is None else np.asarray(bias)[g * ocg:(g + 1) * ocg],
                                          stride, dilation, padding, group_zp(g)) for g in range(groups)], axis=-1)
    oh = conv_output_size(ih, kh, stride[0], dilation[0], padding[0], padding[1])
    ow = conv_output_size(iw, kw, stride[1], dilation[1], padding[2], padding[3])
    assert oh >= 1 and ow >= 1
    xc = x.astype(np.float64) - x_zp          # padding with 0 here == padding with x_zp before
    wf = w.astype(np.float64) - np.reshape(w_zp, (-1, 1, 1, 1) if np.ndim(w_zp) else ())  # per tensor / channel
    acc = np.zeros((n, oh, ow, oc), dtype=np.float64)  # integers < 2**53: exact in float64
    for ky, kx, view in _windows(xc, (kh, kw), stride, dilation, padding, (oh, ow)):
        acc += view @ wf[:, ky, kx, :].T
    acc = acc.astype(np.int64)
    if bias is not None:
        acc += np.asarray(bias, dtype=np.int64)
    return acc


def conv2d(x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride=(1, 1), dilation=(1, 1),
           padding=(0, 0, 0, 0), activation="NONE", w_zp=0):
    """w_zp: a per-tensor weight zero point (ONNX's asymmetric weights); 0 in TFLite models."""
    acc = conv2d_acc(x, x_zp, w, bias, stride, dilation, padding, w_zp)
    scales = _requant_scales(x_scale, w_scales, y_scale, w.shape[0])
    lo, hi = activation_range(activation, y_scale, y_zp)
    return requantize_fp32(acc, scales, y_zp, lo, hi)


def depthwise_conv2d_acc(x, x_zp, w, bias, stride=(1, 1), dilation=(1, 1), padding=(0, 0, 0, 0)):
    """w: [1, KH, KW, C * M]; output channel c reads input channel c // M."""
    n, ih, iw, ic = x.shape
    one, kh, kw, oc = w.shape
    assert one == 1 and oc % ic == 0
    m = oc // ic
    oh = conv_output_size(ih, kh, stride[0], dilation[0], padding[0], padding[1])
    ow = conv_output_size(iw, kw, stride[1], dilation[1], padding[2], padding[3])
    assert oh >= 1 and ow >= 1
    xc = np.repeat(x.astype(np.int64) - x_zp, m, axis=3)
    acc = np.zeros((n, oh, ow, oc), dtype=np.int64)
    for ky, kx, view in _windows(xc, (kh, kw), stride, dilation, padding, (oh, ow)):
        acc += view * w[0, ky, kx, :].astype(np.int64)
    if bias is not None:
        acc += np.asarray(bias, dtype=np.int64)
    return acc


def depthwise_conv2d(x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride=(1, 1), dilation=(1, 1),
                     padding=(0, 0, 0, 0), activation="NONE"):
    acc = depthwise_conv2d_acc(x, x_zp, w, bias, stride, dilation, padding)
    scales = _requant_scales(x_scale, w_scales, y_scale, w.shape[3])
    lo, hi = activation_range(activation, y_scale, y_zp)
    return requantize_fp32(acc, scales, y_zp, lo, hi)


def fully_connected(x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, activation="NONE", w_zp=0):
    """x: any shape whose size is a multiple of K; w: [OC, K] with a zero point w_zp per tensor or per
    output channel. Returns [rows, OC]."""
    oc, k = w.shape
    rows = x.reshape(-1, k).astype(np.float64) - x_zp
    acc = (rows @ (w.astype(np.float64) - np.reshape(w_zp, (-1, 1) if np.ndim(w_zp) else ())).T).astype(np.int64)
    if bias is not None:
        acc += np.asarray(bias, dtype=np.int64)
    scales = _requant_scales(x_scale, w_scales, y_scale, oc)
    lo, hi = activation_range(activation, y_scale, y_zp)
    return requantize_fp32(acc, scales, y_zp, lo, hi)


# ----------------------------------------------------------------------------- element-wise

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
    """float32 -> int8: rint(x / scale) + zero point in float32 (ONNX's and TFLite's reference kernels)."""
    return quantize_clamped(np.asarray(x, dtype=np.float32) / np.float32(scale), zero_point)


def quantize_litert(x, scale, zero_point):
    """float32 -> int8 as LiteRT's default kernels (XNNPACK's convert): rint(x * (1 / scale)) + zero point,
    the reciprocal rounded to float32 first."""
    return quantize_clamped(np.asarray(x, dtype=np.float32) * (np.float32(1) / np.float32(scale)), zero_point)


def dequantize(x, scale, zero_point):
    return (x.astype(np.int32) - zero_point).astype(np.float32) * np.float32(scale)


def _channel_view(values, shape, axis):
    """Per-channel parameters shaped to broadcast along ``axis`` of ``shape``."""
    view = [1] * len(shape)
    view[axis] = len(values)
    return np.asarray(values).reshape(view)


def quantize_per_axis(x, scales, zero_points, axis):
    """ONNX QuantizeLinear with ``axis``: element-wise ``quantize`` with its channel's scale and zero point."""
    scales = _channel_view(np.asarray(scales, dtype=np.float32), x.shape, axis)
    zero_points = _channel_view(np.asarray(zero_points, dtype=np.int32), x.shape, axis)
    f = np.asarray(x, dtype=np.float32) / scales
    lo, hi = (-128 - zero_points).astype(np.float32), (127 - zero_points).astype(np.float32)
    f = np.where(f < lo, lo, f)
    f = np.where(f > hi, hi, f)
    r = np.rint(f)
    r = np.where(np.isnan(r), 0, r)
    return (r.astype(np.int32) + zero_points).astype(np.int8)


def dequantize_per_axis(x, scales, zero_points, axis):
    scales = _channel_view(np.asarray(scales, dtype=np.float32), x.shape, axis)
    zero_points = _channel_view(np.asarray(zero_points, dtype=np.int32), x.shape, axis)
    return (x.astype(np.int32) - zero_points).astype(np.float32) * scales


def requantize(x, x_scale, x_zp, y_scale, y_zp):
    scale = np.float32(float(x_scale) / float(y_scale))
    return quantize_clamped((x.astype(np.int32) - x_zp).astype(np.float32) * scale, y_zp)


# ----------------------------------------------------------------------------- pooling, pad, softmax

def _pool_windows(ih, iw, kernel, stride, padding, out_hw):
    """(oy, ox, rows, cols) of every output pixel: the window's valid input rows and columns (ranges,
    empty when the window lies in the padding)."""
    (kh, kw), (sh, sw), (top, _, left, _) = kernel, stride, padding
    for oy in range(out_hw[0]):
        y0 = oy * sh - top
        for ox in range(out_hw[1]):
            x0 = ox * sw - left
            yield oy, ox, range(max(y0, 0), min(y0 + kh, ih)), range(max(x0, 0), min(x0 + kw, iw))


def _average_half_away(total, count):
    """TFLite's integer average: total / count rounded half away from zero (C division truncates)."""
    half = count // 2
    return np.where(total >= 0, (total + half) // count, -((-(total - half)) // count))


def average_pool2d(x, x_scale, x_zp, y_scale, y_zp, kernel, stride, padding=(0, 0, 0, 0), activation="NONE",
                   out_hw=None):
    """Average over the valid (unpadded) taps. Same quantization (scale ratio exactly 1 in float32
    and equal zero points): TFLite's integer average, rounded half away from zero. Otherwise
    float32((sum - n * x_zp)) * float32(float32(scale) / float32(n)), fp32-requantized."""
    n, ih, iw, c = x.shape
    kh, kw = kernel
    sh, sw = stride
    top, bottom, left, right = padding
    if out_hw is None:
        out_hw = (conv_output_size(ih, kh, sh, 1, top, bottom), conv_output_size(iw, kw, sw, 1, left, right))
    oh, ow = out_hw
    scale = np.float32(float(x_scale) / float(y_scale))
    lo, hi = activation_range(activation, y_scale, y_zp)
    same = scale == np.float32(1.0) and x_zp == y_zp
    out = np.empty((n, oh, ow, c), dtype=np.int8)
    xi = x.astype(np.int64)
    for oy, ox, rows, cols in _pool_windows(ih, iw, kernel, stride, padding, out_hw):
        count = len(rows) * len(cols)
        total = xi[:, rows.start:rows.stop, cols.start:cols.stop, :].sum(axis=(1, 2)) if count else np.zeros((n, c), np.int64)
        if same:
            avg = _average_half_away(total, count) if count else np.zeros_like(total)
            out[:, oy, ox, :] = np.clip(avg, lo, hi)
        else:
            multiplier = scale / np.float32(count) if count else np.float32(0)
            f = (total - count * x_zp).astype(np.float32) * np.float32(multiplier)
            out[:, oy, ox, :] = quantize_clamped(f, y_zp, lo, hi)
    return out


def average_pool2d_onnx(x, x_scale, x_zp, y_scale, y_zp, kernel, stride, padding=(0, 0, 0, 0), activation="NONE",
                        count_include_pad=False):
    """onnxruntime's QLinearAveragePool (contrib_ops/cpu/quantization/qlinear_pool.cc), NHWC int8:
    every tap dequantized to float32(x_scale * (x - x_zp)), summed in float32 in window order (rows,
    then columns; padded taps skipped), divided by the count (valid taps, or KH*KW with
    count_include_pad) in float32, then rint(float32(avg / y_scale) + y_zp), clamped. When the
    window is the whole unpadded image onnxruntime runs its global kernel: average_pool2d_onnx_global."""
    n, ih, iw, c = x.shape
    kh, kw = kernel
    sh, sw = stride
    top, bottom, left, right = padding
    oh, ow = conv_output_size(ih, kh, sh, 1, top, bottom), conv_output_size(iw, kw, sw, 1, left, right)
    lo, hi = activation_range(activation, y_scale, y_zp)
    xf = np.float32(x_scale) * (x.astype(np.int32) - x_zp).astype(np.float32)
    out = np.empty((n, oh, ow, c), dtype=np.int8)
    for oy, ox, rows, cols in _pool_windows(ih, iw, kernel, stride, padding, (oh, ow)):
        acc = np.zeros((n, c), np.float32)
        for yy in rows:
            for xx in cols:
                acc = (acc + xf[:, yy, xx, :]).astype(np.float32)
        count = kh * kw if count_include_pad else len(rows) * len(cols)
        if count == 0:
            out[:, oy, ox, :] = lo
            continue
        f = (acc / np.float32(count)).astype(np.float32)
        f = ((f / np.float32(y_scale)).astype(np.float32) + np.float32(y_zp)).astype(np.float32)
        out[:, oy, ox, :] = np.clip(np.rint(f), lo, hi).astype(np.int8)
    return out


def average_pool2d_onnx_global(x, x_scale, x_zp, y_scale, y_zp, activation="NONE"):
    """onnxruntime's QLinearGlobalAveragePool (mlas/lib/qlgavgpool.cpp), NHWC int8 -> [N, 1, 1, C]:
    the integer sum(x - x_zp) times float32(x_scale / float32(y_scale * count)), fp32-requantized."""
    n, h, w, c = x.shape
    count = h * w
    scale = np.float32(np.float32(x_scale) / np.float32(np.float32(y_scale) * np.float32(count)))
    total = (x.astype(np.int64) - x_zp).sum(axis=(1, 2)).astype(np.int32)
    lo, hi = activation_range(activation, y_scale, y_zp)
    return requantize_fp32(total, scale, y_zp, lo, hi).reshape(n, 1, 1, c)


def mean_hw(x, x_scale, x_zp, y_scale, y_zp):
    """MEAN over axes (1, 2) of NHWC, kept as [N, 1, 1, C] (a pool over the whole image)."""
    _, h, w, _ = x.shape
    return average_pool2d(x, x_scale, x_zp, y_scale, y_zp, (h, w), (h, w))


def mean_one_axis_xnnpack(x, axis, x_scale, x_zp, y_scale, y_zp):
    """XNNPACK's int8 mean over one axis (LiteRT's delegate's, rank 4), kept: s = f32(x_scale / y_scale)
    * (1 / n), bias = -n * x_zp * s + y_zp, rint(sum * s + bias), every step rounded to float32."""
    n = x.shape[axis]
    s = f32(f32(f32(x_scale) / f32(y_scale)) * f32(f32(1) / f32(n)))
    bias = f32(f32(f32(-n * x_zp) * s) + f32(y_zp))
    total = x.astype(np.int64).sum(axis=axis, keepdims=True).astype(np.float32)
    q = np.clip(f32(f32(total * s) + bias), f32(-128), f32(127))
    return np.rint(q).astype(np.int8)


def pad(x, padding, value):
    """padding: (top, bottom, left, right[, front, back]) of an NHWC tensor (front / back: channels)."""
    top, bottom, left, right, front, back = (tuple(padding) + (0, 0))[:6]
    return np.pad(x, ((0, 0), (top, bottom), (left, right), (front, back)), constant_values=value)


def softmax(x, x_scale, y_scale, y_zp, beta=1.0):
    """float64 softmax over the last axis, quantized: compare with a tolerance of 1."""
    z = (x.astype(np.float64) - x.max(axis=-1, keepdims=True)) * (beta * float(x_scale))
    e = np.exp(z)
    p = e / e.sum(axis=-1, keepdims=True)
    return np.clip(np.rint(p / float(y_scale)) + y_zp, -128, 127).astype(np.int8)


def softmax_onnxruntime(x, x_scale, y_scale, y_zp):
    """onnxruntime 1.32's QLinearSoftmax on x86-64 (int8 rows, the last axis), bit for bit, as its
    wheel's machine code computes it (contrib_ops/cpu/quantization/qlinear_softmax.cc): the table
    exp((i - 255 + bit_shift) * x_scale) in double stored as float32, bit_shift from logf (a float
    log); a sequential float32 sum; out = nearbyint(double(e) * floor(float32(1 / y_scale)) /
    double(sum)) + zp, clamped."""
    f32 = np.float32
    columns = x.shape[-1]
    bit_shift = float(f32(math.log(float(f32(np.finfo(np.float32).max) / f32(columns)))))
    bit_shift = max(0.0, bit_shift - 5.0) / float(f32(x_scale))
    table = np.array([f32(math.exp((-d + bit_shift) * float(f32(x_scale)))) for d in range(256)], f32)
    inverse = float(math.floor(f32(f32(1.0) / f32(y_scale))))
    rows = x.reshape(-1, columns).astype(np.int32)
    out = np.empty(rows.shape, np.int8)
    for r, row in enumerate(rows):
        e = table[row.max() - row]
        total = f32(0)
        for v in e:
            total = f32(total + v)
        if not total > 0:
            out[r] = y_zp
            continue
        q = np.rint(e.astype(np.float64) * inverse / float(total)) + y_zp
        out[r] = np.clip(q, -128, 127).astype(np.int8)
    return out.reshape(x.shape)


# ----------------------------------------------------------------------------- ONNX-era ops

def mul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE"):
    """MUL with numpy broadcasting: float32((a - a_zp) * (b - b_zp)) * float32(a_scale * b_scale / y_scale),
    fp32-requantized (as conv)."""
    scale = np.float32(float(a_scale) * float(b_scale) / float(y_scale))
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


def max_pool2d(x, kernel, stride, dilation=(1, 1), padding=(0, 0, 0, 0), activation="NONE", y_scale=1.0, y_zp=0):
    """Max over the valid taps (padding ignored); a window without one gives the clamp's minimum."""
    n, ih, iw, c = x.shape
    kh, kw = kernel
    top, bottom, left, right = padding
    oh = conv_output_size(ih, kh, stride[0], dilation[0], top, bottom)
    ow = conv_output_size(iw, kw, stride[1], dilation[1], left, right)
    lo, hi = activation_range(activation, y_scale, y_zp)
    neg = np.full((n, ih + top + max(bottom, 0) + kh * dilation[0], iw + left + max(right, 0) + kw * dilation[1], c),
                  -1000, np.int32)
    neg[:, top:top + ih, left:left + iw, :] = x
    out = np.full((n, oh, ow, c), -1000, np.int32)
    for ky, kx, view in _windows(neg, kernel, stride, dilation, (0, 0, 0, 0), (oh, ow)):
        out = np.maximum(out, view)
    return np.clip(out, lo, hi).astype(np.int8)


def average_pool2d_include_pad(x, x_scale, x_zp, y_scale, y_zp, kernel, stride, padding=(0, 0, 0, 0),
                               activation="NONE"):
    """ONNX count_include_pad=1: padded taps are input zero points and every window divides by KH*KW.
    Same quantization: integer average rounded half away from zero; otherwise fp32."""
    n, ih, iw, c = x.shape
    kh, kw = kernel
    top, bottom, left, right = padding
    oh = conv_output_size(ih, kh, stride[0], 1, top, bottom)
    ow = conv_output_size(iw, kw, stride[1], 1, left, right)
    xp = np.full((n, ih + top + bottom + kh, iw + left + right + kw, c), x_zp, np.int64)
    xp[:, top:top + ih, left:left + iw, :] = x
    total = np.zeros((n, oh, ow, c), np.int64)
    for _, _, view in _windows(xp, kernel, stride, (1, 1), (0, 0, 0, 0), (oh, ow)):
        total += view
    count = kh * kw
    scale = np.float32(float(x_scale) / float(y_scale))
    lo, hi = activation_range(activation, y_scale, y_zp)
    if scale == np.float32(1.0) and x_zp == y_zp:
        return np.clip(_average_half_away(total, count), lo, hi).astype(np.int8)
    multiplier = np.float32(scale / np.float32(count))
    return quantize_clamped((total - count * x_zp).astype(np.float32) * multiplier, y_zp, lo, hi)


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


# ----------------------------------------------------------------------------- resize

def _resize_axis_bilinear(in_size, out_size, align_corners, half_pixel_centers):
    """XNNPACK's q11 source coordinates along one axis, vectorized in float32: (first, second, alpha)."""
    adjustment = 1 if align_corners and out_size != 1 else 0
    scale = f32(f32(in_size - adjustment) / f32(out_size - adjustment))
    o = np.arange(out_size, dtype=np.float32)
    if align_corners or not half_pixel_centers:
        v = f32(o * scale)
    else:
        v = np.clip(f32(f32(o * scale) + f32(f32(0.5) * scale - f32(0.5))), 0, in_size - 1).astype(np.float32)
    first = v.astype(np.int64)
    alpha = np.rint(f32(f32(v - first.astype(np.float32)) * f32(2048))).astype(np.int64)
    return first, np.minimum(first + 1, in_size - 1), alpha


def resize_bilinear(x, out_h, out_w, align_corners=False, half_pixel_centers=False):
    """LiteRT's int8 RESIZE_BILINEAR: XNNPACK's s8 ibilinear (q11 weights, one rounding at the end)."""
    y0, y1, ay = _resize_axis_bilinear(x.shape[1], out_h, align_corners, half_pixel_centers)
    x0, x1, ax = _resize_axis_bilinear(x.shape[2], out_w, align_corners, half_pixel_centers)
    v = x.astype(np.int64)
    tl, tr = v[:, y0][:, :, x0], v[:, y0][:, :, x1]
    bl, br = v[:, y1][:, :, x0], v[:, y1][:, :, x1]
    ax, ay = ax[None, None, :, None], ay[None, :, None, None]
    top, bottom = tl * 2048 + (tr - tl) * ax, bl * 2048 + (br - bl) * ax
    return ((top * 2048 + (bottom - top) * ay + (1 << 21)) >> 22).astype(np.int8)


def _onnx_axis_bilinear(in_size, out_size, mode):
    """onnxruntime's SetupUpsampleBilinear along one axis (sizes given: scale = out / in in float32):
    (first, second, d) with d the float32 distance of the clamped source coordinate from the first."""
    scale = f32(f32(out_size) / f32(in_size))
    o = np.arange(out_size, dtype=np.float32)
    if scale == 1:
        v = o
    elif mode == "asymmetric":
        v = f32(o / scale)
    elif mode == "align_corners":
        v = (f32(f32(o * f32(in_size - 1)) / f32(out_size - 1)) if out_size > 1 else np.zeros(1, np.float32))
    elif mode == "pytorch_half_pixel" and out_size == 1:
        v = np.zeros(1, np.float32)
    else:   # half_pixel, pytorch_half_pixel
        v = f32(f32(f32(o + f32(0.5)) / scale) - f32(0.5))
    v = np.clip(v, f32(0), f32(in_size - 1)).astype(np.float32)
    first = np.minimum(v.astype(np.int64), in_size - 1)
    second = np.minimum(first + 1, in_size - 1)
    d = np.where(first == second, f32(0.5), f32(v - first.astype(np.float32))).astype(np.float32)
    return first, second, d, v


def resize_bilinear_onnx(x, out_h, out_w, mode, arithmetic, scale=1.0, zero_point=0, output_scale=None,
                         output_zero_point=None):
    """onnxruntime's bilinear Resize of NHWC int8 ``x``: "float" (QDQ: the dequantized values, each
    corner's weight a product of float32 axis weights, summed left to right, quantized with rint),
    "float_truncate" (QOperator in NCHW: the int8 values so, truncated) or "q10" (QOperator in NHWC:
    1/1024 integer weights, the sum divided by 2^20 toward zero). "float" quantizes with the output's
    parameters (by default the input's); "float_output" returns its float32 sum unquantized."""
    y0, y1, dy, vy = _onnx_axis_bilinear(x.shape[1], out_h, mode)
    x0, x1, dx, vx = _onnx_axis_bilinear(x.shape[2], out_w, mode)
    corners = [x[:, a][:, :, b] for a in (y0, y1) for b in (x0, x1)]   # tl, tr, bl, br
    if arithmetic == "q10":
        def q10(v, first, second):
            d = np.where(first == second, 512, f32(v * f32(1024)).astype(np.int64) - first * 1024)
            return d, 1024 - d
        dx1, dx2 = (w[None, None, :, None] for w in q10(vx, x0, x1))
        dy1, dy2 = (w[None, :, None, None] for w in q10(vy, y0, y1))
        tl, tr, bl, br = (c.astype(np.int64) for c in corners)
        total = dx2 * dy2 * tl + dx1 * dy2 * tr + dx2 * dy1 * bl + dx1 * dy1 * br
        return (np.sign(total) * (np.abs(total) >> 20)).astype(np.int8)
    dx1, dx2 = dx[None, None, :, None], f32(f32(1) - dx)[None, None, :, None]
    dy1, dy2 = dy[None, :, None, None], f32(f32(1) - dy)[None, :, None, None]
    s, zero_point = (np.float32(scale), zero_point) if arithmetic in ("float", "float_output") else (np.float32(1), 0)
    tl, tr, bl, br = (f32((c.astype(np.int32) - zero_point).astype(np.float32) * s) for c in corners)
    total = f32(f32(f32(dx2 * dy2) * tl) + f32(f32(dx1 * dy2) * tr))
    total = f32(total + f32(f32(dx2 * dy1) * bl))
    total = f32(total + f32(f32(dx1 * dy1) * br))
    if arithmetic == "float_truncate":
        return np.trunc(total).astype(np.int8)
    if arithmetic == "float_output":   # the float32 sum is the output
        return total.astype(np.float32)
    y_s = s if output_scale is None else np.float32(output_scale)
    y_zp = zero_point if output_zero_point is None else output_zero_point
    q = np.rint(np.clip(f32(total / y_s), f32(-128 - y_zp), f32(127 - y_zp)))
    return (q.astype(np.int32) + y_zp).astype(np.int8)


def _nearest_indices(in_size, out_size, align_corners, half_pixel_centers):
    if not align_corners and not half_pixel_centers:  # TFLite's optimized kernel: 16.16 fixed point
        scale = (in_size << 16) // out_size + 1
        return np.minimum((np.arange(out_size, dtype=np.int64) * scale) >> 16, in_size - 1)
    scale = (f32(f32(in_size - 1) / f32(out_size - 1)) if align_corners and out_size > 1
             else f32(f32(in_size) / f32(out_size)))
    v = f32(f32(np.arange(out_size, dtype=np.float32) + f32(0.5 if half_pixel_centers else 0)) * scale)
    i = (round_half_away(v) if align_corners else np.floor(v)).astype(np.int64)
    i = np.minimum(i, in_size - 1)
    return np.maximum(i, 0) if half_pixel_centers else i


def resize_nearest(x, out_h, out_w, align_corners=False, half_pixel_centers=False):
    """TFLite's RESIZE_NEAREST_NEIGHBOR (the builtin kernel: fixed point without options, else float32)."""
    rows = _nearest_indices(x.shape[1], out_h, align_corners, half_pixel_centers)
    columns = _nearest_indices(x.shape[2], out_w, align_corners, half_pixel_centers)
    return x[:, rows][:, :, columns]
