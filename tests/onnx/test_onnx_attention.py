"""Attention's products of two activations (MatMul / QLinearMatMul whose second input is not a constant:
Q K^T with a Transpose folded into the kernel's packing, A V) and Softmax over any axis, in small graphs
quantized by onnxruntime's own quantizer (QDQ with uint8 or int8 activations, QOperator): bit-exact with
onnxruntime (its QLinearMatMul and QLinearSoftmax), in every variant."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

import qnnweb
from qnnweb.passes import transposed_matmul_operands

FORMS = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]


def feeds(shape, count=8, seed=0):
    rng = np.random.default_rng(seed)
    return [{"x": rng.normal(size=shape).astype(np.float32)} for _ in range(count)]


def attention_model(tokens=7, dim=12, heads=2, opset=13):
    """x [1, tokens, dim] -> per head: softmax(Q K^T) V, heads as a batch dimension (x W reshaped and
    transposed to [1, heads, tokens, dim / heads], as torch's attention exports it)."""
    rng = np.random.default_rng(1)
    head = dim // heads
    weights = {f"w{n}": (rng.normal(size=(dim, dim)) / np.sqrt(dim)).astype(np.float32) for n in "qkv"}
    shape = np.array([1, tokens, heads, head], np.int64)
    nodes = []
    for n in "qkv":
        nodes += [helper.make_node("MatMul", ["x", f"w{n}"], [f"{n}_flat"]),
                  helper.make_node("Reshape", [f"{n}_flat", "heads_shape"], [f"{n}_split"]),
                  helper.make_node("Transpose", [f"{n}_split"], [n], perm=[0, 2, 1, 3])]
    nodes += [helper.make_node("Transpose", ["k"], ["k_t"], perm=[0, 1, 3, 2]),
              helper.make_node("MatMul", ["q", "k_t"], ["scores"]),
              helper.make_node("Softmax", ["scores"], ["attention"], axis=-1),
              helper.make_node("MatMul", ["attention", "v"], ["y"])]
    return float_model(nodes, [("x", [1, tokens, dim])], [("y", [1, heads, tokens, head])],
                       {**weights, "heads_shape": shape}, opset=opset)


@pytest.mark.parametrize("form", FORMS, ids=str)
def test_attention_head_matches_onnxruntime(form):
    quant_format, activation = form
    model = attention_model()
    data = quantized(model, feeds((1, 7, 12)), quant_format=quant_format, activation=activation)
    for x in feeds((1, 7, 12), 3, seed=5):
        assert_matches_onnxruntime(data, x["x"], ["BATCH_MATMUL"], exact=True)


def test_transpose_of_keys_folds_into_the_product():
    """Q K^T reads K itself (adj_y): the Transpose of K's last two axes is gone before lowering."""
    data = quantized(attention_model(), feeds((1, 7, 12)))
    imported = qnnweb.load(data)._graph
    graph = transposed_matmul_operands(imported)

    def swaps(g):
        return [op for op in g.ops if op.type == "TRANSPOSE" and list(op.options.get("perm", ())) == [0, 1, 3, 2]]
    assert len(swaps(imported)) == 1 and not swaps(graph)
    products = [op for op in graph.ops if op.type == "BATCH_MATMUL"]
    assert [op.options["adj_y"] for op in products] == [True, False]
    assert products[0].inputs[1] == swaps(imported)[0].inputs[0]


@pytest.mark.parametrize("shapes", [((2, 3, 5, 8), (2, 3, 8, 6)), ((2, 1, 5, 8), (3, 8, 6)), ((4, 8), (2, 8, 6)),
                                    ((5, 8), (8, 6))], ids=str)
@pytest.mark.parametrize("form", FORMS, ids=str)
def test_matmul_of_two_activations_broadcasts(shapes, form):
    """A [.., M, K] x B [.., K, N], batch dimensions broadcast: A and B are the first elements of the input
    x reshaped, times constant weights, so that both are quantized activations."""
    a_shape, b_shape = shapes
    rng = np.random.default_rng(3)
    k = a_shape[-1]
    nodes, initializers = [], {"zero": np.array([0], np.int64)}
    for name, shape, n in (("a", a_shape, k), ("b", b_shape, b_shape[-1])):
        source = list(shape[:-1]) + [k]
        nodes += [helper.make_node("Slice", ["x", "zero", f"{name}_size"], [f"{name}_flat"]),
                  helper.make_node("Reshape", [f"{name}_flat", f"{name}_shape"], [f"{name}_source"]),
                  helper.make_node("MatMul", [f"{name}_source", f"w{name}"], [name])]
        initializers.update({f"{name}_size": np.array([np.prod(source)], np.int64),
                             f"{name}_shape": np.array(source, np.int64),
                             f"w{name}": rng.normal(size=(k, n)).astype(np.float32) / 3})
    nodes.append(helper.make_node("MatMul", ["a", "b"], ["y"]))
    x_shape = [max(int(np.prod(a_shape)), int(np.prod(b_shape[:-1])) * k)]
    y_shape = list(np.broadcast_shapes(a_shape[:-2], b_shape[:-2])) + [a_shape[-2], b_shape[-1]]
    model = float_model(nodes, [("x", x_shape)], [("y", y_shape)], initializers)
    data = quantized(model, feeds(x_shape), quant_format=form[0], activation=form[1])
    assert_matches_onnxruntime(data, feeds(x_shape, 1, seed=9)[0]["x"], ["BATCH_MATMUL"], exact=True)


@pytest.mark.parametrize("case", [(13, 1, (2, 5, 3, 4)), (13, 2, (2, 5, 3, 4)), (13, 0, (3, 7)), (11, 1, (2, 5, 3, 4)),
                                  (11, 2, (2, 5, 6)), (12, -1, (2, 3, 9)), (11, 0, (2, 5, 3))], ids=str)
@pytest.mark.parametrize("form", FORMS, ids=str)
def test_softmax_over_any_axis(case, form):
    """opset 13 and later: over one axis (moved last and back); before 13: over the tensor coerced to 2-D
    at the axis, [prod(shape[:axis]), prod(shape[axis:])] (axis 0: the whole tensor as one row). x is scaled
    by a constant MatMul first so that the quantizer quantizes the Softmax's input."""
    opset, axis, shape = case
    rng = np.random.default_rng(4)
    nodes = [helper.make_node("MatMul", ["x", "w"], ["h"]), helper.make_node("Softmax", ["h"], ["y"], axis=axis)]
    model = float_model(nodes, [("x", list(shape))], [("y", list(shape))],
                        {"w": (rng.normal(size=(shape[-1], shape[-1])) * 2).astype(np.float32)}, opset=opset)
    data = quantized(model, feeds(shape), quant_format=form[0], activation=form[1])
    assert_matches_onnxruntime(data, feeds(shape, 1, seed=3)[0]["x"], ["SOFTMAX"], exact=True)
