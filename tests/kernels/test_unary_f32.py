"""ELEMENT_F32 (the unary_f32 record): onnxruntime's float element functions on float32 tensors, bit-exact in
every variant and thread count with qnnweb.numerics.onnxruntime.element_function (the reference the int8
tables follow) on a dense deterministic sweep of float32 values (around 0 and the denormals, the erf split
0.921875, the exp / logistic / tanh clamps, powers of two, the largest values, a stride through every bit
pattern) and on random bit patterns; infinities as the reference gives them, NaN to NaN. And bit-exact with
onnxruntime itself (its CPU provider on one-node float models) on the sweep, infinities and NaN. The
lowering refuses what the kernel does not compute, naming it."""

import itertools
import math

import numpy as np
import onnxruntime
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from onnx import TensorProto, helper, numpy_helper

import harness as H
import qnnweb
from qnnweb.model import compile_graph
from qnnweb.numerics.onnxruntime import element_function
from qnnweb.ops.unary_f32 import FUNCTIONS, OPERATIONS, unary_f32_fields
from qnnweb_dev.reference.onnxruntime_session import session_options

# every function of the kernel, with its options' forms
CASES = [
    ("ERF", {}), ("EXP", {}), ("GELU", {}), ("GELU", {"approximate": "none"}), ("GELU", {"approximate": "tanh"}),
    ("SQRT", {}), ("POW", {"exponent": 1}), ("POW", {"exponent": 2.0}), ("POW", {"exponent": 3}), ("NEG", {}),
    ("ABS", {}), ("RECIPROCAL", {}), ("LEAKY_RELU", {"alpha": 0.01}), ("LEAKY_RELU", {"alpha": -1.7}),
    ("ELU", {}), ("ELU", {"alpha": 0.3}), ("LOGISTIC", {}), ("TANH", {}), ("HARD_SWISH", {}), ("HARD_SIGMOID", {}),
    ("HARD_SIGMOID", {"alpha": 0.3, "beta": 0.6}), ("CLIP", {"min": -1.5, "max": 2.0}), ("CLIP", {"min": 0.1}),
    ("CLIP", {"max": -0.25}), ("CLIP", {}), ("CLIP", {"min": None, "max": math.inf}), ("RELU", {}), ("RELU6", {}),
    ("RELU_N1_TO_1", {}), ("ADD_SCALAR", {"value": 0.3}), ("ADD_SCALAR", {"value": -2.5, "first": True}),
    ("SUB_SCALAR", {"value": 0.3}), ("SUB_SCALAR", {"value": 0.3, "first": True}), ("MUL_SCALAR", {"value": 1e-3}),
    ("MUL_SCALAR", {"value": -3.0, "first": True}), ("DIV_SCALAR", {"value": 3.0}),
    ("DIV_SCALAR", {"value": 3.0, "first": True}), ("DIV_SCALAR", {"value": 0.0}),
    ("NONZERO_TO", {"value": -3.4028235e38}), ("ZERO_TO", {"value": 2.5}), ("SELECT", {"value": 1.0, "otherwise": 0.0}),
    ("SELECT", {"value": 0.0, "otherwise": -math.inf}), ("NAN_TO", {"value": 0.0}),
]
CASE_IDS = [f"{f}-{'-'.join(f'{k}={v}' for k, v in o.items())}" if o else f for f, o in CASES]

# where the functions change form: the erf split, MLAS's exp clamps and erf's, Eigen's exp limits, the
# logistic / tanh / hard-swish clamps, exp's denormal border (ln 2^-126)
CENTRES = [17.7, 0.921875, 88.3762626647949, 103.9720840454, 88.7762626647950, 88.723, 104.0, 87.33654, 86.6, 18.0, 9.0,
           3.0, 6.0, 1.0, 0.5, 2.0, 0.3, 1e-3, 5e-5, 1e30, 1e-30]


def bits_to_floats(bits):
    return np.asarray(bits, np.int64).astype(np.uint32).view(np.float32)


def sweep():
    """The deterministic sample: finite float32 values, both signs."""
    parts = [np.arange(0, 4096), np.arange(0x00800000 - 2048, 0x00800000 + 2048),   # zeros, denormals, smallest normals
             np.arange(0x7F7FFFFF - 1024, 0x7F7FFFFF + 1),                          # the largest values
             np.arange(65536, dtype=np.int64) * 65537 % (1 << 31)]                 # a stride through every exponent
    for centre in CENTRES:
        bits = int(np.float32(centre).view(np.uint32))
        parts.append(np.arange(bits - 1024, bits + 1025))
    for exponent in range(-149, 128):   # the powers of two and their neighbours
        bits = int(np.float32(math.ldexp(1.0, exponent)).view(np.uint32))
        parts.append(np.arange(bits - 2, bits + 3))
    positive = np.unique(np.concatenate(parts))
    values = bits_to_floats(np.concatenate([positive, positive | (1 << 31)]))
    grid = np.linspace(-110, 110, 22001, dtype=np.float32)
    return np.concatenate([values[np.isfinite(values)], grid])


