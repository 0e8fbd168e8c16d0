"""BROADCAST_TO: an int8 tensor (an activation, or a constant such as ViT's class token) broadcast to a
larger shape by numpy's rules into an activation of the same quantization (ONNX's Expand of an activation;
a constant Concat / CONCATENATION input made an activation for CONCATENATION, in ONNX and TFLite models).
A float32 tensor (an attention mask expanded in a dynamically quantized model; a float class token made an
activation for a float Concat) is copied with stride 0 along its broadcast dimensions."""

from ..numerics.tflite import NO_ADD_FIXED_POINT
from .common import broadcast_shape, broadcast_strides, constant_ints, require_constant, require_int8
from .registry import Step, Unsupported, lowering
from .strided_copy import strided_copy


@lowering("BROADCAST_TO")
def lower_broadcast_to(graph, op):
    """The add record in onnxruntime's float form, as 0 x a + 1 x b + 0 (each term exact: the result is
    b itself): b the input, read with its broadcast strides (a constant one as constant bytes), and a
    the output, read only as a multiple of 0 (all its strides 0)."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if getattr(graph, "format", "tflite") != "onnx" and not x.is_constant:   # TFLite: a constant CONCATENATION input
        raise Unsupported("BROADCAST_TO of an activation runs for ONNX models (Expand); LiteRT's is not checked")
    shape = constant_ints(graph, op.inputs[1], "shape")
    if list(y.shape) != shape or len(shape) > 4 or broadcast_shape(x.shape, shape) != shape:
        raise Unsupported(f"{list(x.shape)} broadcast to {shape} into an output of rank <= 4 of that shape, "
                          f"got {list(y.shape)}")
    if x.dtype == y.dtype == "float32":
        dims = [1] * (4 - len(shape)) + shape
        return [strided_copy(graph, op.inputs[0], op.outputs[0], dims, broadcast_strides(x.shape, dims))]
    if require_int8(x, "input") != require_int8(y, "output"):
        raise Unsupported("the input and the output are quantized differently")
    _, zero_point = require_int8(y, "output")
    dims = [1] * (4 - len(shape)) + shape
    fields = dict(input_a=op.outputs[0], output=op.outputs[0], b_constant=int(x.is_constant), a_zero_point=0,
                  b_zero_point=zero_point, output_zero_point=zero_point, a_multiplier=0.0, b_multiplier=1.0,
                  output_min=-128, output_max=127, arithmetic=1, input_offset=0, float_form=0, **NO_ADD_FIXED_POINT)
    constants = {"input_b": require_constant(x, "input", "int8")} if x.is_constant else {}
    if not x.is_constant:
        fields["input_b"] = op.inputs[0]
    for k, (d, stride) in enumerate(zip(dims, broadcast_strides(x.shape, dims))):
        fields[f"dim{k}"], fields[f"a_stride{k}"], fields[f"b_stride{k}"] = d, 0, stride
    return [Step("add", fields, constants)]
