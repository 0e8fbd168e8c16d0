"""One-op graphs for the kernel tests: build a qnnweb.graph.Graph around one TFLite op, run it with
qnnweb.model.Model on one kernel variant, return the outputs as numpy arrays.

Also the hypothesis strategies the op tests share (scales, zero points, seeds).
"""

import itertools
import math
import os

import numpy as np
from hypothesis import strategies as st

import qnnweb
from qnnweb.graph import Graph, Op, Tensor
from qnnweb.model import Model, compile_graph
from qnnweb_dev.reference.int8 import conv_output_size

VARIANTS = qnnweb.VARIANTS
ACTIVATIONS = ("NONE", "RELU", "RELU6", "RELU_N1_TO_1")

# QNNWEB_EXAMPLES_FACTOR=10 for a long soak; the default keeps the suite around two minutes.
EXAMPLES_FACTOR = float(os.environ.get("QNNWEB_EXAMPLES_FACTOR", "1"))


def examples(n):
    return max(1, int(n * EXAMPLES_FACTOR))


# ----------------------------------------------------------------------------- graph building

class GraphBuilder:
    def __init__(self):
        self.tensors, self.ops, self.inputs, self.outputs = [], [], [], []

    def tensor(self, shape, dtype, scale=None, zero_point=None, data=None, quantized_dimension=0, name=None):
        index = len(self.tensors)
        if scale is None:
            scale, zero_point = (), ()
        else:
            scale = tuple(float(s) for s in np.atleast_1d(scale))
            zero_point = tuple(int(z) for z in np.atleast_1d(zero_point))
        if data is not None:
            data = np.ascontiguousarray(data).tobytes()
        self.tensors.append(Tensor(index, name or f"t{index}", tuple(int(d) for d in shape), dtype, scale,
                                   zero_point, quantized_dimension, data))
        return index

    def input(self, shape, dtype="int8", scale=None, zero_point=None):
        index = self.tensor(shape, dtype, scale, zero_point)
        self.inputs.append(index)
        return index

    def output(self, shape, dtype="int8", scale=None, zero_point=None):
        index = self.tensor(shape, dtype, scale, zero_point)
        self.outputs.append(index)
        return index

    def constant(self, array, dtype, scale=None, zero_point=None, quantized_dimension=0):
        array = np.asarray(array, dtype=dtype)
        return self.tensor(array.shape, dtype, scale, zero_point, array, quantized_dimension)

    def op(self, op_type, inputs, outputs, **options):
        self.ops.append(Op(len(self.ops), op_type, list(inputs), list(outputs), options))

    def graph(self, fmt="tflite"):
        return Graph(self.tensors, self.ops, self.inputs, self.outputs, fmt)


# Every one-op run is repeated on the variant's threaded module, with 2 and 3 threads in turn (on
# this 2-core machine, 3 also covers a thread that is descheduled mid-op), its ops split as finely as
# their sizes allow (qnn_split_finely: by default an op this small would run as one task): the
# bytes must not change.
THREAD_COUNTS = itertools.cycle((2, 3))


def run(builder, variant, *inputs, fmt="tflite", kernel_bytes=None):
    """Lower and run the graph on ``variant``; returns the list of numpy outputs. ``fmt`` is the
    graph's format ("tflite" or "onnx"): ops follow that format's reference runtime's arithmetic.
    ``kernel_bytes``: Model's (other builds of the modules). The outputs are checked bit-identical
    with the same graph run on several threads."""
    graph = builder.graph(fmt)
    compiled = compile_graph(graph)
    model = Model(compiled, variant, graph=graph, kernel_bytes=kernel_bytes)
    assert model.variant == variant
    outputs = model.run(*inputs)
    threads = next(THREAD_COUNTS)
    with Model(compiled, variant, graph=graph, threads=threads, kernel_bytes=kernel_bytes) as threaded:
        assert threaded.threads == threads
        threaded._host.call("qnn_split_finely", 1)
        for single, multi in zip(outputs, threaded.run(*inputs)):
            assert single.tobytes() == multi.tobytes(), f"{threads} threads changed the output of {variant}"
    return outputs


# ----------------------------------------------------------------------------- one-op runners

