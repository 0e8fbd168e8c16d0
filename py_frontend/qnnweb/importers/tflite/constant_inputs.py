"""A CONCATENATION's constant input (ViT's class token, which litert-torch writes as a constant beside the
patch tokens) copied into an activation of its own by a BROADCAST_TO to its own shape, which CONCATENATION
then takes as it takes its other inputs (as the ONNX importer does: importers/onnx/shape.py)."""

import struct

from ...graph import Op, Tensor


def constant_concat_inputs(tensors, ops):
    """The ops, each int8 constant input of a CONCATENATION read from a new activation that a BROADCAST_TO
    (inserted before it) writes; new tensors are appended to ``tensors``."""
    out = []
    for op in ops:
        if op.type != "CONCATENATION":
            out.append(op)
            continue
        inputs = []
        for i in op.inputs:
            t = tensors[i] if 0 <= i < len(tensors) else None
            if t is None or not t.is_constant or t.dtype != "int8":
                inputs.append(i)
                continue
            shape = len(tensors)
            tensors.append(Tensor(shape, f"{t.name}/shape", (len(t.shape),), "int32",
                                  data=struct.pack(f"<{len(t.shape)}i", *t.shape)))
            copy = len(tensors)
            tensors.append(Tensor(copy, f"{t.name}/activation", t.shape, "int8", t.scale, t.zero_point))
            out.append(Op(op.index, "BROADCAST_TO", [i, shape], [copy]))
            inputs.append(copy)
        out.append(Op(op.index, op.type, inputs, list(op.outputs), op.options))
    return out
