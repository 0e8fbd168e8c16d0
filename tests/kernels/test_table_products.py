"""A table followed by the product of its input and its result (SiLU: LOGISTIC, then MUL of x and sigmoid(x))
runs as one composed table (ops/table_products.py): the same bytes as the two ops, on every int8 value, in
both formats' MUL arithmetic (onnxruntime's QLinearMul, with uint8's offset; LiteRT's fp32 requantization),
either operand order, and the fusion only where the table's result has no other reader."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb.model import Model, compile_graph

EVERY_BYTE = np.arange(-128, 128, dtype=np.int8).reshape(1, 4, 8, 8)


def silu_graph(x_scale, x_zp, s_scale, s_zp, y_scale, y_zp, x_first=True, uint8=False, table_output=False,
               function="LOGISTIC"):
    """x -> LOGISTIC (or another table op) -> s; MUL(x, s) -> y; ``table_output``: s is a model output too."""
    g = H.GraphBuilder()
    x = g.input(EVERY_BYTE.shape, "int8", x_scale, x_zp)
    s = g.output(EVERY_BYTE.shape, "int8", s_scale, s_zp) if table_output else \
        g.tensor(EVERY_BYTE.shape, "int8", s_scale, s_zp)
    y = g.output(EVERY_BYTE.shape, "int8", y_scale, y_zp)
    g.op(function, [x], [s])
    g.op("MUL", [x, s] if x_first else [s, x], [y], **({"uint8": True} if uint8 else {}))
    return g


def run_both(builder, fmt, variant="relaxed"):
    """(outputs with the fusion, outputs of the two ops kept apart (keep_intermediates), the fused plan's
    step kinds)."""
    graph = builder.graph(fmt)
    fused = compile_graph(graph)
    apart = compile_graph(graph, keep_intermediates=True)
    got = Model(fused, variant, graph=graph).run(EVERY_BYTE)
    want = Model(apart, variant, graph=graph).run(EVERY_BYTE)
    return got, want, [step.kind for step in fused.steps]


scales = st.floats(1e-3, 0.5)
zero_points = st.integers(-128, 127)


@pytest.mark.parametrize("fmt", ["onnx", "tflite"])
@settings(max_examples=H.examples(60), deadline=None)
@given(x_scale=scales, x_zp=zero_points, y_scale=st.floats(1e-3, 0.5), y_zp=zero_points, x_first=st.booleans(),
       uint8=st.booleans(), function=st.sampled_from(["LOGISTIC", "TANH", "HARD_SIGMOID"]))
def test_composed_table_equals_table_then_product(fmt, x_scale, x_zp, y_scale, y_zp, x_first, uint8, function):
    uint8 = uint8 and fmt == "onnx"   # the uint8 offset is onnxruntime's only
    s_scale, s_zp = (1 / 256, -128) if function != "TANH" else (1 / 128, 0)
    got, want, kinds = run_both(silu_graph(x_scale, x_zp, s_scale, s_zp, y_scale, y_zp, x_first, uint8,
                                           function=function), fmt)
    assert kinds == ["lut"], kinds
    np.testing.assert_array_equal(got[0], want[0])


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_silu_every_variant(variant):
    got, want, kinds = run_both(silu_graph(0.05, 3, 1 / 256, -128, 0.03, -90), "onnx", variant)
    assert kinds == ["lut"]
    np.testing.assert_array_equal(got[0], want[0])


def test_not_fused_where_the_table_result_is_read_elsewhere():
    """The sigmoid is a model output too: both steps stay, and both outputs are as the ops give them."""
    got, want, kinds = run_both(silu_graph(0.05, 3, 1 / 256, -128, 0.03, -90, table_output=True), "onnx")
    assert kinds == ["lut", "mul"]
    for a, b in zip(got, want):
        np.testing.assert_array_equal(a, b)
