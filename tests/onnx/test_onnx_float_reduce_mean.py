"""A float ReduceMean / ReduceSum over the last axes of a float32 activation (here the model's float input, which
quantize_static leaves in float before the first QuantizeLinear): importers/onnx/float_reduce.py's
import_float_reduction emits the IR MEAN / SUM on float32 tensors with onnxruntime's arithmetic (reduce_f32):
the float result bit-exact with onnxruntime's in every variant, and what is computed from it within a quantum."""

import numpy as np
import pytest
import qnnweb
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

F = np.float32
RNG = np.random.default_rng(2026_12_07)


def aligned(x):
    """x starting on a 64-byte boundary, as onnxruntime's own tensors do (it reads a model input where the
    caller's buffer is: Eigen's packets start by its address)."""
    buffer = np.empty(x.size + 16, F)
    start = (-buffer.ctypes.data % 64) // 4
    copy = buffer[start:start + x.size].reshape(x.shape)
    copy[...] = x
    return copy


def mixed(shape):
    """Magnitudes from 1e-3 to 1e4, both signs: sums that change with their order."""
    return aligned((RNG.uniform(-1, 1, shape) * 10.0 ** RNG.uniform(-3, 4, shape)).astype(F))


def reduce_then_matmul(op_type, shape, keepdims):
    """x -> ReduceMean / ReduceSum over the last axis -> m (a float output too) -> MatMul -> y."""
    width = 1 if keepdims else shape[-2]
    reduce = (helper.make_node(op_type, ["x"], ["m"], axes=[-1], keepdims=keepdims) if op_type == "ReduceMean"
              else helper.make_node(op_type, ["x", "axes"], ["m"], keepdims=keepdims))
    m_shape = [*shape[:-1], 1] if keepdims else list(shape[:-1])
    initializers = {"w": RNG.normal(0, 1, (width, 6)).astype(F)}
    if op_type == "ReduceSum":                           # opset 13: its axes are an input
        initializers["axes"] = np.array([-1], np.int64)
    return float_model([reduce, helper.make_node("MatMul", ["m", "w"], ["y"])], [("x", list(shape))],
                       [("y", [*m_shape[:-1], 6]), ("m", m_shape)], initializers)


@pytest.mark.parametrize("keepdims", [1, 0])
@pytest.mark.parametrize("op_type", ["ReduceMean", "ReduceSum"])
@pytest.mark.parametrize("columns", [197, 196, 64, 3, 13])
def test_float_reduction_matches_onnxruntime(columns, op_type, keepdims):
    shape = (1, 7, columns)
    data = quantized(reduce_then_matmul(op_type, shape, keepdims), [{"x": mixed(shape)} for _ in range(6)],
                     quant_format="QDQ", activation="QInt8")
    x = mixed(shape)
    theirs = ReferenceSession(data).run({"x": x})
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(data, variant=variant)
        means = [o for o in model._graph.ops if o.type in ("MEAN", "SUM")]
        assert [o.options.get("arithmetic") for o in means] == ["onnxruntime"]
        _, m = model.run(x)
        np.testing.assert_array_equal(m.view(np.int32), theirs[1].view(np.int32), err_msg=variant)
    assert_matches_onnxruntime(data, x, ["MEAN", "SUM"])


def reduction_over_axis_1(shape):
    """ReduceMean over axis 1 of the model's float input, then a quantized MatMul."""
    model = float_model([helper.make_node("ReduceMean", ["x"], ["m"], axes=[1], keepdims=1),
                         helper.make_node("MatMul", ["m", "w"], ["y"])],
                        [("x", shape)], [("y", [shape[0], 1, 6])], {"w": RNG.normal(0, 1, (5, 6)).astype(F)})
    return quantized(model, [{"x": mixed(shape)} for _ in range(4)], quant_format="QDQ", activation="QInt8")


def test_float_reduction_over_a_leading_axis():
    """Axis 1 of [1, 7, 5] leads (only a size-1 axis before it): onnxruntime adds its rows in order, and so
    does REDUCE_F32's column form: bit-exact."""
    data = reduction_over_axis_1([1, 7, 5])
    for _ in range(3):
        assert_matches_onnxruntime(data, mixed((1, 7, 5)), ["MEAN"], exact=True)


def test_float_reduction_over_a_middle_axis_is_refused_by_name():
    """With a batch of 2 before it, onnxruntime sums axis 1 in Eigen's blocked rowwise order: refused."""
    with pytest.raises(qnnweb.UnsupportedModelError, match="last axes"):
        qnnweb.load(reduction_over_axis_1([2, 7, 5]), variant="scalar")
