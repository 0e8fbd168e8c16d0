"""Graph rewrites run before lowering. They return new graphs: the imported one stays as read."""

import dataclasses
import struct
from collections import defaultdict

from .graph import Op, Tensor
from .ops import Unsupported, op_problem
from .ops.common import REDUCTIONS, constant_ints, reduction_axes, require_constant
from .ops.pad import pad_amounts, pad_value
from .ops.reduce import is_float32_reduction


def fold_pads(graph):
    """A copy of the graph with each explicit PAD of height/width folded into the convolution that
    consumes it. TensorFlow's converter puts a PAD before stride-2 convolutions; padding with the
    input zero point is exactly what the convolution's own padding does, so the PAD costs nothing.
    Only the convolutions that change are copied (the imported graph stays as read).
    """
    consumers = defaultdict(list)
    for op in graph.ops:
        for index in set(op.inputs):
            consumers[index].append(op)
    outputs = set(graph.outputs)
    folded, replaced = set(), {}
    for op in graph.ops:
        if op.type in ("PAD", "PADV2"):
            conv = _fold(graph, op, consumers, outputs)
            if conv is not None:
                folded.add(id(op))
                replaced[id(consumers[op.outputs[0]][0])] = conv
    ops = [replaced.get(id(op), op) for op in graph.ops if id(op) not in folded]
    return dataclasses.replace(graph, ops=ops)


def _fold(graph, pad, consumers, outputs):
    """The convolution that takes this PAD's padding (a new Op), or None."""
    # Malformed ops are left alone: lowering reports them (ops.op_problem).
    if op_problem(graph, pad):
        return None
    padded = pad.outputs[0]
    if len(consumers[padded]) != 1 or padded in outputs:
        return None
    conv = consumers[padded][0]
    if conv.type not in ("CONV_2D", "DEPTHWISE_CONV_2D") or op_problem(graph, conv) or conv.inputs[0] != padded:
        return None
    x, y = graph.tensors[pad.inputs[0]], graph.tensors[padded]
    if x.dtype != "int8" or x.scale != y.scale or x.zero_point != y.zero_point or len(x.shape) != 4:
        return None
    try:
        amounts = pad_amounts(graph, pad)
        if pad_value(graph, pad) != x.zero_point[0]:  # PADV2 with another value than a real 0
            return None
    except Unsupported:
        return None
    if len(amounts) != 4 or amounts[0] != (0, 0) or amounts[3] != (0, 0) or min(min(a) for a in amounts) < 0:
        return None
    top, bottom, left, right = conv.options["padding"]
    return dataclasses.replace(conv, inputs=[pad.inputs[0]] + conv.inputs[1:],
                               options=dict(conv.options, padding=[top + amounts[1][0], bottom + amounts[1][1],
                                                                   left + amounts[2][0], right + amounts[2][1]]))


def transpose_convs_as_convs(graph):
    """A copy of the graph with each TRANSPOSE_CONV (TFLite's; ONNX ConvTranspose imports to it) as a
    CONV_2D over its input whose output channels are the stride_h x stride_w output phases, then the
    phases interleaved into the output (RESHAPE, a rank-6 TRANSPOSE, RESHAPE) and cropped (SLICE):
    XNNPACK's subconvolutions, with no zero-stuffed input. Output pixel (s*j + p) takes input rows j + u
    with kernel row p + padding - s*u: every phase reads the same window of input rows (the union of
    theirs; a tap a phase lacks gets the weights' zero point, so it adds nothing), and the sums, bias
    and requantization are the transposed convolution's own. A dilated kernel's taps sit d rows apart in
    that window; groups (ONNX) make the convolution grouped, its output channels group by group, each
    group's phases together. Ops that cannot be rewritten stay, with the reason in options["problem"] for
    lowering to report."""
    if not any(op.type == "TRANSPOSE_CONV" for op in graph.ops):
        return graph
    tensors, ops = list(graph.tensors), []
    for op in graph.ops:
        if op.type != "TRANSPOSE_CONV" or op_problem(graph, op):
            ops.append(op)
            continue
        try:
            ops.extend(_phases_as_conv(graph, tensors, op))
        except Unsupported as e:
            ops.append(dataclasses.replace(op, options=dict(op.options, problem=str(e))))
    return dataclasses.replace(graph, tensors=tensors, ops=ops)