def conv2d(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, stride=(1, 1), dilation=(1, 1),
           padding=(0, 0, 0, 0), activation="NONE", depthwise=False, bias_scales=None, w_zp=0, kernel_bytes=None):
    """CONV_2D (w: OHWI) or DEPTHWISE_CONV_2D (w: [1, KH, KW, C*M]); padding (top, bottom, left, right);
    w_zp: the weights' zero point, per tensor (an int) or per output channel (a sequence)."""
    n, ih, iw, _ = x.shape
    kh, kw = w.shape[1], w.shape[2]
    oc = w.shape[3] if depthwise else w.shape[0]
    oh = conv_output_size(ih, kh, stride[0], dilation[0], padding[0], padding[1])
    ow = conv_output_size(iw, kw, stride[1], dilation[1], padding[2], padding[3])
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", x_scale, x_zp)
    w_scales = tuple(w_scales)
    axis = 3 if depthwise else 0
    w_scales, zero_points = weight_quantization(w_scales, w_zp, oc)
    wi = g.constant(w, "int8", w_scales, zero_points, quantized_dimension=axis if len(w_scales) > 1 else 0)
    inputs = [xi, wi]
    if bias is not None:
        scales = [x_scale * s for s in (w_scales if len(w_scales) > 1 else w_scales * oc)]
        inputs.append(g.constant(bias, "int32", scales, (0,) * oc, quantized_dimension=0))
    else:
        inputs.append(-1)
    yi = g.output((n, oh, ow, oc), "int8", y_scale, y_zp)
    g.op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", inputs, [yi], stride=tuple(stride),
         dilation=tuple(dilation), padding=list(padding), activation=activation)
    return run(g, variant, x, kernel_bytes=kernel_bytes)[0]


def weight_quantization(w_scales, w_zp, channels):
    """(scales, zero points) of a weight tensor: w_zp is per tensor (an int) or per channel (a sequence,
    which makes the scales per channel too)."""
    if np.ndim(w_zp):
        return (w_scales * channels if len(w_scales) == 1 else w_scales), tuple(int(z) for z in w_zp)
    return w_scales, (w_zp,) * len(w_scales)


def fully_connected(variant, x, x_scale, x_zp, w, w_scales, bias, y_scale, y_zp, activation="NONE", w_zp=0):
    oc, k = w.shape
    rows = x.size // k
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", x_scale, x_zp)
    w_scales, zero_points = weight_quantization(tuple(w_scales), w_zp, oc)
    wi = g.constant(w, "int8", w_scales, zero_points)
    inputs = [xi, wi]
    if bias is not None:
        scales = [x_scale * s for s in (w_scales if len(w_scales) > 1 else w_scales * oc)]
        inputs.append(g.constant(bias, "int32", scales, (0,) * oc))
    yi = g.output((rows, oc), "int8", y_scale, y_zp)
    g.op("FULLY_CONNECTED", inputs, [yi], activation=activation, weights_format=0)
    return run(g, variant, x)[0]


