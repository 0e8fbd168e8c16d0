"""ONNX ADD against onnxruntime itself: its x86 QLinearAdd computes with float32 FMAs in the model's
own domain, its kernel's first operand a vector, so an input that its broadcasting hands over as a
per-span scalar goes second (the order of the FMAs changes the last bit), and each broadcasting form
is checked. A plain onnxruntime session is the
reference here: QLinearAdd has no u8s8 product to saturate (tools/qnnweb_dev/reference/onnxruntime_session.py).

With a scalar operand (per span of its broadcasting, or the whole tensor) MLAS folds the scalar's term
into its constant part before it adds the vector's (qladd_avx2.cpp, contracted to FMAs):
f = float(zc) - fma(rx, zx, rs * zs), v = fma(x, rx, fma(s, rs, f)), where x is the vector operand and
s the scalar; the sums round differently for a uint8 model's values and zero points than for their
int8 twin's (x - 128), so the reference twin keeps quantized Adds uint8 (``uint8_mul_add``)."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

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


# (a scale, a zero point, b scale, b zero point, output scale, output zero point) in uint8 terms (an
# int8 model's zero points are 128 less): GELU's `erf + 1` as quantize_static quantizes it (the Erf
# output on scale 2/255, the constant 1 on 1/255; zero points 128 and 127 as calibration gives them)
# and some arbitrary ones
SCALAR_OPERAND_CASES = [
    (0.00784313678741455, 128, 0.003921568859368563, 0, 0.007843137718737125, 0),
    (0.007837715558707714, 127, 0.003921568859368563, 0, 0.00784269254654646, 0),
    (0.0065092709846794605, 17, 0.1297689825296402, 200, 0.11916812509298325, 90),
    (0.32211122, 3, 0.1421955, 250, 0.030077027, 128),
    (0.019370893016457558, 140, 0.2964361906051636, 9, 0.0043685417622327805, 131),
]


def _in_dtype(dtype, case):
    """(scales, zero points) of a case for a model of `dtype`."""
    shift = 128 if dtype == "int8" else 0
    sa, za, sb, zb, sy, zy = case
    return (sa, sb, sy), (za - shift, zb - shift, zy - shift)


def _every_value(dtype):
    return np.arange(256).astype(np.uint8).view(DTYPES[dtype][0])


@pytest.mark.parametrize("scalar", ["a", "b"])
@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_scalar_operand_on_every_pair(dtype, scalar):
    """Every (a, b) pair with one operand a per-span scalar ([256, 256] + [256, 1], either way round):
    onnxruntime's scalar form, value by value."""
    values = _every_value(dtype)
    column, rows = values.reshape(256, 1), np.tile(values, (256, 1))
    a, b = (column, rows) if scalar == "a" else (rows, column)
    for case in SCALAR_OPERAND_CASES:
        scales, zero_points = _in_dtype(dtype, case)
        data = qlinear_add(dtype, scales, zero_points, a.shape, b.shape, False, False, None)
        (expected,) = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"a": a, "b": b})
        for variant in qnnweb.VARIANTS:
            (ours,) = qnnweb.load(data, variant=variant).run(a, b)
            np.testing.assert_array_equal(ours, expected, err_msg=f"{variant} {case}")


def qdq_add_of_constant(dtype, case, constant, constant_first):
    """DequantizeLinear -> Add of a dequantized constant scalar -> QuantizeLinear (quantize_static's QDQ
    form, which onnxruntime fuses into a QLinearAdd with a scalar operand), 256 elements."""
    np_type, onnx_type, _, _ = DTYPES[dtype]
    (sx, sc, sy), (zx, zc, zy) = _in_dtype(dtype, case)
    inits = [numpy_helper.from_array(np.array(v, t), n) for v, t, n in (
        (sx, np.float32, "sx"), (zx, np_type, "zx"), (sc, np.float32, "sc"), (zc, np_type, "zc"),
        (sy, np.float32, "sy"), (zy, np_type, "zy"), (constant, np_type, "c"))]
    nodes = [helper.make_node("DequantizeLinear", ["x", "sx", "zx"], ["xf"]),
             helper.make_node("DequantizeLinear", ["c", "sc", "zc"], ["cf"]),
             helper.make_node("Add", ["cf", "xf"] if constant_first else ["xf", "cf"], ["yf"]),
             helper.make_node("QuantizeLinear", ["yf", "sy", "zy"], ["y"])]
    graph = helper.make_graph(nodes, "add", [helper.make_tensor_value_info("x", onnx_type, [1, 256])],
                              [helper.make_tensor_value_info("y", onnx_type, [1, 256])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    return model.SerializeToString()


@pytest.mark.parametrize("constant_first", [False, True])
@pytest.mark.parametrize("dtype", sorted(DTYPES))
def test_reference_twin_adds_in_the_model_domain(dtype, constant_first):
    """GELU's `erf + 1` on every input value: the reference twin of a uint8 model (uint8_mul_add) gives
    what onnxruntime gives on the uint8 model itself, and so does qnnweb; an int8 model is its own
    reference. (A twin computing the Add in int8 rounds 48 of the 256 the other way, one quantum.)"""
    x = _every_value(dtype).reshape(1, 256)
    for case in SCALAR_OPERAND_CASES[:2]:
        data = qdq_add_of_constant(dtype, case, 255 if dtype == "uint8" else 127, constant_first)
        (plain,) = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"]).run(None, {"x": x})
        (twin,) = ReferenceSession(data, uint8_mul_add=True).run({"x": x})
        np.testing.assert_array_equal(twin, plain, err_msg=f"{case}")
        for variant in qnnweb.VARIANTS:
            (ours,) = qnnweb.load(data, variant=variant).run(x)
            np.testing.assert_array_equal(ours, plain, err_msg=f"{variant} {case}")
