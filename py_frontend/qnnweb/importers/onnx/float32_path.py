"""The float32 data path: where onnxruntime reads a float op's float result in float (another float op
reads it, not only QuantizeLinear: QOperator leaves LayerNormalization -> HardSwish, LayerNormalization ->
LayerNormalization, PRelu -> GELU ... in float), the result stays a float32 IR tensor, and the float ops
on it run as onnxruntime runs them, one IR op per node: an element op (element_steps.py) as ELEMENT_F32
(element_f32 here), LayerNormalization / InstanceNormalization as LAYER_NORM of a float32 input (norm.py),
Add / Sub / Mul / Div as float32 ADD / SUB / MUL / DIV (binary.py), the moves on float32 tensors (Reshape,
Transpose, DepthToSpace: shape.py; Slice, Split, Gather: slicing.py), QuantizeLinear as QUANTIZE (qdq.py).
Which results stay float32: quantization.read_in_float; an op without float32 arithmetic (a float MaxPool,
AveragePool, Resize ...) on such a result is refused by name (quantization.activation_input).

It is the fallback: the int8 paths (a table of one int8 tensor, an int8 view, a float region) come first,
and a result that only QuantizeLinear reads, directly or through ops that commute with it, is quantized."""

from .context import Value
from .skip import Skip


def float32_result(ctx, name, shape, nhwc):
    """IR index of a new float32 tensor of `shape` (held NHWC if `nhwc`) that is ONNX value `name`."""
    if name in ctx.values or name in ctx.views:   # a malformed graph: a float run that feeds back into itself
        raise Skip(f"its output '{name}' is computed already (the graph has a cycle, or two nodes write it)")
    index = ctx.add_tensor(name, shape, "float32")
    ctx.values[name] = Value(index, nhwc)
    return index


def element_f32(ctx, node, step, source):
    """Element op `node` (``step``: its (IR op type, options), element_steps.element_step) on float32 value
    `source`: one ELEMENT_F32 op, float32 -> float32, the function computed as onnxruntime's float op does."""
    value = ctx.values[source]
    out = float32_result(ctx, node.output[0], ctx.tensors[value.index].shape, value.nhwc)
    function, options = step
    ctx.add_op("ELEMENT_F32", [value.index], [out], function=function, options=dict(options))
