"""Numpy reference of dynamic-range int8 (onnxruntime.quantization.quantize_dynamic's models), written from
onnxruntime's CPU kernels: DynamicQuantizeLinear (GetQuantizationParameter + MlasQuantizeLinear),
MatMulInteger (MLAS's integer GEMM, on x86 AVX2 without VNNI its uint8 x int8 kernel's int16 pair
saturation) and the float32 Cast / Mul / Add after it (MLAS_QGEMM_SCALE_BIAS_OUTPUT_PROCESSOR alike)."""

import numpy as np

F32 = np.float32


def dynamic_quantize_linear(x):
    """(uint8 q, float32 scale, int zero point) of float32 ``x``, as onnxruntime computes them."""
    x = np.asarray(x, F32)
    lo, hi = min(F32(0), x.min(initial=F32(0))), max(F32(0), x.max(initial=F32(0)))
    scale = F32(1) if hi == lo else F32(hi - lo) / F32(255)
    zero_point = np.rint(np.clip(F32(0) - lo / scale, F32(0), F32(255)))
    q = np.rint(np.clip(x / scale, -zero_point, F32(255) - zero_point)) + zero_point
    return q.astype(np.uint8), F32(scale), int(zero_point)


def matmul_integer(q, q_zp, w, w_zp, saturate_pairs=False):
    """int32 [..., N] = sum_k (q - q_zp)(w - w_zp[n]) of uint8 ``q`` [..., K] and int8 / uint8 ``w`` [K, N]
    (``w_zp``: a number or one per column). ``saturate_pairs``: onnxruntime's AVX2 uint8 x int8 kernel, whose
    vpmaddubsw adds the raw products of k = 2j and 2j + 1 saturated to int16 before the zero points are
    corrected for."""
    q = np.asarray(q).astype(np.int64)
    w = np.asarray(w).astype(np.int64)
    k, n = w.shape
    w_zp = np.broadcast_to(np.asarray(w_zp, np.int64), (n,))
    if not saturate_pairs:
        return ((q - q_zp) @ (w - w_zp)).astype(np.int32)
    rows = q.reshape(-1, k)
    padded = k + k % 2
    qp = np.zeros((rows.shape[0], padded), np.int64)
    qp[:, :k] = rows
    wp = np.zeros((padded, n), np.int64)
    wp[:k] = w
    pairs = np.einsum("mjt,jtn->mjn", qp.reshape(-1, padded // 2, 2), wp.reshape(padded // 2, 2, n))
    raw = np.clip(pairs, -32768, 32767).sum(axis=1)
    acc = raw - q_zp * w.sum(axis=0) - w_zp * rows.sum(axis=1, keepdims=True) + k * q_zp * w_zp
    return acc.astype(np.int32).reshape(q.shape[:-1] + (n,))


def scaled_output(acc, q_scale, w_scale, bias=None):
    """float32 of int32 ``acc``: Cast, then Mul by float32(q_scale * w_scale[n]), then Add of the bias."""
    multiplier = F32(q_scale) * np.asarray(w_scale, F32)
    y = acc.astype(F32) * multiplier
    return y if bias is None else y + np.asarray(bias, F32)