SWEEP = sweep()
_expected = {}


def expected(case_index, x):
    function = element_function(*CASES[case_index])
    return np.array([function(float(v)) for v in x], np.float32)


def sweep_expected(case_index):
    if case_index not in _expected:
        _expected[case_index] = expected(case_index, SWEEP)
    return _expected[case_index]


def run(variant, function, options, x):
    g = H.GraphBuilder()
    xi, yi = g.input(x.shape, "float32"), g.output(x.shape, "float32")
    g.op("ELEMENT_F32", [xi], [yi], function=function, options=options)
    return H.run(g, variant, x, fmt="onnx")[0]


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("case_index", range(len(CASES)), ids=CASE_IDS)
def test_sweep_matches_element_function(variant, case_index):
    function, options = CASES[case_index]
    H.assert_same_floats(run(variant, function, options, SWEEP), sweep_expected(case_index), SWEEP)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(40), deadline=None)
@given(case_index=st.integers(0, len(CASES) - 1),
       bits=st.lists(st.integers(0, (1 << 32) - 1), min_size=1, max_size=300))
def test_random_bit_patterns_match_element_function(variant, case_index, bits):
    x = bits_to_floats(bits)
    x = x[np.isfinite(x)]
    if x.size:
        function, options = CASES[case_index]
        H.assert_same_floats(run(variant, function, options, x), expected(case_index, x), x)


@pytest.mark.parametrize("variant", H.VARIANTS)
def test_infinities_as_the_reference_and_nan_to_nan(variant):
    """+-inf: what element_function gives (the functions' clamps take them in: exp(-inf) = 0, erf(inf) = 1,
    tanh(-inf) = -1; gelu(-inf) = -inf * 0 = NaN); NaN (quiet, signalling, either sign): NaN for every
    function (the reference has no answer for some: floor(NaN) raises there) but the selections that replace
    NaN (Where on a truth, where NaN is true, and on IsNaN), which give their constant."""
    infinities = np.float32([np.inf, -np.inf])
    nans = bits_to_floats([0x7FC00000, 0xFFC00000, 0x7F800001, 0x7FFFFFFF])
    for function, options in CASES:
        reference = element_function(function, options)
        want = np.array([reference(float(v)) for v in infinities], np.float32)
        got = run(variant, function, options, np.concatenate([infinities, nans]))
        H.assert_same_floats(got[:2], want, infinities)
        if function in ("NONZERO_TO", "SELECT", "NAN_TO"):
            assert (got[2:] == np.float32(options["value"])).all(), (function, options, got[2:])
        else:
            assert np.isnan(got[2:]).all(), (function, options, got[2:])


def test_every_function_and_operation_is_tested():
    """CASES hold every function the lowering takes, and they reach every operation of the record."""
    assert {function for function, _ in CASES} == set(FUNCTIONS)
    assert {unary_f32_fields(*case)[0] for case in CASES} == set(OPERATIONS.values())


@pytest.mark.parametrize("function, options, words", [
    ("FLOAT_REGION", {"program": []}, "FLOAT_REGION"), ("SIN", {}, "SIN"), (None, {}, "None"),
    ("POW", {"exponent": 0.5}, "exponent 0.5"), ("POW", {}, "exponent"), ("GELU", {"approximate": "fast"}, "fast"),
    ("LEAKY_RELU", {}, "alpha"), ("CLIP", {"min": 2.0, "max": 1.0}, "not in order"),
    ("CLIP", {"min": math.inf}, "infinity"), ("ADD_SCALAR", {"value": math.inf}, "finite"),
    ("MUL_SCALAR", {"value": 1e39}, "finite"), ("ELU", {"alpha": "x"}, "not a number"),
])
def test_lowering_refuses_what_the_kernel_does_not_compute(function, options, words):
    g = H.GraphBuilder()
    xi, yi = g.input((4,), "float32"), g.output((4,), "float32")
    g.op("ELEMENT_F32", [xi], [yi], function=function, options=options)
    with pytest.raises(qnnweb.UnsupportedModelError, match="ELEMENT_F32") as error:
        compile_graph(g.graph("onnx"))
    assert words in str(error.value)


def test_lowering_refuses_quantized_tensors():
    g = H.GraphBuilder()
    xi, yi = g.input((4,), "int8", 0.1, 0), g.output((4,), "float32")
    g.op("ELEMENT_F32", [xi], [yi], function="ERF", options={})
    with pytest.raises(qnnweb.UnsupportedModelError, match="int8; expected float32"):
        compile_graph(g.graph("onnx"))


# ----------------------------------------------------------------------------- against onnxruntime itself

_ONNX_UNARY = {"ERF": "Erf", "EXP": "Exp", "SQRT": "Sqrt", "NEG": "Neg", "ABS": "Abs", "RECIPROCAL": "Reciprocal",
               "LOGISTIC": "Sigmoid", "TANH": "Tanh", "HARD_SWISH": "HardSwish", "RELU": "Relu"}
