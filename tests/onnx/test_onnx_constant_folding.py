"""Arithmetic on constants folded at import (importers/onnx/folding.py), as torch.onnx writes it for static
shapes: the attention scale of scaled_dot_product_attention (Shape -> Slice -> Cast -> Sqrt -> Div ->
Sqrt), ViT's class token expanded to the batch (ConstantOfShape -> Mul -> Equal -> Where -> Expand),
attention-bias tables gathered by constant indices, anchor grids (Range, Tile), Mod, Pow, Cast.

Each constant subgraph is also a tiny model of its own: qnnweb's folded result is compared with
onnxruntime's output of it, byte for byte. Property tests compare Where, Expand, Mod, Range and Pow with
onnxruntime on random values. Quantized models (quantize_static, QDQ and QOperator) whose real arithmetic
reads such a constant run within one quantum of onnxruntime. A constant node that cannot be computed (a result over the
size cap, shapes that do not broadcast, a Cast to float16) is refused by name."""

import numpy as np
import onnxruntime
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

import qnnweb
from qnnweb.importers.onnx.constants import Constant
from qnnweb.importers.onnx.context import ImportContext
from qnnweb.importers.onnx.proto import parse_model, tensor_bytes
from qnnweb.importers.onnx.registry import handle_node
from qnnweb.importers.onnx.skip import Skip
from qnnweb.importers.shape_folding import MAX_RESULT

RNG = np.random.default_rng(57)
ELEM_TYPES = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.int64): TensorProto.INT64,
              np.dtype(np.int32): TensorProto.INT32, np.dtype(np.bool_): TensorProto.BOOL}


def constant_model(nodes, initializers, outputs, opset=17):
    init = [numpy_helper.from_array(np.asarray(v), k) for k, v in initializers.items()]
    graph = helper.make_graph(nodes, "constants", [], [helper.make_empty_tensor_value_info(n) for n in outputs], init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def folded(model):
    """qnnweb's folded value of each output of a model of constants only: {name: numpy array}."""
    parsed = parse_model(model.SerializeToString())
    ctx = ImportContext(parsed)
    for t in parsed.graph.initializer:
        dtype, shape, data = tensor_bytes(t)
        ctx.constants[t.name] = Constant(t.name, dtype, shape, data)
    for node in parsed.graph.node:
        handle_node(ctx, node)
    dtypes = {"float32": np.float32, "int64": np.int64, "int32": np.int32, "bool": np.bool_}
    return {o.name: np.frombuffer(ctx.constants[o.name].data, dtypes[ctx.constants[o.name].dtype]).reshape(
        ctx.constants[o.name].shape) for o in parsed.graph.output}


def assert_folds_like_onnxruntime(nodes, initializers, outputs, opset=17):
    model = constant_model(nodes, initializers, outputs, opset)
    theirs = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {})
    ours = folded(model)
    for name, want in zip(outputs, theirs, strict=True):
        got = ours[name]
        assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, got.shape, want.dtype, want.shape)
        np.testing.assert_array_equal(np.isnan(got) if got.dtype == np.float32 else got,
                                      np.isnan(want) if want.dtype == np.float32 else want, err_msg=name)
        numbers = ~np.isnan(want) if want.dtype == np.float32 else np.ones(want.shape, bool)
        # the same bits (a 0's sign too); NaN is NaN whatever its sign bit (onnxruntime's x86 one is negative)
        np.testing.assert_array_equal(got[numbers].view(np.uint8), want[numbers].view(np.uint8), err_msg=name)


def ints(values):
    return np.array(values, np.int64)


def floats(values):
    return np.array(values, np.float32)


