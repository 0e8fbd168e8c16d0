"""Seeded random float ONNX graphs from the operator set qnnweb supports, quantized by onnxruntime.

``make_case(seed, index)`` builds one ``Case``: a small float graph (``onnx.helper``, no torch), a
quantizer mode (QDQ / QOperator x uint8 / int8 activations x per-tensor / per-channel weights x
reduce_range x ActivationSymmetric x WeightSymmetric x weight type) and fixed random inputs; the
quantized model is ``quantize(case)``. Everything depends only on (seed, index), so a case is
reproduced by its name.

The graphs: an NCHW input [1, C, H, W] (C 1..20, H and W 4..24), then a random chain of ops on the
current tensor: Conv in every form (strides, dilations, explicit / asymmetric pads, auto_pad
SAME_UPPER / SAME_LOWER / VALID, group 1, depthwise group=C with multipliers, rarely grouped
1 < group < C), Add / Mul of constants of shapes [C,1,1], [1], [1,C,1,1], [W], [H,1], [C,H,W],
residual Add / Mul of two branches, Concat, AveragePool (count_include_pad, ceil_mode), MaxPool
(dilations, ceil_mode), GlobalAveragePool, every unary op (Relu, Clip, Sigmoid, Tanh, HardSwish,
HardSigmoid, LeakyRelu), Transpose, and Flatten / Reshape to a matrix followed by Gemm / MatMul
(with or without a bias Add), unary ops and Softmax.

In MODERN_SHARE of the cases the feature chain ends in 1-3 blocks of today's architectures (modern.py:
LayerNorm, GELU, attention, unfused BatchNorm). Whether a case gets them and what they are is drawn apart
from the rest of the case, so the other cases are the graphs they were before the blocks existed (a case
with blocks keeps its mode and its chain, the blocks appended to it; what follows them, and the inputs, can
differ). ``make_case(..., blocks="only")`` makes cases of a convolution and blocks alone, named
``s<seed>-m<index>`` (``./build.sh difftest --modern``); ``blocks="none"`` the cases as they were before the
blocks existed (``--no-modern``).

``make_case(..., dynamic=True)`` makes a case of onnxruntime's quantize_dynamic instead (``--dynamic``, named
``s<seed>-d<index>``): QUInt8 / QInt8 weights x per-tensor / per-channel x reduce_range (DYNAMIC_MODES), a graph of
the ops such models compute with (DYNAMIC_FEATURE_OPS, DYNAMIC_MATRIX_OPS: convolutions and MatMul layers
quantized at run time, the float ops between them, the modern blocks in MODERN_SHARE of the cases).
"""

import io
import itertools
import random
from dataclasses import dataclass, field

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

from .modern import BLOCK_NAMES, BLOCKS

OPSET = 17
MODERN_SHARE = 0.35
BLOCK_DRAWS = ("mixed", "only", "none")   # make_case's blocks=: in MODERN_SHARE of the cases, in every case, never

# The quantizer modes: every combination, enumerated so that consecutive cases cover them all.
FORMATS = ("QDQ", "QOperator")
ACTIVATION_TYPES = ("QUInt8", "QInt8")
MODES = [dict(format=f, activation_type=a, per_channel=pc, reduce_range=rr, activation_symmetric=asym,
              weight_symmetric=wsym)
         for f, a, pc, rr, asym, wsym in itertools.product(FORMATS, ACTIVATION_TYPES, (False, True), (False, True),
                                                           (False, True), (False, True))]

# quantize_static's extra options that change the graph it writes (each found refused once, 2026-12-05:
# tests/onnx/test_onnx_quantizer_options.py): a case gets one of them now and then, drawn apart from the
# graph's own draws so that a campaign's graphs stay what they were
EXTRA_OPTIONS = {
    "QDQ": [{"AddQDQPairToWeight": True}, {"QuantizeBias": False}, {"DedicatedQDQPair": True},
            {"QDQKeepRemovableActivations": True}, {"UseQDQContribOps": True}],
    "QOperator": [{"ForceQuantizeNoInputCheck": True}],
}
EXTRA_SHARE = 0.25

