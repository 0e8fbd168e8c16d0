"""Pooling, PAD, MEAN and SOFTMAX."""

import math

import numpy as np

from .common import _windows, activation_range, conv_output_size, f32, quantize_clamped, requantize_fp32


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