MAX_TRANSPOSE_CONV_STRIDE = 64   # stride x stride phases become output channels


def _phase_window(stride, padding, kernel):
    """(first input offset u, window length) covering every phase p's taps u: 0 <= p + padding - s*u < K."""
    first = min((p + padding - kernel) // stride + 1 for p in range(stride))
    last = max((p + padding) // stride for p in range(stride))
    return first, last - first + 1


def _phases_as_conv(graph, tensors, op):
    x, w, y = (graph.tensors[i] for i in (op.inputs[2], op.inputs[1], op.outputs[0]))
    bias = graph.tensors[op.inputs[3]] if len(op.inputs) > 3 and op.inputs[3] >= 0 else None
    for t, role in ((x, "input"), (y, "output"), (w, "weights")):
        if len(t.shape) != 4:
            raise Unsupported(f"{role} '{t.name}' has rank {len(t.shape)}; expected 4")
    data = require_constant(w, "weights", "int8")
    oc, kh, kw, ic = w.shape
    n, ih, iw, in_c = x.shape
    on, oh, ow, out_c = y.shape
    groups = op.options.get("groups", 1)
    if (in_c, n) != (ic * groups, on) or out_c != oc or oc % groups:
        raise Unsupported(f"weights {list(w.shape)} do not fit input {list(x.shape)} and output {list(y.shape)}"
                          + (f" in {groups} groups" if groups > 1 else ""))
    if len(set(w.zero_point)) > 1:
        raise Unsupported("weights with a zero point per channel")
    w_zp = w.zero_point[0] if w.zero_point else 0
    (sh, sw), (top, _, left, _) = op.options["stride"], op.options["padding"]
    dh, dw = op.options.get("dilation", (1, 1))
    if max(sh, sw) > MAX_TRANSPOSE_CONV_STRIDE:
        raise Unsupported(f"strides {[sh, sw]}; at most {MAX_TRANSPOSE_CONV_STRIDE} are supported")
    # the dilated kernel spans (k - 1) * d + 1 positions; taps sit at multiples of d
    (uh, kh2), (uw, kw2) = _phase_window(sh, top, (kh - 1) * dh + 1), _phase_window(sw, left, (kw - 1) * dw + 1)
    if uh > 0 or uw > 0:
        raise Unsupported(f"padding {op.options['padding']} is larger than the kernel")
    hc = max(-(-oh // sh), ih - uh - kh2 + 1)
    wc = max(-(-ow // sw), iw - uw - kw2 + 1)
    fill = bytes([w_zp & 0xFF]) * ic
    group_oc = oc // groups
    order = [g * group_oc + o for g in range(groups) for _ in range(sh * sw) for o in range(group_oc)]
    rows = []
    for g in range(groups):            # output channels: group, then phase, then the group's channel
        for ph in range(sh):
            for pw in range(sw):
                for o in range(g * group_oc, (g + 1) * group_oc):
                    for a in range(kh2):
                        ey = ph + top - sh * (uh + a)
                        for b in range(kw2):
                            ex = pw + left - sw * (uw + b)
                            if 0 <= ey < (kh - 1) * dh + 1 and 0 <= ex < (kw - 1) * dw + 1 and ey % dh == 0 == ex % dw:
                                at = ((o * kh + ey // dh) * kw + ex // dw) * ic
                                rows.append(bytes(data[at:at + ic]))
                            else:
                                rows.append(fill)
    phases = sh * sw

    def tensor(name, shape, dtype, scale=(), zero_point=(), data=None):
        return _new_tensor(tensors, f"{y.name}/{name}", shape, dtype, scale, zero_point, data)

    weights = tensor("phase_weights", (phases * oc, kh2, kw2, ic), "int8",
                     w.scale if len(w.scale) <= 1 else [w.scale[c] for c in order],
                     w.zero_point if len(w.zero_point) <= 1 else [w.zero_point[c] for c in order], b"".join(rows))
    inputs = [op.inputs[2], weights]
    if bias is not None:
        values = struct.unpack(f"<{oc}i", bytes(require_constant(bias, "bias", "int32")))
        inputs.append(tensor("phase_bias", (phases * oc,), "int32", data=struct.pack(f"<{len(order)}i",
                                                                                    *(values[c] for c in order))))
    conv = tensor("phases", (n, hc, wc, phases * oc), "int8", y.scale, y.zero_point)
    padding = [-uh, hc + kh2 - 1 - ih + uh, -uw, wc + kw2 - 1 - iw + uw]
    out = [Op(op.index, "CONV_2D", inputs, [conv], {"stride": (1, 1), "dilation": (1, 1), "padding": padding,
                                                   "activation": op.options.get("activation", "NONE")})]

    def int32s(name, values):
        return _new_int32s(tensors, f"{y.name}/{name}", values)

    if groups == 1:
        split = tensor("phases_split", (n, hc, wc, sh, sw, oc), "int8", y.scale, y.zero_point)
        moved = tensor("interleaved", (n, hc, sh, wc, sw, oc), "int8", y.scale, y.zero_point)
        perm = [0, 1, 3, 2, 4, 5]
    else:   # [n, hc, wc, groups, sh, sw, group_oc] -> [n, hc, sh, wc, sw, groups, group_oc]
        split = tensor("phases_split", (n, hc, wc, groups, sh, sw, group_oc), "int8", y.scale, y.zero_point)
        moved = tensor("interleaved", (n, hc, sh, wc, sw, groups, group_oc), "int8", y.scale, y.zero_point)
        perm = [0, 1, 4, 2, 5, 3, 6]
    full = y.index if (hc * sh, wc * sw) == (oh, ow) else tensor("uncropped", (n, hc * sh, wc * sw, oc), "int8",
                                                                 y.scale, y.zero_point)
    out += [Op(op.index, "RESHAPE", [conv], [split]),
            Op(op.index, "TRANSPOSE", [split, int32s("perm", perm)], [moved]),
            Op(op.index, "RESHAPE", [moved], [full])]
    if full != y.index:
        out.append(Op(op.index, "SLICE", [full, int32s("begin", [0, 0, 0, 0]), int32s("size", [n, oh, ow, oc])],
                      [y.index]))
    return out


def _new_tensor(tensors, name, shape, dtype, scale=(), zero_point=(), data=None):
    """Append a tensor a pass makes to ``tensors``; its index."""
    tensors.append(Tensor(len(tensors), name, tuple(shape), dtype, tuple(scale), tuple(zero_point), 0, data))
    return len(tensors) - 1


def _new_int32s(tensors, name, values):
    """Append a constant int32 vector (a permutation, axes, a shape); its index."""
    return _new_tensor(tensors, name, (len(values),), "int32", data=struct.pack(f"<{len(values)}i", *values))


def reductions_over_adjacent_axes(graph):
    """A copy of the graph where each reduction (MEAN, SUM, REDUCE_MAX) over axes that are not adjacent
    (TFLite MEAN over [1, 3], say) first moves its reduced axes to the end (a TRANSPOSE, one strided copy),
    reduces over those, and takes the keep_dims shape back (a RESHAPE, no copy). The reduction of the same
    values is the same: the lowerings need adjacent axes. Malformed ops stay for lowering to report, and so
    do float32 ones: the order of a float sum is the reference runtime's, which moving the axes changes."""
    def needs_moving(op):
        if op.type not in REDUCTIONS or op_problem(graph, op) or is_float32_reduction(graph, op):
            return None
        try:
            axes = reduction_axes(graph, op)
        except Unsupported:
            return None
        return axes if axes != list(range(axes[0], axes[-1] + 1)) else None

    moving = [needs_moving(op) for op in graph.ops]
    if not any(moving):
        return graph
    tensors, ops = list(graph.tensors), []
    for op, axes in zip(graph.ops, moving):
        if axes is None:
            ops.append(op)
            continue
        x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
        kept = [k for k in range(len(x.shape)) if k not in axes]
        perm = kept + axes
        moved = _new_tensor(tensors, f"{y.name}/axes_last", [x.shape[k] for k in perm], x.dtype, x.scale, x.zero_point)
        averaged = _new_tensor(tensors, f"{y.name}/mean", [x.shape[k] for k in kept] or [1], y.dtype, y.scale,
                               y.zero_point)
        last = list(range(len(kept), len(perm)))
        ops += [Op(op.index, "TRANSPOSE", [op.inputs[0], _new_int32s(tensors, f"{y.name}/perm", perm)], [moved]),
                Op(op.index, op.type, [moved, _new_int32s(tensors, f"{y.name}/axes", last)], [averaged],
                   dict(op.options, keep_dims=False)),
                Op(op.index, "RESHAPE", [averaged], [op.outputs[0]])]
    return dataclasses.replace(graph, tensors=tensors, ops=ops)


def _swaps_last_two(graph, op):
    """Whether TRANSPOSE ``op`` swaps its tensor's last two axes alone, its quantization kept."""
    if op.type != "TRANSPOSE" or op_problem(graph, op):
        return False
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    try:
        perm = op.options.get("perm") or constant_ints(graph, op.inputs[1], "perm")
    except Unsupported:
        return False
    rank = len(x.shape)
    return (rank >= 2 and list(perm) == list(range(rank - 2)) + [rank - 1, rank - 2]
            and (x.dtype, x.scale, x.zero_point) == (y.dtype, y.scale, y.zero_point))


def transposed_matmul_operands(graph):
    """A copy of the graph where BATCH_MATMUL reads its operands as the kernel takes them: a TRANSPOSE
    of an int8 B's last two axes read by it alone (attention's K^T) is folded into its adj_y (the kernel packs
    B either way; the float32 kernel reads B as it is), and adj_x becomes a TRANSPOSE of A (the kernel reads
    A's rows). Malformed ops stay for lowering to report."""
    producers = {out: op for op in graph.ops for out in op.outputs}
    readers = defaultdict(int)
    for op in graph.ops:
        for index in op.inputs:
            readers[index] += 1
    matmuls = [op for op in graph.ops if op.type == "BATCH_MATMUL" and not op_problem(graph, op)]
    if not matmuls:
        return graph
    tensors, folded, replaced = list(graph.tensors), set(), {}
    for op in matmuls:
        a, b = op.inputs[0], op.inputs[1]
        options, before = dict(op.options), []
        transpose = producers.get(b)
        if (transpose is not None and readers[b] == 1 and b not in graph.outputs
                and graph.tensors[b].dtype != "float32" and _swaps_last_two(graph, transpose)):
            folded.add(id(transpose))
            b, options["adj_y"] = transpose.inputs[0], not options.get("adj_y", False)
        if options.get("adj_x", False) and len(graph.tensors[a].shape) >= 2:
            x = graph.tensors[a]
            rank = len(x.shape)
            shape = list(x.shape[:-2]) + [x.shape[-1], x.shape[-2]]
            moved = _new_tensor(tensors, f"{x.name}/adjoint", shape, x.dtype, x.scale, x.zero_point)
            perm = _new_int32s(tensors, f"{x.name}/adjoint/perm", list(range(rank - 2)) + [rank - 1, rank - 2])
            before.append(Op(op.index, "TRANSPOSE", [a, perm], [moved]))
            a, options["adj_x"] = moved, False
        replaced[id(op)] = before + [dataclasses.replace(op, inputs=[a, b], options=options)]
    ops = [new for op in graph.ops if id(op) not in folded for new in replaced.get(id(op), [op])]
    return dataclasses.replace(graph, tensors=tensors, ops=ops)