# quantize_dynamic's modes (MatMulConstBOnly, as transformers.js's q8): its activations are uint8, found at run time
DYNAMIC_MODES = [dict(format="dynamic", activation_type="QUInt8", weight_type=w, per_channel=pc, reduce_range=rr,
                      activation_symmetric=False, weight_symmetric=False)
                 for w, pc, rr in itertools.product(("QUInt8", "QInt8"), (False, True), (False, True))]


@dataclass
class Case:
    name: str
    seed: int
    index: int
    mode: dict
    float_model: onnx.ModelProto
    inputs: dict                      # input name -> float32 NCHW array (the compared run)
    calibration: list                 # [{input name: array}] for quantize_static
    ops: list = field(default_factory=list)   # the float graph's op types, in order (for summaries)
    blocks: list = field(default_factory=list)   # the modern blocks it has (modern.BLOCK_NAMES), in order
    draw: str = "mixed"                          # make_case's blocks= (one of BLOCK_DRAWS)

    def describe(self):
        m = self.mode
        return (f"{m['format']} {m['activation_type']} act / {m['weight_type']} w"
                f"{' per-channel' if m['per_channel'] else ''}{' reduce_range' if m['reduce_range'] else ''}"
                f"{' ActSym' if m['activation_symmetric'] else ''}{' WSym' if m['weight_symmetric'] else ''}"
                f"{''.join(f' {k}={v}' for k, v in m.get('extra', {}).items())}"
                f"{' [' + ', '.join(self.blocks) + ']' if self.blocks else ''}: {' '.join(self.ops)}")


class _Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.initializers = [], []
        self.count = 0
        self.ops = []
        self.blocks = []
        self.min_opset = OPSET    # a block's op may need a later opset (modern.GELU_OPSET)

    def name(self, prefix):
        self.count += 1
        return f"{prefix}_{self.count}"

    def const(self, array, prefix="c"):
        name = self.name(prefix)
        self.initializers.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op_type, inputs, n_outputs=1, **attrs):
        outputs = [self.name(op_type.lower()) for _ in range(n_outputs)]
        self.nodes.append(helper.make_node(op_type, inputs, outputs, name=self.name("n_" + op_type), **attrs))
        self.ops.append(op_type)
        return outputs[0] if n_outputs == 1 else outputs

    def normal(self, shape, scale=1.0):
        return (self.rng.standard_normal(shape) * scale).astype(np.float32)


# ----------------------------------------------------------------------------------------------- ops
# Each op function takes (builder, random.Random, tensor name, shape) and returns (name, shape),
# or None when it does not apply to this shape.

def _conv_output(size, k, s, d, pad_total):
    return (size + pad_total - ((k - 1) * d + 1)) // s + 1


