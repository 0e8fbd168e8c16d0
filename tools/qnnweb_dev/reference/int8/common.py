"""Helpers every reference op uses: float32 rounding, requantization, output sizes and padding, windows."""

import numpy as np


INT32_MIN, INT32_MAX = -(1 << 31), (1 << 31) - 1



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