def add(variant, a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE", fmt="tflite", **options):
    g = GraphBuilder()
    ai = g.input(a.shape, "int8", a_scale, a_zp)
    bi = g.input(b.shape, "int8", b_scale, b_zp)
    yi = g.output(a.shape, "int8", y_scale, y_zp)
    g.op("ADD", [ai, bi], [yi], activation=activation, **options)
    return run(g, variant, a, b, fmt=fmt)[0]


def average_pool2d(variant, x, x_scale, x_zp, y_scale, y_zp, kernel, stride, padding, activation="NONE",
                   count_include_pad=False, fmt="tflite", float_table=None):
    """``float_table``: 256 float32 by input byte, the taps' values (an ONNX float pool of a float op), or
    [channels, 256] (one table per channel)."""
    n, ih, iw, c = x.shape
    oh = conv_output_size(ih, kernel[0], stride[0], 1, padding[0], padding[1])
    ow = conv_output_size(iw, kernel[1], stride[1], 1, padding[2], padding[3])
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", x_scale, x_zp)
    yi = g.output((n, oh, ow, c), "int8", y_scale, y_zp)
    options = {} if float_table is None else {"float_table": np.asarray(float_table, "<f4").tobytes()}
    g.op("AVERAGE_POOL_2D", [xi], [yi], kernel=tuple(kernel), stride=tuple(stride), padding=list(padding),
         activation=activation, count_include_pad=count_include_pad, **options)
    return run(g, variant, x, fmt=fmt)[0]


def mean_hw(variant, x, x_scale, x_zp, y_scale, y_zp, keep_dims=True, axes=(1, 2), axes_dtype="int32"):
    """MEAN of a rank-4 tensor over ``axes`` (by default height and width)."""
    reduced = {a % 4 for a in axes}
    out = [1 if k in reduced else d for k, d in enumerate(x.shape)]
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", x_scale, x_zp)
    ai = g.constant(np.array(axes), axes_dtype)
    yi = g.output(out if keep_dims else [d for k, d in enumerate(x.shape) if k not in reduced], "int8", y_scale, y_zp)
    g.op("MEAN", [xi, ai], [yi], keep_dims=keep_dims)
    return run(g, variant, x)[0]


def pad(variant, x, scale, zp, padding):
    """padding: (top, bottom, left, right[, front, back]) of an NHWC tensor (front / back: channels)."""
    top, bottom, left, right, front, back = (tuple(padding) + (0, 0))[:6]
    n, h, w, c = x.shape
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", scale, zp)
    pi = g.constant(np.array([[0, 0], [top, bottom], [left, right], [front, back]]), "int32")
    yi = g.output((n, h + top + bottom, w + left + right, c + front + back), "int8", scale, zp)
    g.op("PAD", [xi, pi], [yi])
    return run(g, variant, x)[0]


def quantize(variant, x, scale, zp, fmt="tflite"):
    g = GraphBuilder()
    xi = g.input(x.shape, "float32")
    yi = g.output(x.shape, "int8", scale, zp)
    g.op("QUANTIZE", [xi], [yi])
    return run(g, variant, np.ascontiguousarray(x, dtype=np.float32), fmt=fmt)[0]


def dequantize(variant, x, scale, zp):
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", scale, zp)
    yi = g.output(x.shape, "float32")
    g.op("DEQUANTIZE", [xi], [yi])
    return run(g, variant, x)[0]


def requantize(variant, x, x_scale, x_zp, y_scale, y_zp):
    """int8 -> int8 QUANTIZE of an ONNX graph: the fp32 requantize record (a TFLite graph's runs as
    LiteRT's fixed-point table instead, tested against LiteRT in tests/tflite/test_tflite_int8_arithmetic.py)."""
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", x_scale, x_zp)
    yi = g.output(x.shape, "int8", y_scale, y_zp)
    g.op("QUANTIZE", [xi], [yi])
    return run(g, variant, x, fmt="onnx")[0]


def softmax(variant, x, x_scale, x_zp, y_scale, y_zp, beta=1.0, fmt="tflite"):
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", x_scale, x_zp)
    yi = g.output(x.shape, "int8", y_scale, y_zp)
    g.op("SOFTMAX", [xi], [yi], beta=beta)
    return run(g, variant, x, fmt=fmt)[0]


def layer_norm(variant, x, x_scale, x_zp, gamma, beta, epsilon, y_scale, y_zp, arithmetic="layer"):
    """LAYER_NORM of int8 x [rows, columns] (arithmetic "layer": gamma / beta [columns]) or [N, C, columns]
    ("instance": gamma / beta [C]); a float32 x is read as it is (x_scale, x_zp unused), and y_scale None
    gives a float32 output."""
    g = GraphBuilder()
    xi = g.input(x.shape, "float32") if x.dtype == np.float32 else g.input(x.shape, "int8", x_scale, x_zp)
    yi = g.output(x.shape, "float32") if y_scale is None else g.output(x.shape, "int8", y_scale, y_zp)
    parameters = [g.constant(p, "float32") for p in (gamma, beta)]
    g.op("LAYER_NORM", [xi, *parameters], [yi], axis=-1 if arithmetic == "layer" else 2, epsilon=epsilon,
         arithmetic=arithmetic)
    return run(g, variant, x, fmt="onnx")[0]


def assert_same_floats(got, want, x=None):
    """float32 arrays equal bit for bit, any NaN equal to any NaN; ``x``: the inputs, to name the first
    element that differs."""
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    assert got.shape == want.shape
    same = (got.view(np.uint32) == want.view(np.uint32)) | (np.isnan(got) & np.isnan(want))
    bad = np.flatnonzero(~same)
    if bad.size:
        k = bad[0]
        at = f"f({x.flat[k]!r} = {x.flat[k].view(np.uint32):#010x})" if x is not None else f"element {k}"
        raise AssertionError(f"{bad.size} of {got.size} differ: {at} = {got.flat[k]!r}, expected {want.flat[k]!r}")


# ----------------------------------------------------------------------------- strategies

def f32(x):
    return float(np.float32(x))


def log_uniform(lo_exp, hi_exp):
    """Positive float32-representable values, log-uniform in [2**lo_exp, 2**hi_exp]."""
    return st.floats(lo_exp, hi_exp, allow_nan=False, allow_infinity=False).map(lambda e: f32(2.0 ** e))


zero_points = st.integers(-128, 127)
seeds = st.integers(0, 2 ** 32 - 1)
# Channel counts: every small one, and some larger ones that are not multiples of 4, 8 or 16.
channels = st.one_of(st.integers(1, 40), st.sampled_from([47, 64, 67, 130]))


def int8_array(rng, shape, kind="uniform"):
    """Random int8 data; ``kind`` picks uniform, all-extreme or narrow distributions."""
    if kind == "uniform":
        return rng.integers(-128, 128, size=shape, dtype=np.int8)
    if kind == "extreme":
        return rng.choice(np.array([-128, 127], dtype=np.int8), size=shape)
    if kind == "narrow":
        centre = int(rng.integers(-100, 100))
        return np.clip(rng.integers(centre - 10, centre + 11, size=shape), -128, 127).astype(np.int8)
    raise ValueError(kind)


data_kinds = st.sampled_from(["uniform", "uniform", "uniform", "extreme", "narrow"])
weight_kinds = st.sampled_from(["full", "full", "restricted", "extreme"])


def weights_array(rng, shape, kind):
    """Symmetric int8 weights: full [-128, 127], TFLite's restricted [-127, 127], or +-127/-128 only."""
    if kind == "full":
        return rng.integers(-128, 128, size=shape, dtype=np.int8)
    if kind == "restricted":
        return rng.integers(-127, 128, size=shape, dtype=np.int8)
    return rng.choice(np.array([-128, -127, 127], dtype=np.int8), size=shape)


def bias_array(rng, channels, magnitude_bits):
    if magnitude_bits is None:
        return None
    bound = 1 << magnitude_bits
    return rng.integers(-bound, bound + 1, size=channels).astype(np.int32)


def fit_activation(draw, activation, x_scale, y_scale):
    """For RELU6 / RELU_N1_TO_1, sometimes rescale the input and output scales together (same
    requantization) so the activation's bound falls inside the int8 range, as in real models."""
    bound = {"RELU6": 6.0, "RELU_N1_TO_1": 1.0}.get(activation)
    if bound is None or not draw(st.booleans()):
        return x_scale, y_scale
    target = f32(bound / draw(st.integers(8, 260)))
    return f32(x_scale * target / y_scale), target


def output_scale_for(x_scale, w_scale, terms, factor):
    """An output scale that puts a typical accumulator of ``terms`` products in int8 range,
    times ``factor`` (so some cases saturate and some use only a few levels)."""
    # (x - x_zp) * w has a standard deviation of about 75 * 75 for uniform int8 data: aim at +-40.
    return f32(x_scale * w_scale * math.sqrt(terms) * 75.0 * 75.0 / 40.0 * factor)


kernel_sizes = st.one_of(st.integers(1, 5), st.just(7))


@st.composite
def windows(draw, work_per_pixel, budget=600_000, max_stride=3, max_dilation=2, kernel=kernel_sizes,
            max_extra_padding=0):
    """(batch, (ih, iw), (kh, kw), (sh, sw), (dh, dw), (top, bottom, left, right)) with an output of
    at least 1x1, every padding from 0 to the effective kernel size (+ max_extra_padding), and at
    most about ``budget / (work_per_pixel * kh * kw)`` output pixels."""
    batch = draw(st.sampled_from([1, 1, 1, 2, 3]))
    kh = draw(kernel)
    kw = draw(st.one_of(st.just(kh), kernel))
    sh, sw = draw(st.integers(1, max_stride)), draw(st.integers(1, max_stride))
    dh, dw = draw(st.integers(1, max_dilation)), draw(st.integers(1, max_dilation))
    pixels = max(1, budget // (work_per_pixel * kh * kw * batch))
    side = max(1, math.isqrt(pixels))
    sizes, padding = [], []
    for k, s, d in ((kh, sh, dh), (kw, sw, dw)):
        effective = (k - 1) * d + 1
        before = draw(st.integers(0, effective - 1 + max_extra_padding))
        after = draw(st.integers(0, effective - 1 + max_extra_padding))
        lo = max(1, effective - before - after)
        hi = max(lo, (side - 1) * s + effective - before - after)
        sizes.append(draw(st.integers(lo, min(hi, lo + 40))))
        padding += [before, after]
    return batch, tuple(sizes), (kh, kw), (sh, sw), (dh, dw), tuple(padding)


# ----------------------------------------------------------------------------- ONNX-era ops

def conv2d_layout(variant, x, x_scale, x_zp, w_ohwi, w_scales, bias, y_scale, y_zp, stride=(1, 1), dilation=(1, 1),
                  padding=(0, 0, 0, 0), activation="NONE", depthwise=False):
    """CONV_2D / DEPTHWISE_CONV_2D with weights_layout "OIHW": w_ohwi (the TFLite layout the reference
    takes) is transposed here to ONNX's [O, I, KH, KW] (depthwise: [C*M, 1, KH, KW])."""
    n, ih, iw, _ = x.shape
    kh, kw = w_ohwi.shape[1], w_ohwi.shape[2]
    if depthwise:
        w = np.ascontiguousarray(w_ohwi.transpose(3, 0, 1, 2))   # [1,KH,KW,OC] -> [OC,1,KH,KW]
    else:
        w = np.ascontiguousarray(w_ohwi.transpose(0, 3, 1, 2))   # OHWI -> OIHW
    oc = w.shape[0]
    oh = conv_output_size(ih, kh, stride[0], dilation[0], padding[0], padding[1])
    ow = conv_output_size(iw, kw, stride[1], dilation[1], padding[2], padding[3])
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", x_scale, x_zp)
    w_scales = tuple(w_scales)
    wi = g.constant(w, "int8", w_scales, (0,) * len(w_scales), quantized_dimension=0)
    inputs = [xi, wi]
    if bias is not None:
        scales = [x_scale * s for s in (w_scales if len(w_scales) > 1 else w_scales * oc)]
        inputs.append(g.constant(bias, "int32", scales, (0,) * oc))
    yi = g.output((n, oh, ow, oc), "int8", y_scale, y_zp)
    g.op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", inputs, [yi], stride=tuple(stride),
         dilation=tuple(dilation), padding=list(padding), activation=activation, weights_layout="OIHW")
    return run(g, variant, x)[0]


def fully_connected_io(variant, x, x_scale, x_zp, w_oi, w_scales, bias, y_scale, y_zp, activation="NONE"):
    """FULLY_CONNECTED with weights_layout "IO": weights [in, out] (ONNX MatMul), per channel on axis 1."""
    oc, k = w_oi.shape
    rows = x.size // k
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", x_scale, x_zp)
    w_scales = tuple(w_scales)
    wi = g.constant(np.ascontiguousarray(w_oi.T), "int8", w_scales, (0,) * len(w_scales),
                    quantized_dimension=1 if len(w_scales) > 1 else 0)
    inputs = [xi, wi]
    if bias is not None:
        scales = [x_scale * s for s in (w_scales if len(w_scales) > 1 else w_scales * oc)]
        inputs.append(g.constant(bias, "int32", scales, (0,) * oc))
    yi = g.output((rows, oc), "int8", y_scale, y_zp)
    g.op("FULLY_CONNECTED", inputs, [yi], activation=activation, weights_layout="IO")
    return run(g, variant, x)[0]


def binary(variant, op_type, a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, activation="NONE",
           constant=None, fmt="tflite", float_output=False, **options):
    """ADD / SUB / MUL / MAXIMUM / MINIMUM with numpy broadcasting; ``constant`` = "a" or "b" makes
    that input a constant tensor; ``float_output``: a float32 output (ONNX's float ops at a model's end);
    ``options``: the op's other options (``uint8=True``: an ONNX uint8 model's op)."""
    g = GraphBuilder()
    inputs, feeds = [], []
    for name, x, s, z in (("a", a, a_scale, a_zp), ("b", b, b_scale, b_zp)):
        if constant == name:
            inputs.append(g.constant(x, "int8", s, z))
        else:
            inputs.append(g.input(x.shape, "int8", s, z))
            feeds.append(x)
    shape = np.broadcast_shapes(a.shape, b.shape)
    yi = g.output(shape, "float32") if float_output else g.output(shape, "int8", y_scale, y_zp)
    g.op(op_type, inputs, [yi], activation=activation, **options)
    return run(g, variant, *feeds, fmt=fmt)[0]


def max_pool2d(variant, x, scale, zp, kernel, stride, padding, dilation=(1, 1), activation="NONE"):
    n, ih, iw, c = x.shape
    oh = conv_output_size(ih, kernel[0], stride[0], dilation[0], padding[0], padding[1])
    ow = conv_output_size(iw, kernel[1], stride[1], dilation[1], padding[2], padding[3])
    g = GraphBuilder()
    xi = g.input(x.shape, "int8", scale, zp)
    yi = g.output((n, oh, ow, c), "int8", scale, zp)
    options = dict(kernel=tuple(kernel), stride=tuple(stride), padding=list(padding), activation=activation)
    if dilation != (1, 1):
        options["dilation"] = tuple(dilation)
    g.op("MAX_POOL_2D", [xi], [yi], **options)
    return run(g, variant, x)[0]




def concatenation(variant, inputs, axis, y_scale, y_zp):
    """inputs: [(x, x_scale, x_zp)], concatenated along ``axis`` of their (equal-rank) shapes."""
    g = GraphBuilder()
    indexes = [g.input(x.shape, "int8", s, z) for x, s, z in inputs]
    shape = list(inputs[0][0].shape)
    shape[axis] = sum(x.shape[axis] for x, _, _ in inputs)
    yi = g.output(shape, "int8", y_scale, y_zp)
    g.op("CONCATENATION", indexes, [yi], axis=axis, activation="NONE")
    return run(g, variant, *[x for x, _, _ in inputs])[0]


def transpose(variant, x, perm, dtype="int8"):
    g = GraphBuilder()
    quantization = (0.5, 3) if dtype == "int8" else (None, None)
    xi = g.input(x.shape, dtype, *quantization)
    yi = g.output([x.shape[p] for p in perm], dtype, *quantization)
    g.op("TRANSPOSE", [xi], [yi], perm=list(perm))
    return run(g, variant, x)[0]


def unary(variant, op_type, x, x_scale, x_zp, y_scale, y_zp, x_dtype="int8", y_dtype="int8", fmt="tflite",
          **options):
    g = GraphBuilder()
    xi = g.input(x.shape, x_dtype, x_scale, x_zp)
    yi = g.output(x.shape, y_dtype, y_scale, y_zp)
    g.op(op_type, [xi], [yi], **options)
    return run(g, variant, x, fmt=fmt)[0]


def resize(variant, op_type, x, out_hw, align_corners=False, half_pixel_centers=False, dtype="int8", scale=0.1,
           zero_point=None, onnx=None, output_quantization=None):
    """``onnx``: (coordinate_transformation_mode, arithmetic) of an ONNX Resize (sizes given; arithmetic
    "float_output": a float32 output); ``output_quantization``: (scale, zero point) of the output when not
    the input's (arithmetic "float")."""
    g = GraphBuilder()
    zero_point = (-3 if dtype == "int8" else 125) if zero_point is None else zero_point
    xi = g.input(x.shape, dtype, scale, zero_point)
    size = g.constant(np.array(out_hw, np.int32), "int32")
    if onnx is not None and onnx[1] == "float_output":   # a float32 output (the lowering picks arithmetic 4)
        yi, onnx = g.output((x.shape[0], *out_hw, x.shape[3]), "float32"), (onnx[0], "float")
    else:
        yi = g.output((x.shape[0], *out_hw, x.shape[3]), dtype, *(output_quantization or (scale, zero_point)))
    if onnx is None:
        g.op(op_type, [xi, size], [yi], align_corners=align_corners, half_pixel_centers=half_pixel_centers)
    else:
        scales = tuple(float(np.float32(o) / np.float32(i)) for o, i in zip(out_hw, x.shape[1:3]))
        g.op(op_type, [xi, size], [yi], coordinate_transformation_mode=onnx[0], onnx_arithmetic=onnx[1],
             scales=scales)
    return run(g, variant, x)[0]


def batch_matmul(variant, a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp, adj_y=False, fmt="tflite",
                 kernel_bytes=None):
    """BATCH_MATMUL of two int8 inputs (b: [..., K, N], or [..., N, K] with adj_y), batch dimensions
    broadcast; ``fmt`` and B's zero point pick the arithmetic (ops/batch_matmul.py)."""
    m, n = a.shape[-2], b.shape[-2] if adj_y else b.shape[-1]
    batch = np.broadcast_shapes(a.shape[:-2], b.shape[:-2])
    g = GraphBuilder()
    ai = g.input(a.shape, "int8", a_scale, a_zp)
    bi = g.input(b.shape, "int8", b_scale, b_zp)
    yi = g.output(tuple(batch) + (m, n), "int8", y_scale, y_zp)
    g.op("BATCH_MATMUL", [ai, bi], [yi], adj_x=False, adj_y=adj_y)
    return run(g, variant, a, b, fmt=fmt, kernel_bytes=kernel_bytes)[0]
