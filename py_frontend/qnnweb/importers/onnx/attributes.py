"""ONNX node attributes as Python values, checked against the types the ONNX schema gives them, and
the window attributes (pads / auto_pad) every windowed op reads."""

from .skip import Skip

# AttributeProto.AttributeType -> name, and the type every attribute name the handlers read must have
# (the ONNX schema's, for the operators qnnweb imports). Checked once, in attributes(): a handler never
# sees an attribute of another type, a window of zero or a NaN.
ATTRIBUTE_TYPE_NAMES = {0: "UNDEFINED", 1: "FLOAT", 2: "INT", 3: "STRING", 4: "TENSOR", 5: "GRAPH", 6: "FLOATS",
                        7: "INTS", 8: "STRINGS", 9: "TENSORS", 10: "GRAPHS", 11: "SPARSE_TENSOR",
                        12: "SPARSE_TENSORS", 13: "TYPE_PROTO", 14: "TYPE_PROTOS"}
ATTRIBUTE_TYPES = {
    **dict.fromkeys(("group", "axis", "transA", "transB", "ceil_mode", "count_include_pad", "allowzero",
                     "channels_last", "block_size", "keepdims", "saturate", "to", "output_dtype", "storage_order",
                     "noop_with_empty_axes", "value_int", "start", "end", "batch_dims", "num_outputs", "opset"), 2),
    **dict.fromkeys(("strides", "dilations", "pads", "kernel_shape", "perm", "axes", "value_ints", "starts", "ends",
                     "split", "output_padding", "output_shape"), 7),
    **dict.fromkeys(("alpha", "beta", "gamma", "min", "max", "ratio", "value_float", "epsilon"), 1),
    **dict.fromkeys(("auto_pad", "value_string", "coordinate_transformation_mode", "nearest_mode"), 3),
    "value": 4, "value_floats": 6,
}
# INTS attributes that describe a 2-D window: how many values (qnnweb runs 2-D windows) and the least.
WINDOW_ATTRIBUTES = {"strides": (2, 1), "dilations": (2, 1), "kernel_shape": (2, 1), "pads": (4, 0)}
FINITE_ATTRIBUTES = ("alpha", "beta", "gamma", "ratio")   # min / max (Clip) may be infinite, never NaN


def _attribute_type(a):
    """The attribute's type; files from before the type field (type 0) by the value that is set."""
    if a.type:
        return a.type
    for kind, present in ((7, len(a.ints)), (6, len(a.floats)), (4, a.HasField("t")), (3, a.HasField("s")),
                          (1, a.HasField("f")), (2, a.HasField("i"))):
        if present:
            return kind
    return 0


def attributes(node):
    """{name: value} of the node's attributes: FLOAT/INT/STRING/FLOATS/INTS as Python values, other
    types (TENSOR: Constant's value) as the AttributeProto. Raises Skip for an attribute whose type
    or value the schema does not allow (see ATTRIBUTE_TYPES), naming it."""
    out = {}
    for a in node.attribute:
        kind = _attribute_type(a)
        expected = ATTRIBUTE_TYPES.get(a.name)
        if expected is not None and kind != expected:
            raise Skip(f"attribute '{a.name}' is {ATTRIBUTE_TYPE_NAMES.get(kind, f'type {kind}')}; "
                       f"the ONNX schema says {ATTRIBUTE_TYPE_NAMES[expected]}")
        value = {1: a.f, 2: a.i, 3: a.s.decode("utf-8", "replace"), 6: list(a.floats), 7: list(a.ints)}.get(kind, a)
        if a.name in WINDOW_ATTRIBUTES:
            count, smallest = WINDOW_ATTRIBUTES[a.name]
            if len(value) != count or min(value) < smallest:
                raise Skip(f"attribute '{a.name}' = {value}: expected {count} values of at least {smallest} "
                           "(qnnweb runs 2-D windows)")
        if kind == 1 and (value != value or (a.name in FINITE_ATTRIBUTES and abs(value) == float("inf"))):
            raise Skip(f"attribute '{a.name}' is {value}")
        if kind == 6 and any(v != v for v in value):
            raise Skip(f"attribute '{a.name}' holds NaN")
        out[a.name] = value
    return out


def window_pads(attrs, size, kernel, strides, dilations):
    """[top, bottom, left, right] from ONNX pads / auto_pad."""
    auto_pad = attrs.get("auto_pad", "NOTSET")
    if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
        out = []
        for i in range(2):
            effective = (kernel[i] - 1) * dilations[i] + 1
            total = max((-(-size[i] // strides[i]) - 1) * strides[i] + effective - size[i], 0)
            small, large = total // 2, total - total // 2
            out += [small, large] if auto_pad == "SAME_UPPER" else [large, small]
        return out
    if auto_pad == "VALID":
        return [0, 0, 0, 0]
    pads = attrs.get("pads", [0, 0, 0, 0])
    if len(pads) != 4 or min(pads) < 0:
        raise Skip(f"pads {pads} not supported")
    return [pads[0], pads[2], pads[1], pads[3]]
