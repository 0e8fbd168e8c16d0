"""TFLite's int8 SUM and REDUCE_MAX (a written-out softmax: max, subtract, exp, sum, divide) and MEAN in
the layer-norm form litert-torch writes (the mean over [0, 2] of [1, tokens, channels], without keep_dims),
against ai-edge-litert, every variant, bit-exact.

LiteRT's XNNPACK delegate takes every int8 reduction: XNNPACK's sum (the integer sum times float32
x_scale / y_scale, zero points folded into a float32 bias, rounded half to even), its mean (the same
times 1 / n) and its max (of the stored values; LiteRT refuses an output quantized otherwise)."""

import numpy as np
import pytest
import qnnweb
from qnnweb import UnsupportedModelError
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb_dev.tflite_builder import ModelBuilder, options


def reduction_model(op_type, shape, axes, keep_dims, in_q, out_q):
    rank = len(shape)
    reduced = {a % rank for a in axes}
    out = [1 if k in reduced else d for k, d in enumerate(shape)] if keep_dims else \
        [d for k, d in enumerate(shape) if k not in reduced]
    m = ModelBuilder()
    x = m.tensor("x", list(shape), "int8", [in_q[0]], [in_q[1]])
    a = m.constant_int32("axes", list(axes))
    y = m.tensor("y", out, "int8", [out_q[0]], [out_q[1]])
    m.op(op_type, [x, a], [y], options("ReducerOptions", KeepDims=keep_dims))
    return m.build([x], [y])


def random_int8(shape, seed):
    return np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)


SHAPES_AXES = [((1, 3, 65, 65), [-1]), ((3, 65, 65), [2]), ((1, 20, 16), [1]), ((2, 5, 7, 9), [3]),
               ((2, 5, 7, 9), [1, 2]), ((4, 6, 5), [0, 2]), ((1, 12, 10), [0, 1, 2])]
# (input, output) quantization: a softmax's exponentials (scale 1/256) summed into a coarser scale; ties
SUM_QUANTIZATIONS = [((1 / 256, -128), (0.25, -128)), ((0.05, -3), (0.02, 5)), ((0.1, 7), (0.4, -2)),
                     ((0.04, 0), (0.04, 0)), ((0.01, -128), (0.5, -128))]


@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("shape, axes", SHAPES_AXES, ids=str)
def test_sum_matches_litert(shape, axes, keep_dims):
    x = random_int8(shape, len(shape) + sum(axes))
    for in_q, out_q in SUM_QUANTIZATIONS:
        assert_matches_litert(reduction_model("SUM", shape, axes, keep_dims, in_q, out_q), x)


@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("shape, axes", SHAPES_AXES, ids=str)
def test_reduce_max_matches_litert(shape, axes, keep_dims):
    x = random_int8(shape, len(shape) * 7 + sum(axes))
    for q in [(0.0517, -2), (0.1, 127)]:
        assert_matches_litert(reduction_model("REDUCE_MAX", shape, axes, keep_dims, q, q), x)


@pytest.mark.parametrize("in_q, out_q", [((0.01338, 6), (0.006351, -128)), ((0.05, -3), (0.05, -3)),
                                         ((0.1, 100), (0.3, 20))], ids=str)
def test_reduce_max_left_in_float_matches_litert(in_q, out_q):
    """ai-edge-quantizer leaves a written-out softmax's REDUCE_MAX in float (DEQUANTIZE, REDUCE_MAX,
    QUANTIZE into another quantization): qnnweb takes the max of the int8 values, then dequantizes it (the
    same float: dequantizing keeps the order)."""
    shape, reduced_shape = (1, 10, 20), (1, 20)
    m = ModelBuilder()
    x = m.tensor("x", shape, "int8", [in_q[0]], [in_q[1]])
    x_float, m_float = m.tensor("x_float", shape, "float32"), m.tensor("max_float", reduced_shape, "float32")
    y = m.tensor("y", reduced_shape, "int8", [out_q[0]], [out_q[1]])
    m.op("DEQUANTIZE", [x], [x_float])
    axes = m.constant_int32("axes", [1])
    m.op("REDUCE_MAX", [x_float, axes], [m_float], options("ReducerOptions", KeepDims=False))
    m.op("QUANTIZE", [m_float], [y])
    assert_matches_litert(m.build([x], [y]), random_int8(shape, 11))


def test_reduce_max_into_another_quantization_is_refused():
    """LiteRT's kernel refuses it too (REDUCE_MAX keeps the input's quantization)."""
    with pytest.raises(UnsupportedModelError, match="quantization differ"):
        qnnweb.load(reduction_model("REDUCE_MAX", (2, 8), [1], True, (0.1, 0), (0.2, 0)))


# the layer norm's two means (litert-torch: axes [0, 2] of [1, N, C], keep_dims false), with the
# quantizations ai-edge-quantizer gave DeiT's first block, and ties (input / output scale 2.5, 1.5)
LAYER_NORM_MEANS = [((0.03991, -1), (0.001056, -24)), ((0.1095, -128), (0.009114, -128)),
                    ((0.1, 7), (0.04, -2)), ((0.06, -3), (0.04, 5))]


@pytest.mark.parametrize("shape, axes", [((1, 65, 192), [0, 2]), ((1, 65, 192), [2]), ((1, 17, 40), [-1]),
                                         ((2, 17, 40), [2])], ids=str)
@pytest.mark.parametrize("in_q, out_q", LAYER_NORM_MEANS, ids=str)
def test_mean_over_channels_of_tokens_matches_litert(shape, axes, in_q, out_q):
    x = random_int8(shape, shape[1] + sum(axes))
    assert_matches_litert(reduction_model("MEAN", shape, axes, False, in_q, out_q), x)


def test_reduction_over_axes_of_size_one_moves_nothing():
    """A reduced axis of size 1 (the batch of [1, N, C]) is dropped: the mean over [0, 2] is over the
    channels, one average pool, no transpose."""
    data = reduction_model("MEAN", (1, 9, 12), [0, 2], False, (0.1, 0), (0.05, 0))
    compiled = qnnweb.compiled.CompiledModel.from_bytes(qnnweb.compile(data))
    assert [step[0] for step in compiled.steps] == ["avgpool2d"]
    assert_matches_litert(data, random_int8((1, 9, 12), 9))
