"""SOFTMAX over the innermost dimension.

TFLite models follow LiteRT's builtin int8 kernel (optimized_ops::Softmax; XNNPACK's delegate takes
SOFTMAX in float only): the table expf(-input_scale * beta * (max - x)) (numerics.tflite.softmax_table), a
sequential float32 sum, each output round(e * (1 / (sum * output_scale))) + zp, halves away from zero.
ONNX models follow onnxruntime 1.32's QLinearSoftmax (what its
CPU provider runs for a quantized Softmax, QDQ or QOperator; contrib_ops/cpu/quantization/
qlinear_softmax.cc as its x86-64 wheel computes it): the table exp((i - 255 + bit_shift) * x_scale) in
double stored as float32, bit_shift = max(0, logf(FLT_MAX / D) - 5) / x_scale with logf's float
result; a sequential float32 sum; each output nearbyint(e * floor(1 / y_scale) / sum) in double. A float32
Softmax (of a dynamically quantized model's attention) follows onnxruntime's float kernel (MLAS's exp, each
e times 1 / sum). See wasm_kernels/src/operators/softmax.c."""

import math

from ..numerics.float32 import float32, float32_bytes
from ..numerics.tflite import softmax_table
from ..records import FLOAT32_MAX
from .registry import Step, Unsupported, lowering
from .common import require_int8

TFLITE_MIN_OUTPUT_SCALE = 2.0 ** -30


def onnxruntime_table(x_scale, columns):
    """onnxruntime's 256 exp values, indexed by max - x (float32)."""
    x_scale = float32(x_scale)
    # logf: onnxruntime takes the log of a float, in float. Rounded correctly here, glibc's logf
    # differs in the last bit for 22 row lengths below 2^20, the first 60594.
    bit_shift = float32(math.log(float32(FLOAT32_MAX / float32(columns))))
    bit_shift = max(0.0, bit_shift - 5.0) / x_scale
    # onnxruntime's entry i (x - max = i - 255) is exp((i - 255 + bit_shift) * x_scale)
    return [float32(math.exp(((255 - d) - 255 + bit_shift) * x_scale)) for d in range(256)]


@lowering("SOFTMAX")
def lower_softmax(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.dtype == y.dtype == "float32" and x.shape and x.shape == y.shape and 0 not in x.shape:
        if op.options.get("beta", 1.0) != 1.0:
            raise Unsupported("a float32 Softmax has no beta")
        return [Step("softmax", dict(input=op.inputs[0], output=op.outputs[0], rows=x.size // x.shape[-1],
                                     columns=x.shape[-1], output_scale=0.0, inverse_output_scale=0.0,
                                     output_zero_point=0, arithmetic=2, table=0))]
    x_scale, _ = require_int8(x, "input")
    y_scale, y_zp = require_int8(y, "output")
    if x.size != y.size or not x.shape:
        raise Unsupported("input and output sizes differ")
    beta = op.options.get("beta", 1.0)
    if not beta > 0:
        raise Unsupported(f"beta {beta} must be positive")
    columns = x.shape[-1]
    if columns <= 0:
        raise Unsupported("empty tensors are not supported")
    fields = dict(input=op.inputs[0], output=op.outputs[0], rows=x.size // columns, columns=columns,
                  output_scale=y_scale, output_zero_point=y_zp)
    if getattr(graph, "format", "tflite") == "onnx":
        if beta != 1.0:
            raise Unsupported(f"beta {beta}: onnxruntime's Softmax has no beta")
        fields.update(arithmetic=1, inverse_output_scale=float(math.floor(float32(1.0 / float32(y_scale)))))
        if not fields["inverse_output_scale"] > 0:
            raise Unsupported(f"output scale {y_scale} above 1: onnxruntime's quantized Softmax gives no result")
        table = onnxruntime_table(x_scale, columns)
    else:
        if not y_scale >= TFLITE_MIN_OUTPUT_SCALE:
            # LiteRT converts e / (sum * output_scale), up to 1 / output_scale, to int32 unchecked
            raise Unsupported(f"output scale {y_scale} below 2^-30: LiteRT's int8 softmax overflows there")
        fields.update(arithmetic=0, inverse_output_scale=1.0 / y_scale)
        table = softmax_table(x_scale, beta)
    return [Step("softmax", fields, {"table": float32_bytes(table)})]
