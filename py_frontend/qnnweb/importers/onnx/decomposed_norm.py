"""A LayerNorm written out as float ops, ReduceMean -> Sub -> Pow -> ReduceMean -> Add -> Sqrt -> Div
[-> Mul -> Add] (torch's layer_norm exported before opset 17; a channels-first LayerNorm written out in the
model's code, at any opset): refused by name.

It cannot become one LAYER_NORM because onnxruntime does not compute it as its LayerNormalization kernel in
a quantized model. Its LayerNormFusion (optimization level 2) fuses the chain only when one tensor feeds both
the first ReduceMean and the Sub, the chain is float up to the final Add, the mean runs over the last axis alone
and gamma / beta are 1-D. In a quantized model the chain reads a DequantizeLinear, and onnxruntime first gives
each reader of a DequantizeLinear its own copy (its QDQ node units), so the fusion never matches (with
session.disable_quant_qdq=1 it would). It then runs the chain op by op: ReduceMean as Eigen's float32 sums
(four SSE lanes from each row's first 16-byte-aligned element) divided by the count, Sub, Pow 2 as x * x,
ReduceMean, and from there the QuantizeLinear nodes quantize_static puts inside the chain (after the second
ReduceMean, the Add of epsilon, the Div and the Mul); left whole in float (Add and Mul not quantized) it fuses
the Pow ... Mul part into SimplifiedLayerNormalization instead. Following that needs float32 tensors
between ReduceMean, Sub and Div, which qnnweb has no ReduceMean kernel for."""

from .skip import Skip


def same_tensor(ctx, a, b):
    """Whether ONNX names `a` and `b` hold the same values: one name, or two DequantizeLinear outputs of
    the same int8 tensor (a model with a DequantizeLinear per reader, as onnxruntime rewrites it)."""
    return ctx.views.get(a, a) == ctx.views.get(b, b)


def readers_through_casts(ctx, name):
    """The op types that read `name`, seen through Cast nodes (torch's exports may cast x - mean before
    the Pow)."""
    found = set()
    for reader in ctx.consumers.get(name, []):
        if reader.op_type == "Cast":
            found |= readers_through_casts(ctx, reader.output[0])
        else:
            found.add(reader.op_type)
    return found


def decomposed_layer_norm(ctx, node):
    """Raise Skip naming the decomposed LayerNorm when ReduceMean `node` begins one: its mean is subtracted
    from its own input (by one Sub, or by two as older torch exports write it), and that difference is
    squared (Pow) and divided (Div)."""
    readers = set()
    for sub in ctx.consumers.get(node.output[0], []):
        if sub.op_type == "Sub" and sub.input[1] == node.output[0] and same_tensor(ctx, sub.input[0], node.input[0]):
            readers |= readers_through_casts(ctx, sub.output[0])
    if {"Pow", "Div"} <= readers:
        raise Skip("ReduceMean -> Sub -> Pow -> ReduceMean -> Add -> Sqrt -> Div is a LayerNorm decomposed into "
                   "float ops: in a quantized model onnxruntime does not fuse it into its LayerNormalization "
                   "kernel but runs the float ops one by one (float32 ReduceMean sums), which qnnweb does not "
                   "compute; export the model at opset 17 or later, where torch.onnx writes LayerNormalization")
