"""A float32 data path between ops, end to end through qnnweb's Python API (qnnweb.Model, qnnweb.load of the
compiled .qnn bytes), against onnxruntime itself: DequantizeLinear -> LayerNormalization (float out) -> HardSwish
-> LayerNormalization (float in) -> Gelu -> Mul by a constant -> QuantizeLinear, the float Gelu result a
model output too. The IR graph is built by hand here (LAYER_NORM, ELEMENT_F32, QUANTIZE): the ONNX importer
emits these ops for such models elsewhere."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import harness as H
import qnnweb
from qnnweb.model import compile_graph
from qnnweb_dev.reference.onnxruntime_session import session_options

SHAPE = (2, 3, 40)   # rows of 40: MLAS's LayerNormalization kernel (longer than 7)
X_SCALE, X_ZP, Y_SCALE, Y_ZP, EPSILON, FACTOR = 0.05, 3, 0.03, -7, 1e-5, 1.75


def parameters(seed):
    rng = np.random.default_rng(seed)
    return [rng.normal(m, 0.5, SHAPE[-1]).astype(np.float32) for m in (1.0, 0.0, 1.0, 0.0)]


def qnnweb_graph(gamma1, beta1, gamma2, beta2):
    g = H.GraphBuilder()
    x = g.input(SHAPE, "int8", X_SCALE, X_ZP)
    normalized, activated, renormalized = (g.tensor(SHAPE, "float32") for _ in range(3))
    gelu, scaled = g.output(SHAPE, "float32"), g.tensor(SHAPE, "float32")
    y = g.output(SHAPE, "int8", Y_SCALE, Y_ZP)
    first = [g.constant(p, "float32") for p in (gamma1, beta1)]
    second = [g.constant(p, "float32") for p in (gamma2, beta2)]
    g.op("LAYER_NORM", [x, *first], [normalized], axis=-1, epsilon=EPSILON, arithmetic="layer")
    g.op("ELEMENT_F32", [normalized], [activated], function="HARD_SWISH", options={})
    g.op("LAYER_NORM", [activated, *second], [renormalized], axis=-1, epsilon=EPSILON, arithmetic="layer")
    g.op("ELEMENT_F32", [renormalized], [gelu], function="GELU", options={"approximate": "none"})
    g.op("ELEMENT_F32", [gelu], [scaled], function="MUL_SCALAR", options={"value": FACTOR})
    g.op("QUANTIZE", [scaled], [y])
    return g.graph("onnx")


def onnxruntime_session(gamma1, beta1, gamma2, beta2):
    inits = [numpy_helper.from_array(np.array(v, dtype), name) for name, v, dtype in (
        ("xs", X_SCALE, np.float32), ("xz", X_ZP, np.int8), ("ys", Y_SCALE, np.float32), ("yz", Y_ZP, np.int8),
        ("g1", gamma1, np.float32), ("b1", beta1, np.float32), ("g2", gamma2, np.float32),
        ("b2", beta2, np.float32), ("factor", FACTOR, np.float32))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "xs", "xz"], ["xf"]),
             helper.make_node("LayerNormalization", ["xf", "g1", "b1"], ["n1"], axis=-1, epsilon=EPSILON),
             helper.make_node("HardSwish", ["n1"], ["a"]),
             helper.make_node("LayerNormalization", ["a", "g2", "b2"], ["n2"], axis=-1, epsilon=EPSILON),
             helper.make_node("Gelu", ["n2"], ["gelu"]),
             helper.make_node("Mul", ["gelu", "factor"], ["scaled"]),
             helper.make_node("QuantizeLinear", ["scaled", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "float_path", [helper.make_tensor_value_info("x", TensorProto.INT8, SHAPE)],
                              [helper.make_tensor_value_info("gelu", TensorProto.FLOAT, SHAPE),
                               helper.make_tensor_value_info("y", TensorProto.INT8, SHAPE)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    model.ir_version = 9
    return onnxruntime.InferenceSession(model.SerializeToString(), session_options(),
                                        providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("seed", [1, 2])
def test_float_path_matches_onnxruntime(variant, seed):
    params = parameters(seed)
    x = np.random.default_rng(seed + 10).integers(-128, 128, SHAPE, dtype=np.int8)
    want_gelu, want_y = onnxruntime_session(*params).run(None, {"x": x})
    graph = qnnweb_graph(*params)
    with qnnweb.Model.from_graph(graph, variant) as model:
        got_gelu, got_y = model.run(x)
    assert got_gelu.view(np.uint32).tolist() == want_gelu.view(np.uint32).tolist()
    np.testing.assert_array_equal(got_y, want_y)
    with qnnweb.load(compile_graph(graph).to_bytes(), variant) as loaded:   # the .qnn form: the same bytes
        for got, want in zip(loaded.run(x), (want_gelu, want_y)):
            assert got.tobytes() == want.tobytes()
    kinds = [step.kind for step in compile_graph(graph).steps]
    assert kinds.count("unary_f32") == 3 and kinds.count("layer_norm") == 2, kinds