node = helper.make_node
# name -> (nodes, initializers, outputs): constant subgraphs as torch.onnx writes them, and each op's corners
CASES = {
    "sdpa-scale": ([node("Shape", ["q"], ["s"]), node("Slice", ["s", "m1", "end"], ["d"]),
                    node("Cast", ["d"], ["df"], to=TensorProto.FLOAT), node("Sqrt", ["df"], ["r"]),
                    node("Div", ["one", "r"], ["scale"]), node("Sqrt", ["scale"], ["y"])],
                   {"q": np.zeros((1, 3, 5, 48), np.float32), "m1": ints([-1]), "end": ints([1 << 62]),
                    "one": floats(1.0)}, ["y", "scale"]),
    "class-token-expand": ([node("Shape", ["x"], ["s"]), node("Gather", ["s", "zero"], ["b"], axis=0),
                            node("Unsqueeze", ["b", "axes"], ["b1"]),
                            node("Concat", ["b1", "m1", "m1"], ["shape"], axis=0),
                            node("ConstantOfShape", ["three"], ["ones"],
                                 value=numpy_helper.from_array(ints([1]))),
                            node("Mul", ["ones", "m1"], ["neg"]), node("Equal", ["shape", "neg"], ["eq"]),
                            node("Where", ["eq", "ones", "shape"], ["target"]),
                            node("Expand", ["cls", "target"], ["y"])],
                           {"x": np.zeros((2, 7, 6), np.float32), "zero": ints(0), "axes": ints([0]), "m1": ints([-1]),
                            "three": ints([3]), "cls": RNG.normal(0, 1, (1, 1, 6)).astype(np.float32)},
                           ["y", "target"]),
    "bias-table-gather": ([node("Gather", ["table", "idx"], ["y"], axis=1)],
                          {"table": RNG.normal(0, 1, (3, 10)).astype(np.float32),
                           "idx": RNG.integers(-10, 10, (4, 5)).astype(np.int64)}, ["y"]),
    "anchor-grid": ([node("Range", ["zero_f", "w", "one_f"], ["sx"]), node("Range", ["zero_f", "h", "one_f"], ["sy"]),
                     node("Add", ["sx", "half"], ["cx"]), node("Unsqueeze", ["cx", "axes0"], ["cx2"]),
                     node("Tile", ["cx2", "reps"], ["gx"]), node("Unsqueeze", ["sy", "axes1"], ["sy2"]),
                     node("Expand", ["sy2", "gshape"], ["gy"]), node("Concat", ["gx", "gy"], ["y"], axis=0)],
                    {"zero_f": floats(0), "w": floats(5), "h": floats(3), "one_f": floats(1), "half": floats(0.5),
                     "axes0": ints([0]), "axes1": ints([1]), "reps": ints([3, 1]), "gshape": ints([3, 5])}, ["y"]),
    "range-float-fraction": ([node("Range", ["a", "b", "c"], ["y"])],
                             {"a": floats(0.1), "b": floats(2.05), "c": floats(0.3)}, ["y"]),
    "range-int-negative-step": ([node("Range", ["a", "b", "c"], ["y"])], {"a": ints(10), "b": ints(-3), "c": ints(-4)},
                                ["y"]),
    "range-empty": ([node("Range", ["a", "b", "c"], ["y"])], {"a": ints(5), "b": ints(1), "c": ints(2)}, ["y"]),
    "window-padding-mod": ([node("Mod", ["size", "window"], ["r"]), node("Sub", ["window", "r"], ["p"]),
                            node("Mod", ["p", "window"], ["y"])],
                           {"size": ints([14, 7, -9, 9]), "window": ints([7, 7, 4, -4])}, ["y", "r"]),
    "mod-fmod-int": ([node("Mod", ["a", "b"], ["y"], fmod=1)], {"a": ints([7, -7, 7, -7]), "b": ints([3, 3, -3, -3])},
                     ["y"]),
    "mod-fmod-float": ([node("Mod", ["a", "b"], ["y"], fmod=1)],
                       {"a": floats([5.5, -5.5, 1e30, 0.3]), "b": floats([2.0, 2.0, 7.0, 0.1])}, ["y"]),
    "pow": ([node("Pow", ["a", "two"], ["sq"]), node("Pow", ["a", "three"], ["cube"]), node("Pow", ["a", "e"], ["y"])],
            {"a": RNG.uniform(0.1, 9, 64).astype(np.float32), "two": floats(2), "three": floats(3),
             "e": RNG.uniform(-3, 3, 64).astype(np.float32)}, ["sq", "cube", "y"]),
    # onnxruntime's x * x * x on a span of bases with one exponent, also where the cube is a float32 tie
    "pow-cube-products": ([node("Pow", ["a", "three"], ["y"]), node("Pow", ["b", "e"], ["z"])],
                          {"a": floats([2.2265625, 1.5]), "three": floats(3), "b": floats([[2.2265625, 3.0]] * 2),
                           "e": floats([[3.0], [2.0]])}, ["y", "z"]),
    "pow-int-exponent": ([node("Pow", ["a", "e"], ["y"])], {"a": floats([1.5, -2.0, 3.0]), "e": ints([2])}, ["y"]),
    "div-int-truncates": ([node("Div", ["a", "b"], ["y"])], {"a": ints([7, -7, 7, -7]), "b": ints([2, 2, -2, -2])},
                          ["y"]),
    "div-float-by-zero": ([node("Div", ["a", "b"], ["y"])], {"a": floats([1, -1, 0, 3]), "b": floats([0, 0, 0, 7])},
                          ["y"]),
    "float-arithmetic": ([node("Add", ["a", "b"], ["s"]), node("Sub", ["a", "b"], ["d"]),
                          node("Mul", ["a", "b"], ["m"]),
                          node("Neg", ["a"], ["n"]), node("Reciprocal", ["b"], ["r"]), node("Sqrt", ["b"], ["q"])],
                         {"a": RNG.normal(0, 100, (4, 1)).astype(np.float32),
                          "b": RNG.uniform(1e-3, 1e3, (1, 5)).astype(np.float32)}, ["s", "d", "m", "n", "r", "q"]),
    "comparisons": ([node("Less", ["a", "b"], ["lt"]), node("Greater", ["a", "b"], ["gt"]),
                     node("Equal", ["a", "b"], ["eq"]), node("Not", ["eq"], ["ne"])],
                    {"a": floats([[1, 2, 3]]), "b": floats([[2], [2]])}, ["lt", "gt", "eq", "ne"]),
    "casts": ([node("Cast", ["f"], ["i64"], to=TensorProto.INT64), node("Cast", ["f"], ["i32"], to=TensorProto.INT32),
               node("Cast", ["f"], ["b"], to=TensorProto.BOOL), node("Cast", ["b"], ["bf"], to=TensorProto.FLOAT),
               node("Cast", ["big"], ["narrow"], to=TensorProto.INT32),
               node("Cast", ["big"], ["bigf"], to=TensorProto.FLOAT)],
              {"f": floats([-2.7, -0.5, 0.0, 0.9, 3.99]), "big": ints([(1 << 33) + 5, -(1 << 40) - 1, 16777217,
                                                                      (1 << 60) + (1 << 36) + 1, -(1 << 63)])},
              ["i64", "i32", "b", "bf", "narrow", "bigf"]),
    "slice-nd": ([node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"])],
                 {"x": np.arange(60, dtype=np.float32).reshape(3, 4, 5), "starts": ints([-1, 1]),
                  "ends": ints([-(1 << 62), 5]), "axes": ints([0, 2]), "steps": ints([-2, 2])}, ["y"]),
    "reshape-squeeze": ([node("Reshape", ["x", "shape"], ["r"]), node("Squeeze", ["r", "axes"], ["y"])],
                        {"x": np.arange(12, dtype=np.int32), "shape": ints([1, 3, -1, 1]), "axes": ints([0, 3])},
                        ["y"]),
    "where-broadcast": ([node("Where", ["c", "a", "b"], ["y"])],
                        {"c": np.array([[True], [False]]), "a": floats([1, 2, 3]), "b": floats(-1)}, ["y"]),
    "transpose": ([node("Transpose", ["x"], ["y"], perm=[2, 0, 1]), node("Transpose", ["x"], ["z"])],
                  {"x": np.arange(24, dtype=np.float32).reshape(2, 3, 4)}, ["y", "z"]),
    "tile": ([node("Tile", ["x", "reps"], ["y"])], {"x": ints([[1, 2], [3, 4]]), "reps": ints([2, 3])}, ["y"]),
    "constant-of-shape-default": ([node("ConstantOfShape", ["s"], ["y"])], {"s": ints([2, 0, 3])}, ["y"]),
}


@pytest.mark.parametrize("case", list(CASES))
def test_folds_like_onnxruntime(case):
    assert_folds_like_onnxruntime(*CASES[case])


def shapes(max_rank=3, max_side=4):
    return st.lists(st.integers(1, max_side), min_size=0, max_size=max_rank).map(tuple)


def broadcastable(shape):
    """A shape that broadcasts with ``shape``: some of its trailing dimensions, each kept or made 1."""
    return st.integers(0, len(shape)).flatmap(lambda k: st.tuples(*[
        st.sampled_from([d, 1]) for d in shape[len(shape) - k:]]))


@settings(max_examples=25, deadline=None)
@given(shapes().flatmap(lambda s: st.tuples(st.just(s), broadcastable(s), broadcastable(s))), st.integers(0, 1 << 30))
def test_where_broadcasts_like_onnxruntime(shapes_, seed):
    out, c_shape, a_shape = shapes_
    rng = np.random.default_rng(seed)
    assert_folds_like_onnxruntime([node("Where", ["c", "a", "b"], ["y"])],
                                  {"c": rng.integers(0, 2, c_shape).astype(bool),
                                   "a": rng.normal(0, 1, a_shape).astype(np.float32),
                                   "b": rng.normal(0, 1, out).astype(np.float32)}, ["y"])


@settings(max_examples=25, deadline=None)
@given(shapes().flatmap(lambda s: st.tuples(st.just(s), broadcastable(s))), st.integers(0, 2))
def test_expand_broadcasts_like_onnxruntime(shapes_, extra_rank):
    target, source = shapes_
    # Expand is bidirectional: 1s in the target keep the source's dimension
    target = (2,) * extra_rank + tuple(1 if k % 2 else d for k, d in enumerate(target))
    assert_folds_like_onnxruntime([node("Expand", ["x", "shape"], ["y"])],
                                  {"x": np.arange(np.prod(source), dtype=np.int64).reshape(source),
                                   "shape": ints(target)}, ["y"])


@settings(max_examples=40, deadline=None)
@given(st.lists(st.integers(-1000, 1000), min_size=1, max_size=8),
       st.lists(st.integers(-50, 50).filter(bool), min_size=1, max_size=1), st.booleans())
def test_integer_mod_like_onnxruntime(a, b, fmod):
    assert_folds_like_onnxruntime([node("Mod", ["a", "b"], ["y"], fmod=int(fmod))], {"a": ints(a), "b": ints(b)}, ["y"])


finite_floats = st.floats(-1e6, 1e6, width=32, allow_subnormal=False)


@settings(max_examples=40, deadline=None)
@given(st.lists(finite_floats, min_size=1, max_size=8), st.lists(finite_floats.filter(bool), min_size=1, max_size=8))
def test_float_mod_like_onnxruntime(a, b):
    n = min(len(a), len(b))
    assert_folds_like_onnxruntime([node("Mod", ["a", "b"], ["y"], fmod=1)], {"a": floats(a[:n]), "b": floats(b[:n])},
                                  ["y"])


@settings(max_examples=40, deadline=None)
@given(st.floats(-100, 100, width=32), st.floats(-100, 100, width=32),
       st.floats(0.125, 20, width=32).flatmap(lambda d: st.sampled_from([d, -d])))
@example(-2.7607683663038313e-16, 1.0, 1.0)   # onnxruntime's length: the difference in double (two elements)
def test_float_range_like_onnxruntime(start, limit, delta):
    assert_folds_like_onnxruntime([node("Range", ["a", "b", "c"], ["y"])],
                                  {"a": floats(start), "b": floats(limit), "c": floats(delta)}, ["y"])


@settings(max_examples=40, deadline=None)
@given(st.integers(-300, 300), st.integers(-300, 300), st.integers(-40, 40).filter(bool))
def test_integer_range_like_onnxruntime(start, limit, delta):
    assert_folds_like_onnxruntime([node("Range", ["a", "b", "c"], ["y"])],
                                  {"a": ints(start), "b": ints(limit), "c": ints(delta)}, ["y"])


def halfway_between_float32s(x):
    down = np.float32(x)
    other = np.nextafter(down, np.float32(np.inf) if x > down else np.float32(-np.inf))
    return down != x and (np.float64(down) + np.float64(other)) / 2 == x


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0, 50, width=32), min_size=1, max_size=8), st.floats(-4, 4, width=32),
       st.sampled_from([None, 2.0, 3.0, 0.5, -1.0]))
