"""Numpy reference of dynamic-range int8 (onnxruntime.quantization.quantize_dynamic's models), written from
onnxruntime's CPU kernels: DynamicQuantizeLinear (GetQuantizationParameter + MlasQuantizeLinear),
MatMulInteger (exact, as the operator is defined and qnnweb computes it; or as MLAS's x86 AVX2 uint8 x int8
kernel without VNNI computes it, its pairs of products saturated to int16) and the float32 Cast / Mul / Add after
it (MLAS_QGEMM_SCALE_BIAS_OUTPUT_PROCESSOR alike); ConvInteger (exact: its windows padded with the input's zero
point, as onnxruntime's im2col pads them); a whole quantize_dynamic MatMul / Conv model (run_model)."""

import numpy as np
from onnx import TensorProto, helper, numpy_helper

F32 = np.float32


def dynamic_quantize_linear(x):
    """(uint8 q, float32 scale, int zero point) of float32 ``x``, as onnxruntime computes them."""
    x = np.asarray(x, F32)
    lo, hi = min(F32(0), x.min(initial=F32(0))), max(F32(0), x.max(initial=F32(0)))
    scale = F32(1) if hi == lo else F32(hi - lo) / F32(255)
    zero_point = np.rint(np.clip(F32(0) - lo / scale, F32(0), F32(255)))
    q = np.rint(np.clip(x / scale, -zero_point, F32(255) - zero_point)) + zero_point
    return q.astype(np.uint8), F32(scale), int(zero_point)


