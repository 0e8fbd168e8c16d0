"""The CONCATENATION lowering: one copy_slice record per input, requantizing an input whose
quantization differs from the output's; and CONSTANT_COPY, which writes a constant input (ViT's class
token) into an activation for it."""

import math

from ..numerics.tflite import NO_ADD_FIXED_POINT
from .registry import Step, Unsupported, lowering
from .common import broadcast_strides, require_constant, require_int8


@lowering("CONCATENATION")
def lower_concatenation(graph, op):
    """options: axis (of the IR's shape, negative counts from the end), activation NONE. Inputs with
    another quantization than the output's are requantized while copied (fp32, as REQUANTIZE)."""
    y = graph.tensors[op.outputs[0]]
    y_scale, y_zp = require_int8(y, "output")
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
        x_scale, x_zp = require_int8(x, f"input {i}")
        if x.is_constant:
            raise Unsupported(f"input {i} '{x.name}' is a constant (not supported)")
        if len(x.shape) != rank or any(x.shape[k] != y.shape[k] for k in range(rank) if k != axis):
            raise Unsupported(f"input {i} {list(x.shape)} does not fit output {list(y.shape)} along axis {axis}")
        along += x.shape[axis]
        inner_input = math.prod(x.shape[axis:])
        if inner_input == 0:
            continue
        steps.append(Step("copy_slice", dict(
            input=index, output=op.outputs[0], outer=outer, inner_input=inner_input, inner_output=inner_output,
            output_offset=offset, scale=x_scale / y_scale, input_zero_point=x_zp, output_zero_point=y_zp)))
        offset += inner_input
    if along != y.shape[axis]:
        raise Unsupported(f"the inputs add up to {along} along axis {axis}, the output has {y.shape[axis]}")
    if outer == 0 or not steps:
        raise Unsupported("empty tensors are not supported")
    return steps


@lowering("CONSTANT_COPY")
def lower_constant_copy(graph, op):
    """An int8 constant (rank <= 4) copied into an int8 activation of its shape and quantization: the add
    record in onnxruntime's float form, as 0 x a + 1 x b + 0 (each term exact: the result is b itself),
    b the constant and a the output itself, read only as a multiple of 0 (all its strides 0)."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if len(x.shape) > 4 or x.shape != y.shape or x.dtype != "int8":
        raise Unsupported(f"a constant int8 tensor of rank <= 4 copied into one of its shape, got {x.dtype} "
                          f"{list(x.shape)} into {list(y.shape)}")
    if require_int8(x, "input") != require_int8(y, "output"):
        raise Unsupported("the constant and its copy are quantized differently")
    _, zero_point = require_int8(y, "output")
    dims = [1] * (4 - len(y.shape)) + list(y.shape)
    fields = dict(input_a=op.outputs[0], output=op.outputs[0], b_constant=1, a_zero_point=0,
                  b_zero_point=zero_point, output_zero_point=zero_point, a_multiplier=0.0, b_multiplier=1.0,
                  output_min=-128, output_max=127, arithmetic=1, input_offset=0, float_form=0, **NO_ADD_FIXED_POINT)
    for k, stride in enumerate(broadcast_strides(y.shape, dims)):
        fields[f"dim{k}"], fields[f"a_stride{k}"], fields[f"b_stride{k}"] = dims[k], 0, stride
    return [Step("add", fields, {"input_b": require_constant(x, "input", "int8")})]