def test_float_pow_like_onnxruntime(base, exponent, special):
    """Like onnxruntime, or refused where powf's result is a float32 tie (onnxruntime's powf may round it
    either way)."""
    e = exponent if special is None else special
    try:
        assert_folds_like_onnxruntime([node("Pow", ["a", "e"], ["y"])], {"a": floats(base), "e": floats(e)}, ["y"])
    except Skip as refused:
        assert "halfway between two float32 values" in str(refused), refused
        assert any(halfway_between_float32s(np.float64(b) ** np.float64(np.float32(e))) for b in base)


C, H, W = 8, 6, 6


def conv_weights(*shape):
    return RNG.normal(0, 0.4, shape).astype(np.float32)


def attention_scale_model():
    """Conv, its output times the scale (1 / sqrt(head dim))^0.5 made from a constant's static shape as
    torch writes it for scaled_dot_product_attention, then a Conv."""
    nodes = [node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             node("Shape", ["k"], ["s"]), node("Slice", ["s", "m1", "end"], ["d"]),
             node("Cast", ["d"], ["df"], to=TensorProto.FLOAT), node("Sqrt", ["df"], ["r"]),
             node("Div", ["one", "r"], ["scale"]), node("Sqrt", ["scale"], ["root"]),
             node("Mul", ["c", "root"], ["scaled"]), node("Conv", ["scaled", "w2"], ["y"])]
    init = {"w": conv_weights(C, 3, 3, 3), "k": np.zeros((1, 2, 4, 64), np.float32), "m1": ints([-1]),
            "end": ints([1 << 62]), "one": floats(1.0), "w2": conv_weights(4, C, 1, 1)}
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 4, H, W])], init)


