"""Chains of element-wise steps of one tensor's bytes run as one composed table (ops/byte_functions.py): SiLU
(LOGISTIC, then MUL of x and sigmoid(x)) and GELU written out (a table, ADD of a constant, MUL by x, MUL by a
constant) give the same bytes as their steps run one by one, on every int8 value, in both formats' MUL
arithmetic (onnxruntime's QLinearMul with uint8's offset; LiteRT's fp32 requantization) and onnxruntime's ADD,
either operand order; a chain's step whose result something else reads stays."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb.model import Model, compile_graph

EVERY_BYTE = np.arange(-128, 128, dtype=np.int8).reshape(1, 4, 8, 8)
SHAPE = EVERY_BYTE.shape


def run_both(builder, fmt, variant="relaxed"):
    """(outputs with the chains fused, outputs with every step run (keep_intermediates), the fused plan's step
    kinds)."""
    graph = builder.graph(fmt)
    fused = compile_graph(graph)
    apart = compile_graph(graph, keep_intermediates=True)
    got = Model(fused, variant, graph=graph).run(EVERY_BYTE)
    want = Model(apart, variant, graph=graph).run(EVERY_BYTE)
    return got, want, [step.kind for step in fused.steps]


def silu(x_q, s_q, y_q, x_first=True, uint8=False, function="LOGISTIC", table_output=False):
    """x -> LOGISTIC (or another table op) -> s; MUL(x, s) -> y; ``table_output``: s is a model output too.
    Each *_q: (scale, zero point)."""
    g = H.GraphBuilder()
    x = g.input(SHAPE, "int8", *x_q)
    s = g.output(SHAPE, "int8", *s_q) if table_output else g.tensor(SHAPE, "int8", *s_q)
    y = g.output(SHAPE, "int8", *y_q)
    g.op(function, [x], [s])
    g.op("MUL", [x, s] if x_first else [s, x], [y], **({"uint8": True} if uint8 else {}))
    return g


def gelu(x_q, e_q, p_q, h_q, y_q, one, half, uint8=False):
    """x -> ERF-like table e; p = ADD(e, constant one); h = MUL(x, p); y = MUL(h, constant half): GELU as
    quantize_static leaves x * 0.5 * (1 + erf(x / sqrt 2)) (the constants int8, of their own quantization)."""
    g = H.GraphBuilder()
    options = {"uint8": True} if uint8 else {}
    x = g.input(SHAPE, "int8", *x_q)
    e, p, h = (g.tensor(SHAPE, "int8", *q) for q in (e_q, p_q, h_q))
    c_one = g.tensor([], "int8", one[0], one[1], data=np.array([one[2]], np.int8))
    c_half = g.tensor([1], "int8", half[0], half[1], data=np.array([half[2]], np.int8))
    y = g.output(SHAPE, "int8", *y_q)
    g.op("TANH", [x], [e])
    g.op("ADD", [e, c_one], [p], **options)
    g.op("MUL", [x, p], [h], **options)
    g.op("MUL", [h, c_half], [y], **options)
    return g


scales = st.floats(1e-3, 0.5)
zero_points = st.integers(-128, 127)
quantizations = st.tuples(scales, zero_points)


@pytest.mark.parametrize("fmt", ["onnx", "tflite"])
@settings(max_examples=H.examples(60), deadline=None)
@given(x_q=quantizations, y_q=quantizations, x_first=st.booleans(), uint8=st.booleans(),
       function=st.sampled_from(["LOGISTIC", "TANH", "HARD_SIGMOID"]))
def test_silu_as_one_table(fmt, x_q, y_q, x_first, uint8, function):
    uint8 = uint8 and fmt == "onnx"   # the uint8 offset is onnxruntime's only
    s_q = (1 / 256, -128) if function != "TANH" else (1 / 128, 0)
    got, want, kinds = run_both(silu(x_q, s_q, y_q, x_first, uint8, function), fmt)
    assert kinds == ["lut"], kinds
    np.testing.assert_array_equal(got[0], want[0])


@settings(max_examples=H.examples(60), deadline=None)
@given(x_q=quantizations, p_q=quantizations, h_q=quantizations, y_q=quantizations, uint8=st.booleans(),
       one=st.tuples(st.floats(0.004, 0.05), zero_points, st.integers(-128, 127)),
       half=st.tuples(st.floats(0.002, 0.05), zero_points, st.integers(-128, 127)))
def test_gelu_written_out_as_one_table(x_q, p_q, h_q, y_q, uint8, one, half):
    """ONNX (ADD in onnxruntime's arithmetic): the four steps become one lut."""
    got, want, kinds = run_both(gelu(x_q, (1 / 128, 0), p_q, h_q, y_q, one, half, uint8), "onnx")
    assert kinds == ["lut"], kinds
    np.testing.assert_array_equal(got[0], want[0])


def test_tflite_add_stays():
    """LiteRT's ADD (XNNPACK's fixed point) has no table form here: the chain stops at it, and the MULs after
    it read its result, which is no chain of x: every step stays."""
    graph = gelu((0.05, 3), (1 / 128, 0), (0.02, -100), (0.04, -20), (0.02, -10), (0.0079, -127, 0),
                 (0.002, -128, 122))
    got, want, kinds = run_both(graph, "tflite")
    assert kinds == ["lut", "add", "mul", "mul"], kinds
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_silu_every_variant(variant):
    got, want, kinds = run_both(silu((0.05, 3), (1 / 256, -128), (0.03, -90)), "onnx", variant)
    assert kinds == ["lut"]
    np.testing.assert_array_equal(got[0], want[0])


def test_not_fused_where_the_table_result_is_read_elsewhere():
    """The sigmoid is a model output too: both steps stay, and both outputs are as the ops give them."""
    got, want, kinds = run_both(silu((0.05, 3), (1 / 256, -128), (0.03, -90), table_output=True), "onnx")
    assert kinds == ["lut", "mul"]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
