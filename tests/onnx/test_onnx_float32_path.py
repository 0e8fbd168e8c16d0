"""The float32 data path (importers/onnx/float32_path.py): a float op's float result that another float op
reads in float (onnxruntime's QOperator form leaves LayerNormalization -> HardSwish, LayerNormalization ->
LayerNormalization, LayerNormalization -> GELU ... all in float) stays a float32 tensor, and each float op
on it runs as onnxruntime runs it: ELEMENT_F32, LAYER_NORM of a float32 input, float32 ADD / SUB / MUL / DIV,
QUANTIZE. Bit-exact with onnxruntime in every variant; the IR holds the float32 ops named (one per node)."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb

RNG = np.random.default_rng(2027)
C, H, W = 6, 3, 5
SHAPE = [1, 3, H, W]
TOKENS = [1, H * W, C]
MODES = {"qoperator-u8": dict(quant_format="QOperator", activation="QUInt8"),
         "qoperator-s8": dict(quant_format="QOperator", activation="QInt8")}


def feeds(count=8, seed=None):
    rng = RNG if seed is None else np.random.default_rng(seed)
    return [{"x": rng.normal(0, 1, SHAPE).astype(np.float32)} for _ in range(count)]


def normal(mean, sigma, shape):
    return RNG.normal(mean, sigma, shape).astype(np.float32)


def layer_norm(x, y, k=""):
    return helper.make_node("LayerNormalization", [x, f"g{k}", f"b{k}"], [y], axis=-1, epsilon=1e-5)


def tokens_model(middle, outputs=(("y", [1, H * W, 4]),), extra=None):
    """Conv -> Reshape [1, C, H*W] -> Transpose [1, H*W, C] (tokens "t", quantized) -> the nodes `middle` (they
    write "m") -> MatMul "y"."""
    init = {"w": normal(0, 0.5, (C, 3, 1, 1)), "tokens": np.array([1, C, H * W], np.int64),
            "w2": normal(0, 0.5, (C, 4))}
    for k in ("", "2"):
        init.update({f"g{k}": normal(1, 0.3, C), f"b{k}": normal(0, 0.3, C)})
    init.update(extra or {})
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Reshape", ["c", "tokens"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]), *middle,
             helper.make_node("MatMul", ["m", "w2"], ["y"])]
    used = {name for node in nodes for name in node.input}
    return float_model(nodes, [("x", SHAPE)], list(outputs), {k: v for k, v in init.items() if k in used}, opset=20)


def float32_ops(data):
    """(op type, input dtype, output dtype) of the loaded model's ops that read or write float32 between
    its edges (not the QUANTIZE of its float input, not the DEQUANTIZE of its outputs)."""
    graph = qnnweb.load(data)._graph
    edges = set(graph.inputs) | set(graph.outputs)
    return [(op.type, graph.tensors[op.inputs[0]].dtype, graph.tensors[op.outputs[0]].dtype) for op in graph.ops
            if "float32" in (graph.tensors[op.inputs[0]].dtype, graph.tensors[op.outputs[0]].dtype)
            and not (op.type in ("QUANTIZE", "DEQUANTIZE") and {op.inputs[0], op.outputs[0]} & edges)]


def assert_bit_exact(data):
    for x in feeds(3, seed=7):
        assert_matches_onnxruntime(data, x["x"], ["LAYER_NORM"], exact=True)


@pytest.mark.parametrize("mode", list(MODES))
def test_layer_norm_then_hard_swish(mode):
    """LayerNormalization -> HardSwish -> QuantizeLinear (efficientvit_b0's classifier head)."""
    data = quantized(tokens_model([layer_norm("t", "l"), helper.make_node("HardSwish", ["l"], ["m"])]),
                     feeds(), **MODES[mode])
    assert float32_ops(data) == [("LAYER_NORM", "int8", "float32"), ("ELEMENT_F32", "float32", "float32"),
                                 ("QUANTIZE", "float32", "int8")]
    assert_bit_exact(data)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("activation", ["Relu", "Clip"])
def test_layer_norm_then_relu(mode, activation):
    """LayerNormalization -> Relu / Clip (0, 6) -> QuantizeLinear: LAYER_NORM fuses no activation; the Relu
    reads its float32 values (quantized first: it commutes with quantization)."""
    bounds = {"lo": np.array(0, np.float32), "hi": np.array(6, np.float32)}
    act = helper.make_node(activation, ["l", "lo", "hi"] if activation == "Clip" else ["l"], ["m"])
    data = quantized(tokens_model([layer_norm("t", "l"), act], extra=bounds if activation == "Clip" else None),
                     feeds(), **MODES[mode])
    assert ("LAYER_NORM", "int8", "float32") in float32_ops(data)
    assert_bit_exact(data)


@pytest.mark.parametrize("mode", list(MODES))
def test_layer_norm_of_a_layer_norm(mode):
    """LayerNormalization -> Transpose -> LayerNormalization over the other axis, all in float: the second
    normalizes the first's float32 values, moved in float32."""
    extra = {"g2": normal(1, 0.3, H * W), "b2": normal(0, 0.3, H * W), "w2": normal(0, 0.5, (H * W, 4))}
    middle = [layer_norm("t", "l"), helper.make_node("Transpose", ["l"], ["l_t"], perm=[0, 2, 1]),
              layer_norm("l_t", "m", "2")]
    data = quantized(tokens_model(middle, [("y", [1, C, 4])], extra), feeds(), **MODES[mode])
    assert float32_ops(data) == [("LAYER_NORM", "int8", "float32"), ("TRANSPOSE", "float32", "float32"),
                                 ("LAYER_NORM", "float32", "int8")]
    assert_bit_exact(data)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("mode", list(MODES))
def test_layer_norm_then_gelu(mode, approximate):
    """LayerNormalization -> Gelu (opset 20) -> QuantizeLinear: QOperator leaves both in float."""
    middle = [layer_norm("t", "l"), helper.make_node("Gelu", ["l"], ["m"], approximate=approximate)]
    data = quantized(tokens_model(middle), feeds(), **MODES[mode])
    assert ("ELEMENT_F32", "float32", "float32") in float32_ops(data)
    assert_bit_exact(data)


@pytest.mark.parametrize("mode", list(MODES))
def test_layer_norm_then_written_out_gelu(mode):
    """LayerNormalization -> x * 0.5 * (1 + erf(x / sqrt 2)): QOperator leaves the Div and the Erf in float (and
    quantizes the Add and the Muls): a float32 DIV by the constant, then ELEMENT_F32."""
    middle = [layer_norm("t", "l"), helper.make_node("Div", ["l", "sqrt2"], ["d"]),
              helper.make_node("Erf", ["d"], ["e"]), helper.make_node("Add", ["e", "one"], ["p"]),
              helper.make_node("Mul", ["l", "p"], ["h"]), helper.make_node("Mul", ["h", "half"], ["m"])]
    extra = {"sqrt2": np.array(1.4142135, np.float32), "one": np.array(1, np.float32),
             "half": np.array(0.5, np.float32)}
    data = quantized(tokens_model(middle, extra=extra), feeds(), **MODES[mode])
    types = [t for t, _, _ in float32_ops(data)]
    assert types[:3] == ["LAYER_NORM", "DIV", "QUANTIZE"] and types.count("ELEMENT_F32") == 1
    assert_bit_exact(data)


@pytest.mark.parametrize("mode", list(MODES))
def test_layer_norm_output_also_quantized(mode):
    """The LayerNormalization's float result is a model output and is quantized for the MatMul after it: it
    stays float32 (the output), and the MatMul reads it quantized."""
    middle = [layer_norm("t", "m")]
    data = quantized(tokens_model(middle, [("y", [1, H * W, 4]), ("m", TOKENS)]), feeds(), **MODES[mode])
    assert ("LAYER_NORM", "int8", "float32") in float32_ops(data)
    assert_bit_exact(data)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("move", ["Gather", "Slice"])
def test_layer_norm_moved_then_hard_swish(mode, move):
    """LayerNormalization -> Gather / Slice of its tokens -> HardSwish: the float32 values move."""
    extra = {"idx": np.array([0, 2, 4, 5, 9, 14], np.int64), "starts": np.array([1], np.int64),
             "ends": np.array([13], np.int64), "axes": np.array([1], np.int64), "steps": np.array([2], np.int64)}
    selected = {"Gather": helper.make_node("Gather", ["l", "idx"], ["s"], axis=1),
                "Slice": helper.make_node("Slice", ["l", "starts", "ends", "axes", "steps"], ["s"])}[move]
    middle = [layer_norm("t", "l"), selected, helper.make_node("HardSwish", ["s"], ["m"])]
    data = quantized(tokens_model(middle, [("y", [1, 6, 4])], extra), feeds(), **MODES[mode])
    types = [t for t, _, _ in float32_ops(data)]
    assert types[0] == "LAYER_NORM" and "ELEMENT_F32" in types
    assert_bit_exact(data)


@pytest.mark.parametrize("mode", list(MODES))
def test_instance_norm_of_a_layer_norm(mode):
    """poolformerv2's stem: LayerNormalization -> Transpose back to channels first, read quantized (the
    residual) and by Reshape -> InstanceNormalization (timm's GroupNorm with one group) in float."""
    extra = {"g2": normal(1, 0.3, 1), "b2": normal(0, 0.3, 1), "flat": np.array([1, 1, -1], np.int64),
             "back": np.array([1, C, H * W], np.int64), "w2": normal(0, 0.5, (H * W, 4))}
    middle = [layer_norm("t", "l"), helper.make_node("Transpose", ["l"], ["l_t"], perm=[0, 2, 1]),
              helper.make_node("Reshape", ["l_t", "flat"], ["f"]),
              helper.make_node("InstanceNormalization", ["f", "g2", "b2"], ["n"], epsilon=1e-5),
              helper.make_node("Reshape", ["n", "back"], ["nb"]), helper.make_node("Add", ["nb", "l_t"], ["m"])]
    data = quantized(tokens_model(middle, [("y", [1, C, 4])], extra), feeds(), **MODES[mode])
    assert ("LAYER_NORM", "float32", "int8") in float32_ops(data)
    assert_bit_exact(data)


@pytest.mark.parametrize("mode", list(MODES))
@pytest.mark.parametrize("op", ["Tanh", "HardSwish", "HardSigmoid"])
def test_element_op_on_the_float_input(mode, op):
    """A float element op on the model's float input, before its first QuantizeLinear: ELEMENT_F32 on it."""
    w = normal(0, 0.5, (4, 3, 3, 3))
    nodes = [helper.make_node(op, ["x"], ["h"]), helper.make_node("Conv", ["h", "w"], ["y"], pads=[1, 1, 1, 1])]
    data = quantized(float_model(nodes, [("x", SHAPE)], [("y", [1, 4, H, W])], {"w": w}, opset=14), feeds(),
                     **MODES[mode])
    assert float32_ops(data)[0] == ("ELEMENT_F32", "float32", "float32")
    for x in feeds(3, seed=8):
        assert_matches_onnxruntime(data, x["x"], ["ELEMENT_F32"], exact=True)



@pytest.mark.parametrize("mode", list(MODES))
def test_clip_without_max_clamps_infinity_to_float32_max(mode):
    """LayerNormalization (gamma 60) -> Exp -> Clip(min 0) as the model's float output: Exp overflows to
    infinity, and onnxruntime's Clip takes an absent max as float32's largest value, so the output holds
    3.4028235e38 there, not infinity -- as qnnweb's ELEMENT_F32 CLIP does."""
    init = {"w": normal(0, 0.5, (C, 3, 1, 1)), "tokens": np.array([1, C, H * W], np.int64),
            "g": np.full(C, 60, np.float32), "b": normal(0, 0.3, C), "lo": np.array(0, np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Reshape", ["c", "tokens"], ["r"]),
             helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]), layer_norm("t", "l"),
             helper.make_node("Exp", ["l"], ["e"]), helper.make_node("Clip", ["e", "lo"], ["y"])]
    data = quantized(float_model(nodes, [("x", SHAPE)], [("y", TOKENS)], init, opset=20), feeds(), **MODES[mode])
    assert [t for t, _, _ in float32_ops(data)] == ["LAYER_NORM", "ELEMENT_F32", "ELEMENT_F32"]
    x = feeds(1, seed=3)[0]["x"]
    want = ReferenceSession(data).run({"x": x})[0]
    assert want.max() == np.finfo(np.float32).max   # the premise: some element overflowed
    for variant in qnnweb.VARIANTS:
        np.testing.assert_array_equal(qnnweb.load(data, variant=variant).run(x)[0], want, err_msg=variant)
