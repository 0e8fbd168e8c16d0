"""Convolutions and matrix products: conv2d, depthwise_conv2d, fully_connected (accumulators, then fp32
requantization), batch_matmul (two activations)."""

import numpy as np

from .common import _requant_scales, _windows, activation_range, conv_output_size, f32, requantize_fp32
from .elementwise import _tflite_multiply


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


def batch_matmul(a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, adj_y=False, fmt="tflite"):
    """Y[batch] = A[batch] B[batch] (numpy's matmul broadcasting; b [..., N, K] with adj_y). The fp32
    requantization with float32(float32(a_scale * b_scale) / y_scale) for ONNX (onnxruntime's
    QLinearMatMul) and for TFLite where B's zero point is 0 (XNNPACK's); else int32 sums, then TFLite's
    fixed-point multiplier of the double a_scale * b_scale / y_scale (LiteRT's builtin kernel)."""
    b = np.swapaxes(b, -1, -2) if adj_y else b
    acc = np.matmul(a.astype(np.int64) - a_zp, b.astype(np.int64) - b_zp)
    if fmt == "onnx" or b_zp == 0:
        return requantize_fp32(acc, f32(f32(a_scale * b_scale) / y_scale), y_zp)
    return np.clip(_tflite_multiply(acc, a_scale * b_scale / y_scale) + y_zp, -128, 127).astype(np.int8)
