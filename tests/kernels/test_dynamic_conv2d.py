"""DYNAMIC_CONV_2D (onnxruntime's ConvInteger + Cast + Mul + Add of a quantize_dynamic model) after a
DYNAMIC_QUANTIZE on every variant, bit-exact with the numpy reference (qnnweb_dev.reference.dynamic.conv_integer,
checked against onnxruntime with real quantize_dynamic models in tests/onnx/test_onnx_dynamic_quantization.py):
int8 and uint8 weights, per tensor and per output channel, weight zero points, groups (depthwise too, with and
without a channel multiplier), strides, dilations, asymmetric padding (taps in it read the input's zero point),
batches, with and without bias, threads."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb.model import Model, compile_graph
from qnnweb_dev.reference import dynamic as ref


def run_dynamic_conv(variant, x, w, w_scale, w_zp, bias, stride, dilation, pads, groups):
    """DYNAMIC_QUANTIZE of float32 NHWC x, then DYNAMIC_CONV_2D by w [M, C / groups, KH, KW] (ONNX's layout),
    ``pads`` (top, bottom, left, right): float32 NHWC y, the same bytes on 1 and 2 or 3 threads."""
    n, h, w_, _ = x.shape
    m, _, kh, kw = w.shape
    top, bottom, left, right = pads
    oh = (h + top + bottom - (kh - 1) * dilation[0] - 1) // stride[0] + 1
    ow = (w_ + left + right - (kw - 1) * dilation[1] - 1) // stride[1] + 1
    g = H.GraphBuilder()
    xi = g.input(x.shape, "float32")
    qi = g.tensor(x.shape, "int8", name="q")
    g.tensors[qi].dynamic = True
    pi = g.tensor((2,), "int32", name="parameters")
    wi = g.constant(w, w.dtype.name, w_scale, w_zp, quantized_dimension=0)
    bi = g.constant(bias, "float32") if bias is not None else -1
    yi = g.output((n, oh, ow, m), "float32")
    g.op("DYNAMIC_QUANTIZE", [xi], [qi, pi])
    g.op("DYNAMIC_CONV_2D", [qi, pi, wi, bi], [yi], stride=stride, dilation=dilation, padding=list(pads),
         groups=groups)
    graph = g.graph("onnx")
    compiled = compile_graph(graph)
    results = []
    for threads in (1, next(H.THREAD_COUNTS)):
        with Model(compiled, variant, graph=graph, threads=threads) as model:
            model._host.call("qnn_split_finely", 1)
            results.append(model.run(x)[0])
    assert results[0].tobytes() == results[1].tobytes(), f"threads changed the output of {variant}"
    return results[0]


def expected(x, w, w_scale, w_zp, bias, stride, dilation, pads, groups):
    q, scale, zp = ref.dynamic_quantize_linear(x)
    top, bottom, left, right = pads
    acc = ref.conv_integer(q.transpose(0, 3, 1, 2), zp, w, w_zp, stride, (top, left, bottom, right), dilation,
                           groups)
    return ref.scaled_output(acc.transpose(0, 2, 3, 1), scale, w_scale, bias)


@st.composite
def cases(draw):
    rng = np.random.default_rng(draw(H.seeds))
    groups = draw(st.sampled_from([1, 1, 2, 3]))
    depthwise = draw(st.booleans()) and groups == 1
    group_channels = 1 if depthwise else draw(st.integers(1, 9))
    channels = draw(st.integers(2, 20)) if depthwise else group_channels * groups
    groups = channels if depthwise else groups
    # a depthwise one of multiplier 1 runs its own loop (eight channels at a time, then the rest)
    m = groups * (1 if depthwise and draw(st.booleans()) else draw(st.integers(1, 4)))
    kh, kw = draw(st.integers(1, 5)), draw(st.integers(1, 5))
    stride = (draw(st.integers(1, 3)), draw(st.integers(1, 3)))
    dilation = (draw(st.integers(1, 2)), draw(st.integers(1, 2)))
    pads = tuple(draw(st.integers(0, 3)) for _ in range(4))
    h = draw(st.integers(max(1, (kh - 1) * dilation[0] + 1 - pads[0] - pads[1]), 12))
    w_ = draw(st.integers(max(1, (kw - 1) * dilation[1] + 1 - pads[2] - pads[3]), 12))
    x = rng.standard_normal((draw(st.sampled_from([1, 2])), h, w_, channels)) * draw(H.log_uniform(-4, 4))
    x = (x + draw(st.sampled_from([0.0, 1.0, -2.0]))).astype(np.float32)
    kind = draw(st.sampled_from(["any", "positive", "negative", "zero"]))
    x = {"any": x, "positive": np.abs(x), "negative": -np.abs(x), "zero": np.zeros_like(x)}[kind]
    dtype = draw(st.sampled_from([np.int8, np.uint8]))
    info = np.iinfo(dtype)
    w = rng.integers(info.min, info.max + 1, (m, channels // groups, kh, kw)).astype(dtype)
    count = m if draw(st.booleans()) else 1
    w_scale = rng.uniform(1e-4, 1e-1, count).astype(np.float32)
    w_zp = rng.integers(info.min, info.max + 1, count) if draw(st.booleans()) else np.zeros(count, int)
    bias = rng.standard_normal(m).astype(np.float32) if draw(st.booleans()) else None
    return dict(x=x, w=w, w_scale=w_scale, w_zp=w_zp, bias=bias, stride=stride, dilation=dilation, pads=pads,
                groups=groups)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(50), deadline=None)
@given(case=cases())
def test_dynamic_conv2d_matches_reference(variant, case):
    got = run_dynamic_conv(variant, **case)
    assert got.tobytes() == expected(**case).tobytes()


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("channels", [1, 9])
def test_padding_reads_the_zero_point(variant, channels):
    """All-positive input (zero point 0) and all-negative (zero point 255): a 3x3 window of ones around the edge
    counts only the taps inside, whatever the zero point (one channel; nine channels depthwise)."""
    for sign in (1.0, -1.0):
        x = np.full((1, 4, 5, channels), 2.0 * sign, np.float32)
        w = np.ones((channels, 1, 3, 3), np.int8)
        y = run_dynamic_conv(variant, x, w, [1.0], [0], None, (1, 1), (1, 1), (1, 1, 1, 1), channels)
        q, scale, zp = ref.dynamic_quantize_linear(x)
        inside = np.array([[4, 6, 6, 6, 4], [6, 9, 9, 9, 6], [6, 9, 9, 9, 6], [4, 6, 6, 6, 4]])
        want = (inside * (int(q.flat[0]) - zp)).astype(np.float32) * scale
        np.testing.assert_array_equal(y, np.repeat(want[None, :, :, None], channels, axis=3))
