"""BATCH_MATMUL of two int8 activations (TFLite's BATCH_MATMUL; ONNX's MatMul / QLinearMatMul whose
second input is not a constant): Y[b] = A[b] B[b] over broadcast batch dimensions, B optionally
transposed (adj_y: B[b] is [N, K], attention's Q K^T). ONNX models follow onnxruntime's QLinearMatMul
(MLAS: the fp32 requantization of the convolutions, scale float32(a_scale * b_scale) / y_scale); TFLite
models what LiteRT runs: XNNPACK's delegate takes the op where B's zero point is 0, with the same fp32
requantization; otherwise TFLite's builtin kernel (int32 sums, then TFLite's fixed-point multiplier of the
double a_scale * b_scale / y_scale, rounded twice). Of two float32 activations (the attention of a
dynamically quantized model, which onnxruntime runs as a float MatMul: MLAS's SGEMM), BATCH_MATMUL_F32."""

from ..numerics.float32 import float32s
from ..numerics.tflite import quantize_multiplier
from .common import activation_range, broadcast_shape, require_int8
from .registry import Step, Unsupported, lowering

MAX_BATCH_DIMS = 3   # the record's batch dimensions: ranks up to 5


def batch_strides(shape, batch, matrix):
    """Element strides of a tensor's batch dimensions (``shape[:-2]``, right-aligned with the output's
    ``batch``; 0 where it is broadcast), ``matrix`` elements per matrix."""
    strides, stride = [], matrix
    for k in range(1, len(batch) + 1):
        dim = shape[-2 - k] if k <= len(shape) - 2 else 1
        strides.append(0 if dim == 1 else stride)
        stride *= dim
    return strides[::-1]


def _fixed_point(a_scale, b_scale, y_scale):
    """TFLite's multiplier (GetQuantizedConvolutionMultipler: doubles) as a multiplier and right shift."""
    multiplier, exponent = quantize_multiplier(a_scale * b_scale / y_scale)
    if not -31 <= exponent <= 0:
        raise Unsupported(f"scale ratio a_scale * b_scale / y_scale = {a_scale * b_scale / y_scale:g}: only ratios "
                          "in [2^-32, 1) are supported")
    return multiplier, -exponent


def matrix_product(op, a, b, y):
    """(rows, depth, columns, record batch fields) of Y = A B over broadcast batch dimensions."""
    if op.options.get("adj_x", False):
        raise Unsupported("adj_x (a transposed first input) is not supported")
    adj_y = bool(op.options.get("adj_y", False))
    if len(a.shape) < 2 or len(b.shape) < 2:
        raise Unsupported(f"inputs of shapes {list(a.shape)} and {list(b.shape)}: both need rank 2 or more")
    m, k = a.shape[-2:]
    n, k_b = b.shape[-2:] if adj_y else b.shape[-1:-3:-1]
    batch = broadcast_shape(a.shape[:-2], b.shape[:-2])
    if batch is None or k != k_b or list(y.shape) != batch + [m, n]:
        raise Unsupported(f"shapes A {list(a.shape)}, B {list(b.shape)} (adj_y {adj_y}) and output {list(y.shape)} "
                          "do not fit a matrix product")
    if 0 in a.shape or 0 in b.shape:
        raise Unsupported("empty tensors are not supported")
    # dimensions of 1 drop out: their strides do not matter
    kept = [i for i, d in enumerate(batch) if d != 1]
    if len(kept) > MAX_BATCH_DIMS:
        raise Unsupported(f"{len(kept)} batch dimensions larger than 1; at most {MAX_BATCH_DIMS} are supported")
    pad = MAX_BATCH_DIMS - len(kept)   # the record's leading batch dimensions of 1
    a_strides, b_strides = batch_strides(a.shape, batch, m * k), batch_strides(b.shape, batch, k * n)
    fields = {}
    for name, values, filler in (("batch", batch, 1), ("a_stride", a_strides, 0), ("b_stride", b_strides, 0)):
        fields.update({f"{name}{i}": v for i, v in enumerate([filler] * pad + [values[i] for i in kept])})
    return m, k, n, fields


@lowering("BATCH_MATMUL")
def lower_batch_matmul(graph, op):
    a, b, y = (graph.tensors[i] for i in (op.inputs[0], op.inputs[1], op.outputs[0]))
    if (a.dtype, b.dtype, y.dtype) == ("float32",) * 3:
        if op.options.get("adj_y", False) or op.options.get("activation", "NONE") != "NONE":
            raise Unsupported("a float32 product takes B untransposed and no fused activation")
        m, k, n, fields = matrix_product(op, a, b, y)
        fields.update(input_a=op.inputs[0], input_b=op.inputs[1], output=op.outputs[0], rows=m, depth=k, columns=n)
        return [Step("batch_matmul_f32", fields)]
    a_scale, a_zp = require_int8(a, "input A")
    b_scale, b_zp = require_int8(b, "input B")
    y_scale, y_zp = require_int8(y, "output")
    m, k, n, fields = matrix_product(op, a, b, y)
    lo, hi = activation_range(op.options.get("activation", "NONE"), y_scale, y_zp)
    fields.update(input_a=op.inputs[0], input_b=op.inputs[1], output=op.outputs[0], rows=m, depth=k, columns=n,
                  transpose_b=int(bool(op.options.get("adj_y", False))), a_zero_point=a_zp, b_zero_point=b_zp,
                  output_zero_point=y_zp, output_min=lo, output_max=hi)
    if getattr(graph, "format", "tflite") == "onnx" or b_zp == 0:   # onnxruntime's, or XNNPACK's
        scale = float32s([float32s([a_scale * b_scale])[0] / y_scale])[0]
        fields.update(scale=scale, arithmetic=0, fixed_multiplier=0, fixed_shift=0)
    else:
        multiplier, shift = _fixed_point(a_scale, b_scale, y_scale)
        fields.update(scale=1.0, arithmetic=1, fixed_multiplier=multiplier, fixed_shift=shift)
    return [Step("batch_matmul", fields)]
