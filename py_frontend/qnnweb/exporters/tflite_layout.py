"""Rewrites a Graph into what TFLite can express, before export: weights in TFLite's layouts
(OHWI, [1,KH,KW,C] depthwise, [out,in] fully connected), explicit convolution padding that is neither
SAME nor VALID as a PAD op, the shape/permutation operands RESHAPE and TRANSPOSE take as tensors, the
ops an importer runs as int8 tables but the source computes in float back between DEQUANTIZE and QUANTIZE,
and no tensor nothing uses. Only byte slicing: no numpy."""

import dataclasses
import struct

from tflite.Padding import Padding

from ..errors import ModelError
from ..graph import Graph, Op, Tensor
from ..importers.tflite.options import conv_padding


def transpose_last_two(data, outer, rows, columns):
    """[outer, rows, columns] bytes (1-byte items) -> [outer, columns, rows]."""
    out = bytearray(len(data))
    block = rows * columns
    for o in range(outer):
        source = data[o * block:(o + 1) * block]
        target = bytearray(block)
        for r in range(rows):
            target[r::rows] = source[r * columns:(r + 1) * columns]
        out[o * block:(o + 1) * block] = target
    return bytes(out)


def tflite_ready(graph):
    if graph.variables:
        raise ModelError("a model with resource variables (a streaming model's state) cannot be written to TFLite: "
                         "the exporter writes one subgraph, without VAR_HANDLE and CALL_ONCE")
    tensors = [dataclasses.replace(t) for t in graph.tensors]
    ops = []

    def constant(name, values, shape=None):
        index = len(tensors)
        data = struct.pack(f"<{len(values)}i", *values)
        tensors.append(Tensor(index, name, tuple(shape or (len(values),)), "int32", data=data))
        return index

    relaid = set()
    for op in graph.ops:
        op = dataclasses.replace(op, inputs=list(op.inputs), options=dict(op.options))
        if op.type == "ELU" and float(op.options.pop("alpha", 1.0)) != 1.0:   # ONNX's Elu has one
            raise ModelError(f"op {op.index} ELU: an alpha other than 1 has no TFLite form")
        if op.type == "RESIZE_BILINEAR" and tensors[op.outputs[0]].dtype != tensors[op.inputs[0]].dtype:
            raise ModelError(f"op {op.index} RESIZE_BILINEAR: a float32 result of int8 values (ONNX's float Resize "
                             "at a model's end) has no TFLite form")
        if _computed_in_float(op, tensors):
            ops.extend(_in_float(op, tensors))
            continue
        layout = op.options.pop("weights_layout", None)
        if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED") and op.inputs[1] not in relaid:
            _relayout_weights(tensors[op.inputs[1]], op.type, layout)
            relaid.add(op.inputs[1])
            if len(op.inputs) > 2 and op.inputs[2] >= 0:
                _quantize_bias(tensors[op.inputs[2]], tensors[op.inputs[0]], tensors[op.inputs[1]])
        if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D"):
            op = _explicit_padding(op, tensors, ops, constant)
        elif op.type == "RESHAPE" and len(op.inputs) == 1:
            op.inputs.append(constant(f"{tensors[op.outputs[0]].name}/shape", list(tensors[op.outputs[0]].shape)))
        elif op.type == "TRANSPOSE" and len(op.inputs) == 1:
            op.inputs.append(constant(f"{tensors[op.outputs[0]].name}/perm", list(op.options.pop("perm"))))
        if op.options.get("count_include_pad"):
            raise ModelError(f"op {op.index} {op.type}: count_include_pad has no TFLite equivalent")
        if op.type == "QUANTIZE" and op.options.get("activation", "NONE") != "NONE":
            raise ModelError(f"op {op.index} QUANTIZE: a requantization with a {op.options['activation']} has no "
                             "TFLite form")
        op.options.pop("count_include_pad", None)
        ops.append(op)
    for i, op in enumerate(ops):
        op.index = i
    return _used_only(Graph(tensors, ops, list(graph.inputs), list(graph.outputs), graph.format))


def _computed_in_float(op, tensors):
    """An int8 op the source computes in float (an importer's float island: an activation, or PRELU with
    float slopes, between a dequantize and a quantize)."""
    float_slopes = (op.type == "PRELU" and tensors[op.inputs[1]].dtype == "float32"
                    and tensors[op.inputs[0]].dtype != "float32")
    return bool(op.options.get("float_island")) or float_slopes


