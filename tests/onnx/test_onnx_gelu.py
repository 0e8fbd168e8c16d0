"""GELU and the float element functions around it (Erf, Gelu, Exp, Sqrt, Pow, Neg, Abs, Reciprocal, Add / Sub /
Mul / Div with a constant scalar), which onnxruntime's quantizer leaves in float between DequantizeLinear
and QuantizeLinear: one table of onnxruntime's float32 arithmetic (numerics/onnxruntime.py; Erf: MLAS's
FMA3 kernel, numerics/mlas_fma3.py), bit-exact with onnxruntime on every input value and in quantized
models, every variant. Each was refused before ("op Erf: operator not supported", "its float output is
used in float")."""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession
from test_onnx_quantizer_forms import feeds

import qnnweb
from qnnweb.cli.reference_onnx import session_options

RNG = np.random.default_rng(31)
MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8")]
SQRT2 = np.float32(1.4142135)


def run_of_every_value(dtype, scale, zero_point, nodes, constants, quantize, opset=20, shape=(1, 256)):
    """q (of `shape`: the 256 values of `dtype` along its last axis) -> DequantizeLinear -> `nodes` (from "f"
    to "e", float32 `constants` beside them) -> y, QuantizeLinear'd to `dtype` with (scale, zero point)
    `quantize`, or "e" itself (float) when it is None."""
    np_dtype, onnx_dtype = (np.int8, TensorProto.INT8) if dtype == "int8" else (np.uint8, TensorProto.UINT8)
    init = [numpy_helper.from_array(np.array(scale, np.float32), "s"),
            numpy_helper.from_array(np.array(zero_point, np_dtype), "z")]
    init += [numpy_helper.from_array(np.array(v, np.float32), k) for k, v in constants.items()]
    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["f"]), *nodes]
    if quantize:
        init += [numpy_helper.from_array(np.array(quantize[0], np.float32), "ys"),
                 numpy_helper.from_array(np.array(quantize[1], np_dtype), "yz")]
        nodes.append(helper.make_node("QuantizeLinear", ["e", "ys", "yz"], ["y"]))
    else:
        nodes.append(helper.make_node("Identity", ["e"], ["y"]))
    graph = helper.make_graph(nodes, "run", [helper.make_tensor_value_info("q", onnx_dtype, list(shape))],
                              [helper.make_tensor_value_info("y", onnx_dtype if quantize else TensorProto.FLOAT,
                                                             list(shape))], init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=9).SerializeToString()


def assert_every_value_matches(data, dtype, op_type):
    q = np.arange(256, dtype=np.uint8).view(np.int8 if dtype == "int8" else np.uint8).reshape(1, 256)
    (theirs,) = ReferenceSession(data).run({"q": q})
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(data, variant=variant)
        assert op_type in {o.type for o in model._graph.ops}
        (ours,) = model.run(q)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs, err_msg=variant)


def node(op_type, inputs, output="e", **attrs):
    return helper.make_node(op_type, inputs, [output], **attrs)


# (IR op of the table, nodes from "f" to "e", constants)
RUNS = {
    "gelu-as-exported": ("DIV_SCALAR", [node("Div", ["f", "sqrt2"], "d"), node("Erf", ["d"])], {"sqrt2": SQRT2}),
    "erf": ("ERF", [node("Erf", ["f"])], {}),
    "exp": ("EXP", [node("Exp", ["f"])], {}),
    "gelu": ("GELU", [node("Gelu", ["f"])], {}),
    "gelu-tanh": ("GELU", [node("Gelu", ["f"], approximate="tanh")], {}),
    "sqrt-of-abs": ("ABS", [node("Abs", ["f"], "a"), node("Sqrt", ["a"])], {}),
    "square": ("POW", [node("Pow", ["f", "two"])], {"two": np.float32(2.0)}),
    "cube-of-relu": ("RELU", [node("Relu", ["f"], "r"), node("Pow", ["r", "three"])], {"three": np.float32(3.0)}),
    "star-relu": ("RELU", [node("Relu", ["f"], "r"), node("Pow", ["r", "two"], "p"), node("Mul", ["p", "s"], "m"),
                           node("Add", ["b", "m"])], {"two": np.float32(2.0), "s": np.float32(0.8944),
                                                     "b": np.float32(-0.4472)}),
    "neg-reciprocal": ("NEG", [node("Neg", ["f"], "n"), node("Sub", ["n", "three"], "t"), node("Reciprocal", ["t"])],
                       {"three": np.float32(3.0)}),
    "constant-first": ("SUB_SCALAR", [node("Sub", ["one", "f"], "d"), node("Div", ["half", "d"], "v"),
                                      node("Sigmoid", ["v"])], {"one": np.float32(1.0), "half": np.float32(0.5)}),
}
# (dtype, input scale, zero point, output scale / zero point or None for a float output)
VALUE_CASES = [("int8", 0.05, 0, (0.03, -20)), ("int8", 0.0213, 37, None), ("int8", 0.1, -128, (0.1, -118)),
               ("uint8", 0.0137, 200, (0.009, 140)), ("uint8", 0.04, 128, None)]