def op_conv(b, r, x, shape, form=None, out_channels=None, keep_size=False):
    n, c, h, w = shape
    form = form or r.choices(["regular", "depthwise", "pointwise", "grouped"], [50, 30, 17, 3])[0]
    if form == "grouped" and c < 4:
        form = "regular"
    if form == "pointwise":
        kh = kw = 1
    else:
        kh = r.choice([1, 2, 3, 3, 3, 5]) if r.random() < 0.9 else r.choice([1, 3])
        kw = kh if r.random() < 0.8 else r.choice([1, 2, 3])
    s = (1, 1) if keep_size else (r.choice([1, 1, 2, 3]), r.choice([1, 1, 2, 3]))
    if r.random() < 0.7 and not keep_size:
        s = (s[0], s[0])
    d = (1, 1) if keep_size or r.random() < 0.75 else (r.choice([1, 2]), r.choice([1, 2]))
    if form == "depthwise":
        group = c
        multiplier = r.choice([1, 1, 1, 2, 3])
        out_c = c * multiplier
    elif form == "grouped":
        divisors = [g for g in range(2, c) if c % g == 0]
        if not divisors:
            return op_conv(b, r, x, shape, "regular", out_channels, keep_size)
        group = r.choice(divisors)
        out_c = group * r.choice([1, 2])
    else:
        group = 1
        out_c = out_channels or r.choice([1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 13, 16, 17, 20, 24])
    attrs = dict(kernel_shape=[kh, kw], strides=list(s))
    if d != (1, 1):
        attrs["dilations"] = list(d)
    if group != 1:
        attrs["group"] = group
    eff_h, eff_w = (kh - 1) * d[0] + 1, (kw - 1) * d[1] + 1
    if keep_size:
        pad_mode = "same"
    else:
        pad_mode = r.choice(["explicit", "explicit", "symmetric", "zero", "SAME_UPPER", "SAME_LOWER", "VALID"])
    if pad_mode in ("SAME_UPPER", "SAME_LOWER") and d != (1, 1):
        pad_mode = "explicit"   # onnxruntime: "Dilation not supported for AutoPadType::SAME_UPPER"
    if pad_mode in ("SAME_UPPER", "SAME_LOWER"):
        attrs["auto_pad"] = pad_mode
        out_h, out_w = -(-h // s[0]), -(-w // s[1])
    elif pad_mode == "VALID":
        attrs["auto_pad"] = "VALID"
        out_h, out_w = _conv_output(h, eff_h, s[0], 1, 0), _conv_output(w, eff_w, s[1], 1, 0)
    else:
        if pad_mode == "same":
            pads = [(eff_h - 1) // 2, (eff_w - 1) // 2, eff_h - 1 - (eff_h - 1) // 2, eff_w - 1 - (eff_w - 1) // 2]
        elif pad_mode == "symmetric":
            ph, pw = r.randint(0, max(0, (eff_h - 1) // 2 + 0)), r.randint(0, max(0, (eff_w - 1) // 2))
            pads = [ph, pw, ph, pw]
        elif pad_mode == "zero":
            pads = [0, 0, 0, 0]
        else:
            pads = [r.randint(0, kh - 1 if kh > 1 else 0), r.randint(0, kw - 1 if kw > 1 else 0),
                    r.randint(0, kh - 1 if kh > 1 else 0), r.randint(0, kw - 1 if kw > 1 else 0)]
        if any(pads):
            attrs["pads"] = pads
        out_h = _conv_output(h, eff_h, s[0], 1, pads[0] + pads[2])
        out_w = _conv_output(w, eff_w, s[1], 1, pads[1] + pads[3])
    if out_h < 1 or out_w < 1:
        return None
    fan_in = (c // group) * kh * kw
    weights = b.normal((out_c, c // group, kh, kw), 1.0 / np.sqrt(fan_in))
    inputs = [x, b.const(weights, "w")]
    if r.random() < 0.75:
        inputs.append(b.const(b.normal((out_c,), 0.3), "bias"))
    y = b.node("Conv", inputs, **attrs)
    return y, (n, out_c, out_h, out_w)


UNARY = ("Relu", "Clip", "Sigmoid", "Tanh", "HardSwish", "HardSigmoid", "LeakyRelu")


def op_unary(b, r, x, shape, op_type=None):
    op_type = op_type or r.choice(UNARY)
    if op_type == "Clip":
        low, high = r.choice([(0.0, 6.0), (-1.0, 1.0), (0.0, None), (None, 1.5), (-0.5, 2.0)])
        inputs = [x, b.const(np.float32(low), "min") if low is not None else ""]
        if high is not None:
            inputs.append(b.const(np.float32(high), "max"))
        return b.node("Clip", inputs), shape
    if op_type == "LeakyRelu":
        return b.node("LeakyRelu", [x], alpha=r.choice([0.01, 0.1, 0.2, 0.3])), shape
    if op_type == "HardSigmoid":
        alpha, beta = r.choice([(0.2, 0.5), (1.0 / 6.0, 0.5)])
        return b.node("HardSigmoid", [x], alpha=alpha, beta=beta), shape
    return b.node(op_type, [x]), shape


def _constant_shapes(shape):
    if len(shape) == 4:
        _, c, h, w = shape
        return [(c, 1, 1), (1,), (1, c, 1, 1), (w,), (h, 1), (c, h, w), (1, 1, h, w)]
    if len(shape) == 2:
        return [(shape[1],), (1,), (1, shape[1])]
    return [(shape[-1],), (1,)]


def op_binary_constant(b, r, x, shape):
    op_type = r.choice(["Add", "Add", "Mul"])
    cshape = r.choice(_constant_shapes(shape))
    if op_type == "Mul":
        values = b.normal(cshape, 0.5) + np.float32(r.choice([0.0, 1.0]))
    else:
        values = b.normal(cshape, 0.7)
    inputs = [x, b.const(values.astype(np.float32), "k")]
    if r.random() < 0.3:
        inputs.reverse()
    return b.node(op_type, inputs), shape


def _branch(b, r, x, shape, same_channels=True):
    """A shape-preserving branch (or a channel-changing one when not same_channels)."""
    kind = r.choice(["conv", "conv", "unary", "conv_unary", "depthwise"])
    if kind == "unary":
        return op_unary(b, r, x, shape)
    if kind == "depthwise":
        return op_conv(b, r, x, shape, form="depthwise", keep_size=True) if same_channels else \
            op_conv(b, r, x, shape, form="regular", keep_size=True)
    out_c = shape[1] if same_channels else r.choice([1, 2, 3, 5, 8, 11])
    y, s = op_conv(b, r, x, shape, form="regular", out_channels=out_c, keep_size=True)
    if kind == "conv_unary":
        y, s = op_unary(b, r, y, s, r.choice(["Relu", "Relu", "Clip", "Sigmoid", "LeakyRelu", "HardSwish"]))
    return y, s


def op_residual(b, r, x, shape):
    y, s = _branch(b, r, x, shape)
    if s != shape:
        return None
    op_type = "Add" if r.random() < 0.8 else "Mul"
    inputs = [x, y] if r.random() < 0.5 else [y, x]
    return b.node(op_type, inputs), shape


def op_concat(b, r, x, shape):
    axis = 1 if r.random() < 0.8 else r.choice([2, 3])
    y, s = _branch(b, r, x, shape, same_channels=axis != 1)
    if axis != 1:
        if s != shape:
            return None
    inputs = [x, y] if r.random() < 0.5 else [y, x]
    out = list(shape)
    out[axis] = shape[axis] + s[axis]
    return b.node("Concat", inputs, axis=axis), tuple(out)


def _pool_attrs(r, h, w, max_pool):
    k = (r.choice([1, 2, 2, 3, 3]), r.choice([1, 2, 2, 3, 3]))
    if r.random() < 0.6:
        k = (k[0], k[0])
    k = (min(k[0], h), min(k[1], w))
    if k == (1, 1):
        k = (min(2, h), min(2, w))
    s = (r.choice([1, 2, 2, 3]), r.choice([1, 2, 2, 3]))
    if r.random() < 0.7:
        s = (s[0], s[0])
    d = (1, 1)
    if max_pool and r.random() < 0.2:
        d = (r.choice([1, 2]), r.choice([1, 2]))
    eff = ((k[0] - 1) * d[0] + 1, (k[1] - 1) * d[1] + 1)
    attrs = dict(kernel_shape=list(k), strides=list(s))
    if d != (1, 1):
        attrs["dilations"] = list(d)
    pad_mode = r.choice(["none", "none", "explicit", "SAME_UPPER", "SAME_LOWER"])
    pads = [0, 0, 0, 0]
    if pad_mode == "explicit":
        pads = [r.randint(0, k[0] // 2), r.randint(0, k[1] // 2), r.randint(0, k[0] // 2), r.randint(0, k[1] // 2)]
        if any(pads):
            attrs["pads"] = pads
    elif pad_mode != "none":
        attrs["auto_pad"] = pad_mode
    if pad_mode in ("SAME_UPPER", "SAME_LOWER") and (s[0] > eff[0] or s[1] > eff[1]):
        del attrs["auto_pad"]   # onnxruntime: "padding values must be non-negative"
        pad_mode = "none"
    ceil = r.random() < 0.3 and pad_mode in ("none", "explicit")

    def out_size(size, kk, ss, p0, p1, ceil):
        span = size + p0 + p1 - kk
        if span < 0:
            return 0
        return (-(-span // ss) if ceil else span // ss) + 1

    if ceil:
        # A last window that would start past the input and its left padding: runtimes and onnx's
        # shape inference disagree about it, so such a pool keeps ceil_mode 0.
        for size, kk, ss, p0, p1 in ((h, eff[0], s[0], pads[0], pads[2]), (w, eff[1], s[1], pads[1], pads[3])):
            if (out_size(size, kk, ss, p0, p1, True) - 1) * ss >= size + p0:
                ceil = False
    if ceil:
        attrs["ceil_mode"] = 1

    if pad_mode in ("SAME_UPPER", "SAME_LOWER"):
        out_h, out_w = -(-h // s[0]), -(-w // s[1])
    else:
        out_h = out_size(h, eff[0], s[0], pads[0], pads[2], ceil)
        out_w = out_size(w, eff[1], s[1], pads[1], pads[3], ceil)
    return attrs, out_h, out_w


def op_pool(b, r, x, shape):
    n, c, h, w = shape
    kind = r.choice(["AveragePool", "AveragePool", "MaxPool", "MaxPool", "GlobalAveragePool"])
    if kind == "GlobalAveragePool":
        return b.node("GlobalAveragePool", [x]), (n, c, 1, 1)
    attrs, out_h, out_w = _pool_attrs(r, h, w, kind == "MaxPool")
    if out_h < 1 or out_w < 1:
        return None
    if kind == "AveragePool" and r.random() < 0.5:
        attrs["count_include_pad"] = 1
    return b.node(kind, [x], **attrs), (n, c, out_h, out_w)


def op_transpose(b, r, x, shape):
    perm = r.choice([[0, 1, 3, 2], [0, 2, 3, 1], [0, 3, 1, 2], [0, 2, 1, 3], [0, 3, 2, 1]])
    return b.node("Transpose", [x], perm=perm), tuple(shape[p] for p in perm)


def op_slice(b, r, x, shape):
    """Slice of one axis: a range with step 1 or 2, sometimes to torch's INT64_MAX end."""
    axes = [a for a in (1, 2, 3) if shape[a] >= 2]
    if not axes:
        return None
    axis = r.choice(axes)
    d = shape[axis]
    start = r.randint(0, d - 2)
    end = r.randint(start + 1, d) if r.random() < 0.8 else (1 << 63) - 1
    step = r.choice([1, 1, 2])
    inputs = [x, b.const(np.array([start], np.int64)), b.const(np.array([end], np.int64)),
              b.const(np.array([axis], np.int64)), b.const(np.array([step], np.int64))]
    out = list(shape)
    out[axis] = len(range(start, min(end, d), step))
    return b.node("Slice", inputs), tuple(out)


def op_split_swap(b, r, x, shape):
    """Split the channels in two, concatenated back the other way round (a channel shuffle)."""
    c = shape[1]
    if c < 2:
        return None
    k = r.randint(1, c - 1)
    first, second = b.node("Split", [x, b.const(np.array([k, c - k], np.int64))], n_outputs=2, axis=1)
    return b.node("Concat", [second, first], axis=1), shape


def op_gather(b, r, x, shape):
    """Gather of channels by a constant list (repeats, negative indices)."""
    c = shape[1]
    indices = [r.randint(-c, c - 1) for _ in range(r.randint(1, c + 2))]
    return b.node("Gather", [x, b.const(np.array(indices, np.int64))], axis=1), (shape[0], len(indices), *shape[2:])


def op_pad(b, r, x, shape):
    """Pad of height and width: reflect, edge, or constant 0."""
    n, c, h, w = shape
    mode = r.choice(["reflect", "edge", "constant"])
    limit = 2 if mode != "reflect" else min(2, h - 1, w - 1)
    if limit < 1:
        return None
    top, left, bottom, right = (r.randint(0, limit) for _ in range(4))
    pads = b.const(np.array([0, 0, top, left, 0, 0, bottom, right], np.int64))
    return b.node("Pad", [x, pads], mode=mode), (n, c, h + top + bottom, w + left + right)


def op_resize(b, r, x, shape):
    """Nearest upsampling (FPN / YOLO) in one of onnxruntime's nearest rules, or linear (segmentation
    heads) in any coordinate rule: x2 scales, or sizes up to twice or down to half."""
    n, c, h, w = shape
    if h * w * c > 3000:
        return None
    if r.random() < 0.6:
        attrs = {"mode": "nearest", "coordinate_transformation_mode": r.choice(["asymmetric", "half_pixel"]),
                 "nearest_mode": r.choice(["floor", "round_prefer_floor", "round_prefer_ceil"])}
    else:
        attrs = {"mode": "linear", "coordinate_transformation_mode": r.choice(
            ["half_pixel", "pytorch_half_pixel", "asymmetric", "align_corners"])}
    roi = b.const(np.zeros(0, np.float32))
    if r.random() < 0.5:
        return b.node("Resize", [x, roi, b.const(np.array([1, 1, 2, 2], np.float32))], **attrs), (n, c, 2 * h, 2 * w)
    size = (n, c, r.randint(max(1, h // 2), 2 * h), r.randint(max(1, w // 2), 2 * w))
    return b.node("Resize", [x, roi, "", b.const(np.array(size, np.int64))], **attrs), size


def op_prelu(b, r, x, shape):
    """PRelu with one slope, or one per channel ([C, 1, 1])."""
    slopes = b.normal((shape[1], 1, 1), 0.3) if r.random() < 0.7 else b.normal((1,), 0.3)
    return b.node("PRelu", [x, b.const(slopes, "slope")]), shape


def op_to_matrix(b, r, x, shape):
    n = shape[0]
    rest = int(np.prod(shape[1:]))
    if r.random() < 0.5:
        return b.node("Flatten", [x], axis=1), (n, rest)
    return b.node("Reshape", [x, b.const(np.array([n, -1 if r.random() < 0.5 else rest], np.int64), "shape")]), \
        (n, rest)


def op_dense(b, r, x, shape, kinds=("Gemm", "Gemm", "MatMul", "MatMul+Add")):
    n, k = shape
    out = r.choice([1, 2, 3, 5, 7, 10, 16, 17, 24, 33])
    weights = b.normal((k, out), 1.0 / np.sqrt(k))
    kind = r.choice(kinds)
    if kind == "Gemm":
        trans_b = r.random() < 0.5
        w = b.const(weights.T.copy() if trans_b else weights, "w")
        inputs = [x, w]
        if r.random() < 0.75:
            inputs.append(b.const(b.normal((out,), 0.3), "bias"))
        attrs = {"transB": 1} if trans_b else {}
        return b.node("Gemm", inputs, **attrs), (n, out)
    y = b.node("MatMul", [x, b.const(weights, "w")])
    if kind == "MatMul+Add":
        bias = b.const(b.normal((out,) if r.random() < 0.8 else (1, out), 0.3), "bias")
        y = b.node("Add", [y, bias] if r.random() < 0.8 else [bias, y])
    return y, (n, out)


def op_softmax(b, r, x, shape):
    return b.node("Softmax", [x], axis=-1 if len(shape) != 4 or r.random() < 0.5 else 1), shape


FEATURE_OPS = [(op_conv, 30), (op_unary, 14), (op_binary_constant, 14), (op_residual, 9), (op_concat, 6),
               (op_pool, 12), (op_transpose, 3), (op_slice, 3), (op_split_swap, 2), (op_gather, 2), (op_pad, 3),
               (op_resize, 4), (op_prelu, 3)]
# Ops that move values (and PRelu) do not start a model here: on the float input, before any
# quantization, they run in float in onnxruntime's models and qnnweb refuses them by name.
AFTER_FIRST_OP = (op_transpose, op_slice, op_split_swap, op_gather, op_pad, op_resize, op_prelu)
MATRIX_OPS = [(op_dense, 50), (op_unary, 20), (op_binary_constant, 15), (op_softmax, 8)]


def op_matmul_layer(b, r, x, shape):
    """A MatMul layer (with or without its bias Add): what quantize_dynamic quantizes (it leaves a Gemm float)."""
    return op_dense(b, r, x, shape, kinds=("MatMul", "MatMul+Add"))


# quantize_dynamic's models: the convolutions and MatMul layers (quantized at run time) and the float ops between
# them that such models have (pools, Pad and Resize of float values are not run in float: not drawn)
DYNAMIC_FEATURE_OPS = [(op_conv, 30), (op_unary, 14), (op_binary_constant, 14), (op_residual, 9), (op_concat, 6),
                       (op_transpose, 3), (op_slice, 3), (op_split_swap, 2), (op_gather, 2)]
DYNAMIC_MATRIX_OPS = [(op_matmul_layer, 50), (op_unary, 20), (op_binary_constant, 15), (op_softmax, 8)]


def _pick(r, table):
    functions, weights = zip(*table)
    return r.choices(functions, weights)[0]


def _append_blocks(b, modern, x, shape):
    """1-3 modern blocks drawn from ``modern`` = (random.Random, numpy Generator), apart from the case's
    other draws."""
    r, nprng = modern
    base_rng, b.rng = b.rng, nprng
    for _ in range(r.choice([1, 1, 2, 3])):
        block = _pick(r, BLOCKS)
        x, shape = block(b, r, x, shape)
        b.blocks.append(BLOCK_NAMES[block])
    b.rng = base_rng
    return x, shape


def build_float_model(r, nprng, modern=None, chain=True, dynamic=False):
    """A random float model: (ModelProto, input shape, op types, block names). ``modern``: (random.Random,
    numpy Generator) drawing the blocks that end the feature chain, or None; ``chain=False``: the chain is
    the first convolution alone; ``dynamic``: from the ops of quantize_dynamic's models."""
    feature_ops, matrix_ops = (DYNAMIC_FEATURE_OPS, DYNAMIC_MATRIX_OPS) if dynamic else (FEATURE_OPS, MATRIX_OPS)
    dense = op_matmul_layer if dynamic else op_dense
    b = _Builder(nprng)
    c, h, w = r.randint(1, 20), r.randint(4, 24), r.randint(4, 24)
    if r.random() < 0.5:
        w = h
    shape = (1, c, h, w)
    x = "input"
    # The first op is (nearly) always a convolution: that is what real models start with.
    start = [op_conv] if r.random() < 0.85 else []
    n_feature = r.choice([1, 2, 2, 3, 3, 4, 5])
    to_matrix = r.random() < 0.45
    n_matrix = r.choice([1, 1, 2, 3]) if to_matrix else 0
    plan = start + [None] * n_feature if chain else [op_conv]
    for function in plan:
        for _ in range(10):
            f = function or _pick(r, feature_ops)
            if f in AFTER_FIRST_OP and len(b.ops) == 0:
                continue
            if shape[2] * shape[3] * shape[1] > 6000 and f in (op_concat,):
                continue
            result = f(b, r, x, shape)
            if result is not None:
                x, shape = result
                break
            function = None
    if modern is not None:
        x, shape = _append_blocks(b, modern, x, shape)
    if to_matrix and int(np.prod(shape)) <= 4096:
        x, shape = op_to_matrix(b, r, x, shape)
        if r.random() < 0.8:
            x, shape = dense(b, r, x, shape)
        for _ in range(n_matrix):
            f = _pick(r, matrix_ops)
            if f is dense and shape[1] > 64:
                continue
            x, shape = f(b, r, x, shape)
    elif r.random() < 0.1:
        x, shape = op_softmax(b, r, x, shape)
    graph = helper.make_graph(
        b.nodes, "random",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, c, h, w])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, list(shape))],
        b.initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", b.min_opset)],
                              producer_name="qnnweb-difftest")
    model.ir_version = 8 if b.min_opset == OPSET else 9
    onnx.checker.check_model(model)
    model = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    return model, (1, c, h, w), b.ops, b.blocks


def make_case(seed, index, blocks="mixed", dynamic=False):
    """Case ``index`` of the campaign ``seed``: depends on nothing else (and on ``blocks``, one of
    BLOCK_DRAWS, and ``dynamic``: a quantize_dynamic case)."""
    if blocks not in BLOCK_DRAWS:
        raise ValueError(f"blocks={blocks!r}: expected one of {', '.join(BLOCK_DRAWS)}")
    r = random.Random(f"{seed}:{index}")
    nprng = np.random.default_rng([seed, index])
    if dynamic:
        mode = dict(DYNAMIC_MODES[(index + seed) % len(DYNAMIC_MODES)])
    else:
        mode = dict(MODES[(index + seed) % len(MODES)])
        # uint8 weights (u8u8) are offered by the quantizer too: sometimes, with uint8 activations.
        mode["weight_type"] = "QUInt8" if mode["activation_type"] == "QUInt8" and r.random() < 0.2 else "QInt8"
        extra = random.Random(f"{seed}:{index}:extra")
        if extra.random() < EXTRA_SHARE:
            mode["extra"] = dict(extra.choice(EXTRA_OPTIONS[mode["format"]]))
    draw = random.Random(f"{seed}:{index}:modern")
    with_blocks = blocks == "only" or (blocks == "mixed" and draw.random() < MODERN_SHARE)
    modern = (draw, np.random.default_rng([seed, index, 1])) if with_blocks else None
    model, shape, ops, block_names = build_float_model(r, nprng, modern, chain=blocks != "only", dynamic=dynamic)
    # Inputs: standard normal, sometimes shifted / scaled (the calibration range follows).
    offset, spread = r.choice([(0.0, 1.0), (0.0, 1.0), (0.5, 1.0), (0.0, 3.0), (0.0, 0.3)])
    calibration = [{"input": (nprng.standard_normal(shape) * spread + offset).astype(np.float32)}
                   for _ in range(r.choice([4, 8]))]
    inputs = {"input": (nprng.standard_normal(shape) * spread + offset).astype(np.float32)}
    name = f"s{seed}-{'d' if dynamic else 'm' if blocks == 'only' else 'c'}{index}"
    return Case(name, seed, index, mode, model, inputs, calibration, ops, block_names, blocks)


class _Reader:
    def __init__(self, samples):
        self.samples = iter(samples)

    def get_next(self):
        return next(self.samples, None)

    def rewind(self):
        pass


def quantize(case):
    """The case's model quantized by onnxruntime's quantize_static (or quantize_dynamic) in the case's mode
    (bytes)."""
    import logging
    import os
    import tempfile

    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_dynamic, quantize_static

    class Reader(_Reader, CalibrationDataReader):
        pass

    m = case.mode
    extra = {"ActivationSymmetric": m["activation_symmetric"], "WeightSymmetric": m["weight_symmetric"],
             **m.get("extra", {})}
    logging.getLogger().setLevel(logging.ERROR)   # "Please consider to run pre-processing ..."
    with tempfile.TemporaryDirectory(prefix="qnnweb-difftest-") as tmp:
        src, dst = os.path.join(tmp, "float.onnx"), os.path.join(tmp, "int8.onnx")
        onnx.save(case.float_model, src)
        if m["format"] == "dynamic":
            quantize_dynamic(src, dst, per_channel=m["per_channel"], reduce_range=m["reduce_range"],
                             weight_type=getattr(QuantType, m["weight_type"]), extra_options={"MatMulConstBOnly": True})
            with open(dst, "rb") as f:
                return f.read()
        quantize_static(
            src, dst, Reader(case.calibration),
            quant_format=QuantFormat.QDQ if m["format"] == "QDQ" else QuantFormat.QOperator,
            per_channel=m["per_channel"], reduce_range=m["reduce_range"],
            activation_type=getattr(QuantType, m["activation_type"]),
            weight_type=getattr(QuantType, m["weight_type"]),
            extra_options=extra)
        with open(dst, "rb") as f:
            return f.read()


def model_bytes(model):
    buffer = io.BytesIO()
    onnx.save(model, buffer)
    return buffer.getvalue()
