"""Resize: bilinear (TFLite, onnxruntime's forms) and nearest."""

import numpy as np

from .common import f32, round_half_away


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