def position_embedding_model():
    """Tokens of a Conv (Reshape, Transpose to [1, HW, C]) plus a position embedding expanded to the batch
    the way torch writes ``pos.expand(x.shape[0], -1, -1)`` (Shape, Gather, ConstantOfShape, Equal, Where,
    Expand); then a MatMul. (A class token concatenated the same way is folded too, but qnnweb's
    CONCATENATION takes activations only.)"""
    tokens = (H - 1) * (W - 1)
    nodes = [node("Conv", ["x", "w"], ["c"]), node("Reshape", ["c", "flat"], ["f"]),
             node("Transpose", ["f"], ["tokens"], perm=[0, 2, 1]),
             node("Shape", ["x"], ["s"]), node("Gather", ["s", "zero"], ["b"], axis=0),
             node("Unsqueeze", ["b", "axes"], ["b1"]), node("Concat", ["b1", "m1", "m1"], ["shape"], axis=0),
             node("ConstantOfShape", ["three"], ["ones"], value=numpy_helper.from_array(ints([1]))),
             node("Mul", ["ones", "m1"], ["neg"]), node("Equal", ["shape", "neg"], ["eq"]),
             node("Where", ["eq", "ones", "shape"], ["target"]), node("Expand", ["pos", "target"], ["pos_b"]),
             node("Add", ["tokens", "pos_b"], ["seq"]), node("MatMul", ["seq", "w2"], ["y"])]
    init = {"w": conv_weights(C, 3, 2, 2), "flat": ints([1, C, -1]), "zero": ints(0), "axes": ints([0]),
            "m1": ints([-1]), "three": ints([3]), "pos": RNG.normal(0, 1, (1, tokens, C)).astype(np.float32),
            "w2": conv_weights(C, 4)}
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, tokens, 4])], init)