_ONNX_BINARY = {"ADD_SCALAR": "Add", "SUB_SCALAR": "Sub", "MUL_SCALAR": "Mul", "DIV_SCALAR": "Div"}
_CLIP_BOUNDS = {"RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}


def onnx_node(function, o):
    """The ONNX node (opset 20) computing element function ``function``, and its constants."""
    constants = []

    def constant(name, value):
        constants.append(numpy_helper.from_array(np.array(value, np.float32), name))
        return name

    if function in _ONNX_UNARY:
        return helper.make_node(_ONNX_UNARY[function], ["x"], ["y"]), constants
    if function == "GELU":
        return helper.make_node("Gelu", ["x"], ["y"], approximate=o.get("approximate", "none")), constants
    if function == "POW":
        return helper.make_node("Pow", ["x", constant("e", o["exponent"])], ["y"]), constants
    if function == "LEAKY_RELU":
        return helper.make_node("LeakyRelu", ["x"], ["y"], alpha=o["alpha"]), constants
    if function == "ELU":
        return helper.make_node("Elu", ["x"], ["y"], alpha=o.get("alpha", 1.0)), constants
    if function == "HARD_SIGMOID":
        return helper.make_node("HardSigmoid", ["x"], ["y"], alpha=o.get("alpha", 0.2), beta=o.get("beta", 0.5)), constants
    if function in ("CLIP", *_CLIP_BOUNDS):
        low, high = _CLIP_BOUNDS.get(function, (o.get("min"), o.get("max")))
        inputs = ["x", "" if low is None else constant("low", low), "" if high is None else constant("high", high)]
        while not inputs[-1]:
            inputs.pop()
        return helper.make_node("Clip", inputs, ["y"]), constants
    value = constant("c", o["value"])
    if function in ("NONZERO_TO", "ZERO_TO", "SELECT", "NAN_TO"):   # Where on the truth of x, or on IsNaN(x)
        truth = helper.make_node("IsNaN", ["x"], ["b"]) if function == "NAN_TO" else helper.make_node(
            "Cast", ["x"], ["b"], to=TensorProto.BOOL)
        branches = {"NONZERO_TO": [value, "x"], "ZERO_TO": ["x", value], "NAN_TO": [value, "x"],
                    "SELECT": [value, constant("d", o.get("otherwise", 0.0))]}[function]
        return [truth, helper.make_node("Where", ["b", *branches], ["y"])], constants
    return helper.make_node(_ONNX_BINARY[function], [value, "x"] if o.get("first") else ["x", value], ["y"]), constants


def onnxruntime_function(function, options, x):
    node, constants = onnx_node(function, options)
    graph = helper.make_graph(node if isinstance(node, list) else [node], "f", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [x.size])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [x.size])], constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    session_settings = session_options()
    session_settings.intra_op_num_threads = 1   # Elu's tail past the last packet of 4 goes to expf: one tail, none here
    session = onnxruntime.InferenceSession(model.SerializeToString(), session_settings, providers=["CPUExecutionProvider"])
    return session.run(None, {"x": x})[0]


def clip_without_a_bound(function, options):
    """onnxruntime's Clip without a bound clamps to float32's largest values (infinities too); element_function,
    which the kernel follows, lets infinities pass there (the importer gives such a bound as an infinity)."""
    return function == "CLIP" and (options.get("min") is None or options.get("max") in (None, math.inf))


VARIANT_CYCLE = itertools.cycle(H.VARIANTS)


@pytest.mark.parametrize("case_index", range(len(CASES)), ids=CASE_IDS)
def test_sweep_matches_onnxruntime(case_index):
    function, options = CASES[case_index]
    special = np.float32([np.inf, -np.inf, np.nan, 0.0])   # a multiple of 4 values: Elu has no tail
    x = np.concatenate([SWEEP[:SWEEP.size // 4 * 4], special])
    want = onnxruntime_function(function, options, x)
    got = run(next(VARIANT_CYCLE), function, options, x)
    if clip_without_a_bound(function, options):
        finite = np.isfinite(x)
        x, got, want = x[finite], got[finite], want[finite]
    H.assert_same_floats(got, want, x)


def test_logistic_above_one_as_onnxruntime():
    """MLAS's FMA3 Sigmoid clamps its result below at 0 only: these inputs give 1.0000001 there (every one of
    the float32 values where it exceeds 1), and here."""
    x = bits_to_floats([0x418BDB45, 0x418D0C5A, 0x418D90BF, 0x418E1C52, 0x418E768E, 0x418E8B20, 0x418EA6A2,
                        0x418EC083, 0x418EDBFB, 0x418EF38E, 0x418EFBC8, 0x418F22BC, 0x418F2CBA, 0x418F7A0D,
                        0x418F8A40, 0x418F9D39, 0x418FA72F, 0x418FAB3D, 0x418FAD44, 0x418FF2CC])
    want = onnxruntime_function("LOGISTIC", {}, x)
    assert (want == np.float32(1.0000001)).all()
    H.assert_same_floats(expected(CASES.index(("LOGISTIC", {})), x), want, x)
    for variant in H.VARIANTS:
        H.assert_same_floats(run(variant, "LOGISTIC", {}, x), want, x)
