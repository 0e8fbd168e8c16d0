"""onnxruntime 1.32's float LayerNormalization and InstanceNormalization on dequantized int8 rows, quantized
again as its QuantizeLinear does, in numpy float32 (every operation rounded to float32 as onnxruntime's):
the oracle of qnnweb's LAYER_NORM (wasm_kernels/src/operators/layer_norm.c).
  layer_norm_onnxruntime: core/providers/cpu/nn/layer_norm_impl.cc (ComputeJob, float) as the x86-64 wheel runs
    it on a CPU with AVX2 and FMA (read from its machine code): Welford's update for rows of up to 7, MLAS's
    AVX2 kernel for longer ones (_layer_norm_row).
  instance_norm_onnxruntime: core/providers/cpu/nn/instance_norm.cc: Eigen's sums with SSE's 4 lanes.
  reduce_onnxruntime: its float ReduceMean / ReduceSum over the last axes (reduction_ops.h, FastReduceKR):
    the same Eigen sum of each row (qnnweb's REDUCE_F32, src/operators/reduce_f32.c).
tests/kernels/test_layer_norm.py and test_reduce_f32.py check these bit-exact with onnxruntime itself."""

import numpy as np

__all__ = ["layer_norm_onnxruntime", "layer_norm_float", "instance_norm_onnxruntime", "instance_norm_float",
           "quantize_linear", "reduce_onnxruntime"]

F = np.float32


def _dequantized(x, scale, zp):
    return (x.astype(np.int32) - zp).astype(F) * F(scale)


def quantize_linear(y, scale, zp):
    """onnxruntime's QuantizeLinear of float32 y to int8: rint(clamp(y / scale)) + zp."""
    q = np.rint(np.clip(y / F(scale), F(-128 - zp), F(127 - zp))) + zp
    return q.astype(np.int8)


def fma32(a, b, c):
    """float32 a * b + c rounded once (x86's vfmadd on float32), from an exact double product and TwoSum."""
    p = float(a) * float(b)                    # exact: 24 + 24 bits
    s = p + float(c)
    v = s - p
    e = (p - (s - v)) + (float(c) - v)         # the sum's rounding error, exactly
    r = F(s)
    if e != 0 and float(r) != s:
        other = np.nextafter(r, F(np.inf) if s > float(r) else F(-np.inf))
        if (float(r) + float(other)) / 2 == s:  # s is a float32 tie: the error decides
            r = max(r, other) if e > 0 else min(r, other)
    return F(r)


def _layer_norm_row(v, gamma, beta, epsilon, has_bias):
    """One row of float32 values as onnxruntime 1.32's LayerNormalization computes it on an x86-64 CPU with
    AVX2 and FMA (core/providers/cpu/nn/layer_norm_impl.cc ComputeJob; read from the wheel's machine code):
    rows of 8 and more go to MLAS's AVX2 kernel, shorter ones are computed inline with Welford's update."""
    n = len(v)
    eps = F(epsilon)
    if n <= 7:   # Welford, float32, no FMA
        mean, m2 = F(0), F(0)
        for i, x in enumerate(v):
            delta = F(x - mean)
            mean = F(mean + F(delta / F(i + 1)))
            m2 = F(m2 + F(F(x - mean) * delta))
        deviation = np.sqrt(F(F(m2 / F(n)) + eps))
        y = [F(F(F(x - mean) / deviation) * gamma[k]) for k, x in enumerate(v)]
        return [F(t + beta[k]) for k, t in enumerate(y)] if has_bias else y
    # MLAS: the mean from a double sum (4 lanes over blocks of 4, then the rest), rounded to float32
    lanes = [0.0] * 4
    blocks = n // 4 * 4
    for k in range(blocks):
        lanes[k % 4] += float(v[k])
    total = (lanes[0] + lanes[2]) + (lanes[1] + lanes[3])
    for k in range(blocks, n):
        total += float(v[k])
    mean = F(total / n)
    # the variance: float32 fma of (x - mean)^2 into 8 lanes over blocks of 8, the lanes added pairwise, then the
    # rest: 4 squares added one by one when 4 or more are left, the last ones by fma
    d = [F(x - mean) for x in v]
    acc = [F(0)] * 8
    blocks = n // 8 * 8
    for k in range(blocks):
        acc[k % 8] = fma32(d[k], d[k], acc[k % 8])
    m = [F(acc[j] + acc[j + 4]) for j in range(4)]
    squares = F(F(m[0] + m[2]) + F(m[1] + m[3]))
    k = blocks
    if n - blocks >= 4:
        for k in range(blocks, blocks + 4):
            squares = F(squares + F(d[k] * d[k]))
        k = blocks + 4
    for k in range(k, n):
        squares = fma32(d[k], d[k], squares)
    inverse = F(F(1) / np.sqrt(F(F(squares / F(n)) + eps)))
    if has_bias:
        return [fma32(F(d[k] * inverse), gamma[k], beta[k]) for k in range(n)]
    return [F(F(d[k] * inverse) * gamma[k]) for k in range(n)]