def _pair_sums(rows, w):
    """[M, ceil(K / 2), N]: the products of uint8 ``rows`` [M, K] and ``w`` [K, N] added in pairs (k = 2j, 2j + 1),
    as onnxruntime's x86 AVX2 uint8 x int8 kernel (vpmaddubsw) adds them, in int64."""
    k = w.shape[0]
    padded = k + k % 2
    qp = np.zeros((rows.shape[0], padded), np.int64)
    qp[:, :k] = rows
    wp = np.zeros((padded, w.shape[1]), np.int64)
    wp[:k] = w
    return np.einsum("mjt,jtn->mjn", qp.reshape(-1, padded // 2, 2), wp.reshape(padded // 2, 2, -1))


def pairs_beyond_int16(q, w):
    """Whether a pair of products of uint8 ``q`` [..., K] and int8 ``w`` [K, N] lies beyond int16: where
    onnxruntime's x86 AVX2 kernel without VNNI saturates it (False for uint8 weights: its uint8 x uint8 kernel
    widens to int16 first and sums exactly)."""
    if np.asarray(w).dtype != np.int8:
        return False
    pairs = _pair_sums(np.asarray(q, np.int64).reshape(-1, w.shape[0]), np.asarray(w, np.int64))
    return bool(np.any((pairs < -32768) | (pairs > 32767)))


def matmul_integer(q, q_zp, w, w_zp, saturate_pairs=False):
    """int32 [..., N] = sum_k (q - q_zp)(w - w_zp[n]) of uint8 ``q`` [..., K] and int8 / uint8 ``w`` [K, N]
    (``w_zp``: a number or one per column): MatMulInteger, exact. ``saturate_pairs``: what onnxruntime computes
    on x86 AVX2 without VNNI, whose uint8 x int8 kernel adds the raw products of k = 2j and 2j + 1 saturated to
    int16 (vpmaddubsw) before it corrects for the zero points (int8 weights only: see pairs_beyond_int16)."""
    saturate_pairs = saturate_pairs and np.asarray(w).dtype == np.int8
    q = np.asarray(q).astype(np.int64)
    w = np.asarray(w).astype(np.int64)
    q_zp = int(q_zp)
    k, n = w.shape
    w_zp = np.broadcast_to(np.asarray(w_zp, np.int64), (n,))
    if not saturate_pairs:
        return ((q - q_zp) @ (w - w_zp)).astype(np.int32)
    rows = q.reshape(-1, k)
    raw = np.clip(_pair_sums(rows, w), -32768, 32767).sum(axis=1)
    acc = raw - q_zp * w.sum(axis=0) - w_zp * rows.sum(axis=1, keepdims=True) + k * q_zp * w_zp
    return acc.astype(np.int32).reshape(q.shape[:-1] + (n,))


def conv_integer(q, q_zp, w, w_zp, strides=(1, 1), pads=(0, 0, 0, 0), dilations=(1, 1), group=1):
    """int32 [N, M, OH, OW] ConvInteger of uint8 ``q`` [N, C, H, W] and int8 / uint8 ``w`` [M, C / group, KH, KW]
    (``w_zp``: a number or one per output channel), ``pads`` ONNX's (top, left, bottom, right), the padding
    read as ``q_zp``: sum over each window of (q - q_zp)(w - w_zp), exact."""
    q = np.asarray(q).astype(np.int64) - int(q_zp)
    w = np.asarray(w).astype(np.int64)
    m, group_channels, kh, kw = w.shape
    w = w - np.broadcast_to(np.asarray(w_zp, np.int64).reshape(-1), (m,)).reshape(m, 1, 1, 1)
    top, left, bottom, right = pads
    x = np.pad(q, ((0, 0), (0, 0), (top, bottom), (left, right)))   # q - q_zp: the padding adds 0
    (sh, sw), (dh, dw) = strides, dilations
    oh = (x.shape[2] - (kh - 1) * dh - 1) // sh + 1
    ow = (x.shape[3] - (kw - 1) * dw - 1) // sw + 1
    out = np.zeros((q.shape[0], m, oh, ow), np.int64)
    per_group = m // group
    for g in range(group):
        xs = x[:, g * group_channels:(g + 1) * group_channels]
        ws = w[g * per_group:(g + 1) * per_group]
        for i in range(kh):
            for j in range(kw):
                window = xs[:, :, i * dh:i * dh + (oh - 1) * sh + 1:sh, j * dw:j * dw + (ow - 1) * sw + 1:sw]
                out[:, g * per_group:(g + 1) * per_group] += np.einsum("nchw,mc->nmhw", window, ws[:, :, i, j])
    return out.astype(np.int32)


def scaled_output(acc, q_scale, w_scale, bias=None):
    """float32 of int32 ``acc``: Cast, then Mul by float32(q_scale * w_scale[n]), then Add of the bias."""
    multiplier = F32(q_scale) * np.asarray(w_scale, F32)
    y = acc.astype(F32) * multiplier
    return y if bias is None else y + np.asarray(bias, F32)


def run_model(model, feeds, saturate_pairs=False):
    """(outputs, pairs beyond int16) of a quantize_dynamic ``model`` (onnx.ModelProto) on ``feeds`` (name: float32
    array), node by node as onnxruntime computes them (float32 Cast, Mul and Add; com.microsoft's
    MatMulIntegerToFloat and DynamicQuantizeMatMul as scaled_output), the matrix products exact or, with
    ``saturate_pairs``, as onnxruntime on x86 AVX2 without VNNI; the flag: whether any product's pairs lie beyond
    int16 (where the two differ)."""
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    values.update(feeds)
    beyond = False

    def product(q, q_zp, w, w_zp):
        nonlocal beyond
        beyond = beyond or pairs_beyond_int16(q, w)
        return matmul_integer(q, 0 if q_zp is None else q_zp, w, 0 if w_zp is None else w_zp, saturate_pairs)

    for node in model.graph.node:
        a = [values[name] if name else None for name in node.input] + [None] * 7
        if node.op_type == "DynamicQuantizeLinear":
            q, scale, zero_point = dynamic_quantize_linear(a[0])
            outputs = [q, scale, np.uint8(zero_point)]
        elif node.op_type == "MatMulInteger":
            outputs = [product(a[0], a[2], a[1], a[3])]
        elif node.op_type == "Cast" and helper.get_attribute_value(node.attribute[0]) == TensorProto.FLOAT:
            outputs = [a[0].astype(F32)]
        elif node.op_type in ("Mul", "Add") and a[0].dtype == a[1].dtype == F32:
            outputs = [a[0] * a[1] if node.op_type == "Mul" else a[0] + a[1]]
        elif node.op_type == "ConvInteger":   # exact (onnxruntime's pairs of products are not followed)
            attrs = {at.name: helper.get_attribute_value(at) for at in node.attribute}
            outputs = [conv_integer(a[0], 0 if a[2] is None else a[2], a[1], 0 if a[3] is None else a[3],
                                    attrs.get("strides", (1, 1)), attrs.get("pads", (0, 0, 0, 0)),
                                    attrs.get("dilations", (1, 1)), attrs.get("group", 1))]
        elif node.op_type == "Reshape":
            outputs = [a[0].reshape(a[1])]
        elif node.op_type == "Identity":
            outputs = [a[0]]
        elif node.op_type == "MatMulIntegerToFloat":   # A, B, a_scale, b_scale, a_zero_point, b_zero_point, bias
            outputs = [scaled_output(product(a[0], a[4], a[1], a[5]), a[2], a[3], a[6])]
        elif node.op_type == "DynamicQuantizeMatMul":  # A, B, b_scale, b_zero_point, bias
            q, scale, zero_point = dynamic_quantize_linear(a[0])
            outputs = [scaled_output(product(q, zero_point, a[1], a[3]), scale, a[2], a[4])]
        else:
            raise ValueError(f"{node.op_type} ('{node.name}') is not an op of quantize_dynamic's MatMul / Conv models")
        values.update(zip(node.output, outputs))
    return [values[output.name] for output in model.graph.output], beyond