def _in_float(op, tensors):
    """The op as the source has it: DEQUANTIZE, the float op, QUANTIZE (not for a float output)."""
    if op.options.get("then") or op.options.get("before"):
        raise ModelError(f"op {op.index} {op.type}: a chain of float ops composed into one has no TFLite form")
    op.options.pop("float_island", None)
    ops = []

    def float_tensor(index, suffix):
        t = tensors[index]
        tensors.append(Tensor(len(tensors), t.name + suffix, t.shape, "float32"))
        return len(tensors) - 1

    x, y = op.inputs[0], op.outputs[0]
    op.inputs[0] = float_tensor(x, "/dequantized")
    ops.append(Op(op.index, "DEQUANTIZE", [x], [op.inputs[0]]))
    if tensors[y].dtype == "float32":
        return [*ops, op]
    op.outputs = [float_tensor(y, "/float")]
    return [*ops, op, Op(op.index, "QUANTIZE", list(op.outputs), [y])]


def _used_only(graph):
    """The graph without tensors nothing reads or writes (a source file's leftovers, such as the float16
    weights behind a DEQUANTIZE the importer folded), renumbered."""
    used = sorted({i for op in graph.ops for i in (*op.inputs, *op.outputs) if i >= 0}
                  | set(graph.inputs) | set(graph.outputs))
    if len(used) == len(graph.tensors):
        return graph
    new = {old: k for k, old in enumerate(used)}
    tensors = [dataclasses.replace(graph.tensors[old], index=k) for k, old in enumerate(used)]
    for op in graph.ops:
        op.inputs = [new[i] if i >= 0 else i for i in op.inputs]
        op.outputs = [new[i] for i in op.outputs]
    return Graph(tensors, graph.ops, [new[i] for i in graph.inputs], [new[i] for i in graph.outputs], graph.format)


def _relayout_weights(w, op_type, layout):
    if any(w.zero_point):
        raise ModelError(f"{op_type} weights '{w.name}' have a zero point; TFLite's int8 kernels need symmetric weights")
    if layout in (None, "OHWI", "OI"):
        return
    data = bytes(w.data)
    if op_type == "CONV_2D" and layout == "OIHW":
        o, i, kh, kw = w.shape
        w.data, w.shape = transpose_last_two(data, o, i, kh * kw), (o, kh, kw, i)
    elif op_type == "DEPTHWISE_CONV_2D" and layout == "OIHW":
        c, _, kh, kw = w.shape
        w.data, w.shape = transpose_last_two(data, 1, c, kh * kw), (1, kh, kw, c)
        w.quantized_dimension = 3
    elif op_type == "FULLY_CONNECTED" and layout == "IO":
        k, n = w.shape
        w.data, w.shape = transpose_last_two(data, 1, k, n), (n, k)
        w.quantized_dimension = 0
    else:
        raise ModelError(f"{op_type} weights in layout {layout} cannot be written to TFLite")


def _quantize_bias(bias, x, w):
    """TFLite's int32 bias carries scale input_scale * weight_scale (XNNPACK refuses the op without)."""
    if bias.scale:
        return
    channels = bias.shape[0]
    scales = w.scale if len(w.scale) == channels else w.scale * channels
    bias.scale = tuple(x.scale[0] * s for s in scales)
    bias.zero_point = (0,) * len(bias.scale)
    bias.quantized_dimension = 0


def _explicit_padding(op, tensors, ops, constant):
    """Padding that is neither SAME nor VALID becomes a PAD (with the input's zero point, exactly
    what the convolution's own padding means) followed by a VALID convolution."""
    x, w = tensors[op.inputs[0]], tensors[op.inputs[1]]
    kh, kw = w.shape[1], w.shape[2]
    (sh, sw), (dh, dw) = op.options["stride"], op.options["dilation"]
    padding = list(op.options["padding"])
    for mode in (Padding.SAME, Padding.VALID):
        if conv_padding(mode, x.shape[1], x.shape[2], kh, kw, sh, sw, dh, dw) == padding:
            return op
    top, bottom, left, right = padding
    padded_shape = (x.shape[0], x.shape[1] + top + bottom, x.shape[2] + left + right, x.shape[3])
    padded = len(tensors)
    tensors.append(Tensor(padded, f"{x.name}/padded", padded_shape, x.dtype, x.scale, x.zero_point))
    paddings = constant(f"{x.name}/paddings", [0, 0, top, bottom, left, right, 0, 0], (4, 2))
    ops.append(Op(len(ops), "PAD", [op.inputs[0], paddings], [padded]))
    op.inputs[0] = padded
    op.options["padding"] = [0, 0, 0, 0]
    return op
