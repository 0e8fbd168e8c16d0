"""The CONCATENATION lowering: one copy_slice record per input, requantizing an input whose
quantization differs from the output's; float32 tensors (a dynamically quantized model's) are copied."""

import math

from .registry import Step, Unsupported, lowering
from .common import require_int8


@lowering("CONCATENATION")
def lower_concatenation(graph, op):
    """options: axis (of the IR's shape, negative counts from the end), activation NONE. Inputs with
    another quantization than the output's are requantized while copied (fp32, as REQUANTIZE)."""
    y = graph.tensors[op.outputs[0]]
    width = 4 if y.dtype == "float32" else 1   # float32: 4-byte elements copied as bytes
    y_scale, y_zp = (1.0, 0) if width == 4 else require_int8(y, "output")
    if op.options.get("activation", "NONE") != "NONE":
        raise Unsupported(f"fused activation {op.options['activation']} not supported")
    if "axis" not in op.options:
        raise Unsupported("the option 'axis' is missing")
    rank = len(y.shape)
    axis = op.options["axis"]
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} is outside the output's rank {rank}")
    axis %= rank
    outer, inner_output = math.prod(y.shape[:axis]), math.prod(y.shape[axis:])
    steps, offset, along = [], 0, 0
    for i, index in enumerate(op.inputs):
        x = graph.tensors[index]
        if (x.dtype == "float32") != (width == 4):
            raise Unsupported(f"input {i} is {x.dtype}, the output {y.dtype}")
        x_scale, x_zp = (1.0, 0) if width == 4 else require_int8(x, f"input {i}")
        if x.is_constant:
            raise Unsupported(f"input {i} '{x.name}' is a constant (not supported)")
        if len(x.shape) != rank or any(x.shape[k] != y.shape[k] for k in range(rank) if k != axis):
            raise Unsupported(f"input {i} {list(x.shape)} does not fit output {list(y.shape)} along axis {axis}")
        along += x.shape[axis]
        inner_input = math.prod(x.shape[axis:])
        if inner_input == 0:
            continue
        steps.append(Step("copy_slice", dict(
            input=index, output=op.outputs[0], outer=outer, inner_input=inner_input * width,
            inner_output=inner_output * width, output_offset=offset * width, scale=x_scale / y_scale,
            input_zero_point=x_zp, output_zero_point=y_zp)))
        offset += inner_input
    if along != y.shape[axis]:
        raise Unsupported(f"the inputs add up to {along} along axis {axis}, the output has {y.shape[axis]}")
    if outer == 0 or not steps:
        raise Unsupported("empty tensors are not supported")
    return steps