@pytest.mark.parametrize("case", VALUE_CASES, ids=str)
@pytest.mark.parametrize("run", RUNS, ids=str)
def test_every_input_value_matches_onnxruntime(run, case):
    """Each of the 256 inputs through DequantizeLinear -> the run (-> QuantizeLinear): the same bytes, or
    float32 bits, as onnxruntime."""
    op_type, nodes, constants = RUNS[run]
    dtype, scale, zero_point, quantize = case
    data = run_of_every_value(dtype, scale, zero_point, nodes, constants, quantize)
    assert_every_value_matches(data, dtype, op_type)


def test_pow_with_another_exponent_is_refused_by_name():
    """std::pow has no exact model here: the model is refused naming the op, not approximated."""
    data = run_of_every_value("int8", 0.05, 0, [node("Pow", ["f", "e2"])], {"e2": np.float32(0.5)}, (0.1, 0))
    with pytest.raises(qnnweb.ModelError, match="Pow"):
        qnnweb.load(data)


def gelu_mlp(gelu_nodes):
    """Conv 1x1 -> GELU (`gelu_nodes`, from "c" to "g") -> Conv 1x1: a GELU Mlp over a feature map."""
    init = {"w": RNG.normal(0, 0.6, (8, 3, 1, 1)).astype(np.float32), "b": RNG.normal(0, 0.2, 8).astype(np.float32),
            "w2": RNG.normal(0, 0.4, (4, 8, 1, 1)).astype(np.float32), "sqrt2": SQRT2,
            "one": np.float32(1.0), "half": np.float32(0.5)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"]), *gelu_nodes,
             helper.make_node("Conv", ["g", "w2"], ["y"])]
    return float_model(nodes, [("x", [1, 3, 6, 7])], [("y", [1, 4, 6, 7])], init, opset=17)


TORCH_GELU = [node("Div", ["c", "sqrt2"], "d"), node("Erf", ["d"], "e"), node("Add", ["e", "one"], "a"),
              node("Mul", ["c", "a"], "m"), node("Mul", ["m", "half"], "g")]


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("mode", MODES, ids=["-".join(m) for m in MODES])
def test_gelu_as_torch_exports_it_in_a_quantized_model(mode, per_channel):
    """torch's GELU (opset 17: x * 0.5 * (1 + erf(x / sqrt 2))) quantized by quantize_static: it quantizes
    the Add and the Muls and leaves Div -> Erf in float, which is one table here: bit-exact with
    onnxruntime, every variant."""
    data = quantized(gelu_mlp(TORCH_GELU), feeds([1, 3, 6, 7]), quant_format=mode[0], activation=mode[1],
                     per_channel=per_channel)
    x = feeds([1, 3, 6, 7], 1, seed=5)[0]["x"] * 2
    assert_matches_onnxruntime(data, x, ["DIV_SCALAR"], exact=True)