def layer_norm_float(x, gamma, beta, epsilon, has_bias=True):
    """onnxruntime's float32 LayerNormalization over the last axis of float32 x [rows, columns]."""
    gamma, beta = np.asarray(gamma, F), np.asarray(beta, F)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        return np.array([_layer_norm_row(row, gamma, beta, epsilon, has_bias) for row in np.asarray(x, F)], F)


def layer_norm_onnxruntime(x, x_scale, x_zp, gamma, beta, epsilon, y_scale, y_zp, has_bias=True):
    """x: int8 [rows, columns]; gamma / beta: float32 [columns]: DequantizeLinear, LayerNormalization,
    QuantizeLinear."""
    return quantize_linear(layer_norm_float(_dequantized(x, x_scale, x_zp), gamma, beta, epsilon, has_bias), y_scale, y_zp)


def _eigen_sum(values, start):
    """Eigen's redux sum of a float32 vector with 4-lane packets from element `start` (Redux.h)."""
    n = len(values)
    packets, pairs = (n - start) // 4 * 4, (n - start) // 8 * 8
    if packets == 0:
        total = values[0]
        for v in values[1:]:
            total = F(total + v)
        return total
    lanes = values[start:start + 8].copy() if packets > 4 else values[start:start + 4].copy()
    for k in range(start + 8, start + pairs, 8):
        lanes = lanes + values[k:k + 8]
    if packets > 4:
        lanes = lanes[:4] + lanes[4:]
        if packets > pairs:
            lanes = lanes + values[start + pairs:start + pairs + 4]
    total = F(F(lanes[0] + lanes[2]) + F(lanes[1] + lanes[3]))
    for v in list(values[:start]) + list(values[start + packets:]):
        total = F(total + v)
    return total


def _aligned_start(row, n):
    """Where Eigen's packets begin in row `row` of n float32: its first 16-byte-aligned element in a
    64-byte-aligned buffer (onnxruntime's)."""
    return min(-(row * n) % 4, n)


def reduce_onnxruntime(x, mean=True):
    """onnxruntime's float ReduceMean (``mean``) or ReduceSum of each row of float32 x [rows, columns]:
    float32 [rows]."""
    x = np.asarray(x, F)
    rows, n = x.shape
    sums = [_eigen_sum(x[r], _aligned_start(r, n)) for r in range(rows)]
    return np.array([F(s / F(n)) if mean else s for s in sums], F)


def instance_norm_float(v, gamma, beta, epsilon):
    """onnxruntime's float32 InstanceNormalization of float32 v [rows, columns], rows = N * C in order;
    gamma / beta: float32 [C]."""
    v = np.asarray(v, F)
    out = np.empty_like(v)
    with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
        for r, row in enumerate(v):
            start = _aligned_start(r, len(row))
            mean = F(_eigen_sum(row, start) / F(len(row)))
            centered = row - mean
            # squaredNorm of the expression (x - mean): no address to align, so its packets start at element 0
            inverse = F(F(1) / np.sqrt(F(_eigen_sum(centered * centered, 0) / F(len(row))) + F(epsilon)))
            scale = F(inverse * F(gamma[r % len(gamma)]))
            shift = F(F(beta[r % len(beta)]) - F(mean * scale))
            out[r] = row * scale + shift
    return out


def instance_norm_onnxruntime(x, x_scale, x_zp, gamma, beta, epsilon, y_scale, y_zp):
    """x: int8 [rows, columns], rows = N * C in order; gamma / beta: float32 [C]."""
    return quantize_linear(instance_norm_float(_dequantized(x, x_scale, x_zp), gamma, beta, epsilon), y_scale, y_zp)
