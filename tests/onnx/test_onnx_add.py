"""ONNX ADD against onnxruntime itself: its x86 QLinearAdd computes with float32 FMAs in the model's
own domain, its kernel's first operand a vector, so an input that its broadcasting hands over as a
per-span scalar goes second (the order of the FMAs changes the last bit), and each broadcasting form
is checked. A plain onnxruntime session is the
reference here: QLinearAdd has no u8s8 product to saturate (tools/qnnweb_dev/reference/onnxruntime_session.py)."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

import qnnweb

DTYPES = {"int8": (np.int8, TensorProto.INT8, -128, 127), "uint8": (np.uint8, TensorProto.UINT8, 0, 255)}
SCALES = [(0.0065092709846794605, 0.1297689825296402, 0.11916812509298325), (0.32211122, 0.1421955, 0.030077027),
          (0.05, 0.05, 0.05), (0.019370893016457558, 0.2964361906051636, 0.0043685417622327805)]
# (a shape, b shape, b constant, constant first): vector on vector, b a scalar, b per channel of an
# NCHW tensor (a scalar per span), b along the last axis (a vector), the constant as the first input
FORMS = {
    "vector": ((1, 4, 8, 8), (1, 4, 8, 8), False, False),
    "scalar": ((1, 4, 8, 8), (1,), True, False),
    "per-channel": ((1, 4, 8, 8), (4, 1, 1), True, False),
    "last-axis": ((1, 4, 8, 8), (8,), True, False),
    "constant-first": ((1, 4, 8, 8), (4, 1, 1), True, True),
    # both operands broadcast, in different dimensions: the one that is 1 along the output's innermost
    # dimension (that is not 1) is the per-span scalar; if neither is, both are vectors
    # (outputs of 16-64K elements: the forms differ on a few pairs only)
    "two-sided-b-scalar": ((1, 16, 1, 64), (1, 1, 64, 1), False, False),
    "two-sided-a-scalar": ((2, 1, 64, 1), (1, 16, 1, 32), False, False),
    "two-sided-vectors": ((16, 1, 64), (1, 32, 64), False, False),
    "two-sided-inner-1": ((8, 1, 64, 1), (1, 32, 1, 1), False, False),
}


def qlinear_add(dtype, scales, zero_points, a_shape, b_shape, b_constant, constant_first, rng):
    np_type, onnx_type, lo, hi = DTYPES[dtype]
    (sa, sb, sy), (za, zb, zy) = scales, zero_points
    inits = [numpy_helper.from_array(np.array(v, t), n) for v, t, n in (
        (sa, np.float32, "sa"), (za, np_type, "za"), (sb, np.float32, "sb"), (zb, np_type, "zb"),
        (sy, np.float32, "sy"), (zy, np_type, "zy"))]
    inputs = [helper.make_tensor_value_info("a", onnx_type, list(a_shape))]
    if b_constant:
        inits.append(numpy_helper.from_array(rng.integers(lo, hi + 1, b_shape).astype(np_type), "b"))
    else:
        inputs.append(helper.make_tensor_value_info("b", onnx_type, list(b_shape)))
    operands = ["b", "sb", "zb", "a", "sa", "za"] if constant_first else ["a", "sa", "za", "b", "sb", "zb"]
    node = helper.make_node("QLinearAdd", operands + ["sy", "zy"], ["y"], domain="com.microsoft")
    y_shape = list(np.broadcast_shapes(a_shape, b_shape))
    graph = helper.make_graph([node], "add", inputs, [helper.make_tensor_value_info("y", onnx_type, y_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.mark.parametrize("form", sorted(FORMS))
@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_qlinear_add_matches_onnxruntime(dtype, form):
    rng = np.random.default_rng(len(form) + len(dtype))
    np_type, _, lo, hi = DTYPES[dtype]
    a_shape, b_shape, b_constant, constant_first = FORMS[form]
    for scales in SCALES:
        zero_points = [int(z) for z in rng.integers(lo, hi + 1, 3)]
        data = qlinear_add(dtype, scales, zero_points, a_shape, b_shape, b_constant, constant_first, rng)
        feeds = {"a": rng.integers(lo, hi + 1, a_shape).astype(np_type)}
        if not b_constant:
            feeds["b"] = rng.integers(lo, hi + 1, b_shape).astype(np_type)
        (expected,) = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, feeds)
        for variant in qnnweb.VARIANTS:
            (ours,) = qnnweb.load(data, variant=variant).run(*feeds.values())
            np.testing.assert_array_equal(ours, expected, err_msg=f"{variant} {scales} {zero_points}")