# float regions that read the dequantized input more than once (IR FLOAT_REGION): (nodes, constants)
REGIONS = {
    "gelu-in-float": ([node("Div", ["f", "sqrt2"], "d"), node("Erf", ["d"], "r"), node("Add", ["r", "one"], "a"),
                       node("Mul", ["f", "a"], "m"), node("Mul", ["m", "half"])],
                      {"sqrt2": SQRT2, "one": np.float32(1.0), "half": np.float32(0.5)}),
    "gelu-half-first": ([node("Div", ["f", "sqrt2"], "d"), node("Mul", ["f", "half"], "h"), node("Erf", ["d"], "r"),
                         node("Add", ["one", "r"], "a"), node("Mul", ["h", "a"])],
                        {"sqrt2": SQRT2, "one": np.float32(1.0), "half": np.float32(0.5)}),
    "silu": ([node("Sigmoid", ["f"], "sg"), node("Mul", ["sg", "f"])], {}),
    "hard-swish-written-out": ([node("Add", ["f", "three"], "a"), node("Clip", ["a", "zero", "six"], "r"),
                                node("Mul", ["f", "r"], "m"), node("Div", ["m", "six"])],
                               {"three": np.float32(3.0), "zero": np.float32(0.0), "six": np.float32(6.0)}),
    "silu-with-exp": ([node("Neg", ["f"], "n"), node("Exp", ["n"], "x"), node("Add", ["x", "one"], "a"),
                       node("Div", ["f", "a"])], {"one": np.float32(1.0)}),
    "x-minus-tanh-times-x": ([node("Tanh", ["f"], "t"), node("Sub", ["t", "f"], "u"), node("Mul", ["u", "f"])], {}),
}


@pytest.mark.parametrize("case", VALUE_CASES, ids=str)
@pytest.mark.parametrize("region", REGIONS, ids=str)
def test_float_region_of_one_tensor_matches_onnxruntime(region, case):
    """A float region reading the dequantized tensor twice (GELU written out in float, as quantize_static
    leaves it when only the convolutions are quantized; SiLU ...) is still a function of one int8 value:
    one table, each op as onnxruntime runs it (not fused: see test_onnxruntime_runs_the_region_unfused)."""
    nodes, constants = REGIONS[region]
    dtype, scale, zero_point, quantize = case
    data = run_of_every_value(dtype, scale, zero_point, nodes, constants, quantize, opset=17)
    assert_every_value_matches(data, dtype, "FLOAT_REGION")


def test_onnxruntime_runs_the_region_unfused(tmp_path):
    """The reference runs GELU written out in float op by op: its optimizer (ORT_ENABLE_ALL) gives each
    reader of the DequantizeLinear its own copy, so GeluFusion's Div and Mul no longer read one tensor and
    no com.microsoft Gelu appears (which would compute x * M_SQRT1_2 instead of x / sqrt 2)."""
    nodes, constants = REGIONS["gelu-in-float"]
    data = run_of_every_value("int8", 0.05, 0, nodes, constants, (0.03, -20), opset=17)
    options = session_options()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    ops = [n.op_type for n in onnx.load(options.optimized_model_filepath).graph.node]
    assert "Gelu" not in ops and {"Div", "Erf", "Add", "Mul"} <= set(ops), ops


def test_quantized_square_stays_a_quantized_mul():
    """DequantizeLinear -> Mul(x, x) -> QuantizeLinear is onnxruntime's QLinearMul (its own rounding), not
    a float region: the Mul stays IR MUL, bit-exact as before."""
    data = run_of_every_value("int8", 0.1, -128, [node("Mul", ["f", "f"])], {}, (0.1, -118))
    assert_every_value_matches(data, "int8", "MUL")


@pytest.mark.parametrize("mode", [("QDQ", "QUInt8"), ("QDQ", "QInt8")], ids=["QDQ-QUInt8", "QDQ-QInt8"])
def test_gelu_left_in_float_when_only_convolutions_are_quantized(mode):
    """quantize_static with op_types_to_quantize=["Conv"] leaves the whole GELU in float between the
    convolutions: one FLOAT_REGION table, bit-exact with onnxruntime."""
    data = quantized(gelu_mlp(TORCH_GELU), feeds([1, 3, 6, 7]), quant_format=mode[0], activation=mode[1],
                     op_types=["Conv"])
    x = feeds([1, 3, 6, 7], 1, seed=6)[0]["x"] * 2
    assert_matches_onnxruntime(data, x, ["FLOAT_REGION"], exact=True)


@pytest.mark.parametrize("case", VALUE_CASES[:3], ids=str)
def test_com_microsoft_gelu_matches_onnxruntime(case):
    """com.microsoft's Gelu (what onnxruntime's own GeluFusion and its transformer exporters write) runs the
    same kernel as opset 20's: one GELU table."""
    dtype, scale, zero_point, quantize = case
    nodes = [helper.make_node("Gelu", ["f"], ["e"], domain="com.microsoft")]
    model = onnx.load_from_string(run_of_every_value(dtype, scale, zero_point, nodes, {}, quantize, opset=17))
    model.opset_import.append(helper.make_opsetid("com.microsoft", 1))
    assert_every_value_matches(model.SerializeToString(), dtype, "GELU")
