"""BATCH_NORM: ONNX BatchNormalization on a dequantized int8 tensor, as onnxruntime computes it in float32
(numerics/onnxruntime.py batch_norm_coefficients: y = x * new_scale + new_bias per channel), with the float
element ops after it (options["then"]) and a fused Relu / Clip: a function of one int8 value per channel,
so one 256-entry table per channel (lut_channels, channels innermost), or one table (lut) when every
channel has the same coefficients. float32 output: the model's last op in float (QOperator)."""

from ..numerics.onnxruntime import (batch_norm_function, float_table, make_table_onnxruntime,
                                    onnxruntime_function)
from .common import activation_range, require_byte_quantized
from .prelu import MAX_CHANNELS
from .registry import Step, Unsupported, lowering


@lowering("BATCH_NORM")
def lower_batch_norm(graph, op):
    """inputs: the int8 input, channels innermost; options: coefficients [(new_scale, new_bias)] one per
    channel, then [(op type, options)], activation."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_scale, x_zp = require_byte_quantized(x, "input")
    if list(x.shape) != list(y.shape):
        raise Unsupported(f"input {list(x.shape)} and output {list(y.shape)} differ")
    coefficients = [tuple(c) for c in op.options["coefficients"]]
    channels = x.shape[-1] if x.shape else 1
    if len(coefficients) != channels or channels > MAX_CHANNELS:
        raise Unsupported(f"{len(coefficients)} channel coefficients for an input of shape {list(x.shape)} "
                          f"(one per channel, the innermost dimension, at most {MAX_CHANNELS})")
    then = list(op.options.get("then", ()))
    after = onnxruntime_function(then)
    if after is None:
        raise Unsupported(f"no float32 model of onnxruntime's {[t for t, _ in then]} after BatchNormalization")
    float_output = y.dtype == "float32"
    if float_output:
        def table(c):
            f = batch_norm_function(*c)
            return float_table(x.dtype, x_scale, x_zp, lambda v: after(f(v)))
    else:
        y_scale, y_zp = require_byte_quantized(y, "output")
        activation = op.options.get("activation", "NONE")
        lo, hi = activation_range(activation, y_scale, y_zp) if activation != "NONE" else (None, None)

        def table(c):
            f = batch_norm_function(*c)
            return make_table_onnxruntime(x.dtype, x_scale, x_zp, y.dtype, y_scale, y_zp, lambda v: after(f(v)),
                                          lo, hi)
    tables = {c: table(c) for c in set(coefficients)}
    if len(tables) == 1:
        return [Step("lut_f32" if float_output else "lut", dict(input=op.inputs[0], output=op.outputs[0],
                                                                size=x.size), {"table": tables[coefficients[0]]})]
    return [Step("lut_channels", dict(input=op.inputs[0], output=op.outputs[0], pixels=x.size // channels,
                                      channels=channels, output_bytes=4 if float_output else 1),
                 {"tables": b"".join(tables[c] for c in coefficients)})]