def bias_table_model():
    """A Conv's output plus an attention-bias table gathered by constant indices, as LeViT and
    EfficientFormerV2 write it (the quantizer quantizes the table like weights: a Gather of a dequantized
    int8 constant), then a Conv."""
    nodes = [node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), node("Gather", ["table", "idx"], ["bias"], axis=1),
             node("Add", ["c", "bias"], ["biased"]), node("Conv", ["biased", "w2"], ["y"])]
    init = {"w": conv_weights(C, 3, 3, 3), "table": RNG.normal(0, 1, (C, 9)).astype(np.float32),
            "idx": RNG.integers(0, 9, (H, W)).astype(np.int64), "w2": conv_weights(4, C, 1, 1)}
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 4, H, W])], init)


@pytest.mark.parametrize("quant_format, activation", [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8")])
@pytest.mark.parametrize("model, op", [(attention_scale_model, "MUL"), (position_embedding_model, "ADD"),
                                       (bias_table_model, "ADD")])
def test_quantized_model_reading_a_folded_constant_matches_onnxruntime(model, op, quant_format, activation):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(), feeds, quant_format=quant_format, activation=activation)
    for _ in range(2):
        assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), [op])


def with_constant_node(nodes, initializers):
    """A quantized model (x quantized and dequantized) holding a constant subgraph beside it."""
    graph_nodes = [node("QuantizeLinear", ["x", "s", "z"], ["q"]), node("DequantizeLinear", ["q", "s", "z"], ["y"]),
                   *nodes]
    init = {"s": floats(0.1), "z": np.array(0, np.int8), **initializers}
    graph = helper.make_graph(graph_nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])],
                              [numpy_helper.from_array(np.asarray(v), k) for k, v in init.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


BAD = {
    "over-the-cap": ([node("Expand", ["one", "shape"], ["big"], name="huge_expand")],
                     {"one": floats([1.0]), "shape": ints([1 << 11, 1 << 11])},
                     rf"Expand 'huge_expand'.*{1 << 22} elements.*at most {MAX_RESULT}"),
    "tile-over-the-cap": ([node("Tile", ["one", "reps"], ["big"], name="huge_tile")],
                          {"one": floats([[1.0]]), "reps": ints([1 << 20, 1 << 20])}, r"Tile 'huge_tile'.*elements"),
    "constant-of-shape-over-the-cap": ([node("ConstantOfShape", ["shape"], ["big"], name="zeros")],
                                       {"shape": ints([1 << 40])}, r"ConstantOfShape 'zeros'.*elements"),
    "no-broadcast": ([node("Add", ["a", "b"], ["c"], name="mismatch")], {"a": floats([1, 2, 3]), "b": floats([1, 2])},
                     r"Add 'mismatch'.*\[3\] and \[2\] do not broadcast"),
    "cast-to-float16": ([node("Cast", ["a"], ["c"], to=TensorProto.FLOAT16, name="half")], {"a": floats([1, 2])},
                        r"Cast 'half'.*Cast to data type 10"),
    "float-indices": ([node("Gather", ["a", "i"], ["c"], name="by_floats")], {"a": floats([1, 2]), "i": floats([1])},
                      r"Gather 'by_floats'.*input 1 \(i\) is float32; Gather takes integers"),
    "squeeze-a-scalar": ([node("Squeeze", ["a", "axes"], ["c"], name="sq")], {"a": floats(1), "axes": ints([0])},
                         r"Squeeze 'sq'.*axes \[0\] for a result of rank 0"),
    "gather-a-scalar": ([node("Gather", ["a", "i"], ["c"], name="g0")], {"a": floats(1), "i": ints(0)},
                        r"Gather 'g0'.*axis 0 for rank 0"),
    "pow-at-a-float32-tie": ([node("Pow", ["a", "e"], ["c"], name="tie")], {"a": floats([2.2265625]), "e": floats(3)},
                             r"Pow 'tie'.*halfway between two float32 values"),
    "integer-division-by-zero": ([node("Div", ["a", "b"], ["c"], name="div0")], {"a": ints([1]), "b": ints([0])},
                                 r"Div 'div0'.*division by zero"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_a_constant_that_cannot_be_computed_is_refused_by_name(case):
    nodes, init, message = BAD[case]
    with pytest.raises(qnnweb.UnsupportedModelError, match=message):
        qnnweb.load(with_constant_node(nodes, init))
