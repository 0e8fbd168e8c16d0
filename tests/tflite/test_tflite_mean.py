"""TFLite MEAN over adjacent axes other than height and width (channels, one spatial axis, everything;
keep_dims or not) against ai-edge-litert, every variant, bit-exact: over several axes and on rank 2 / 3
tensors with TFLite's builtin MEAN (float32 mean, rounded half away from zero); over one axis of a rank-4
tensor with XNNPACK's mean, which LiteRT's delegate takes there (sum x scale x (1 / n) + bias in float32,
rounded half to even), with scales whose ratios make exact ties (x_scale / y_scale = 2.5, 1.5, ...). Axes
that are not adjacent (MEAN over [1, 3]) are moved last and averaged there (passes.reductions_over_adjacent_axes)."""

from importlib import import_module

import numpy as np
import pytest
import qnnweb
from qnnweb_dev.litert_check import assert_matches_litert, litert
from tflite.BuiltinOptions import BuiltinOptions
from qnnweb_dev.tflite_builder import ModelBuilder

REDUCER = import_module("tflite.ReducerOptions")


def mean_model(shape, axes, keep_dims, out_q=(0.02, 5), in_q=(0.05, -3)):
    out = [1 if k in [a % len(shape) for a in axes] else d for k, d in enumerate(shape)]
    if not keep_dims:
        out = [d for k, d in enumerate(shape) if k not in [a % len(shape) for a in axes]]

    def write(b):
        REDUCER.Start(b)
        REDUCER.AddKeepDims(b, keep_dims)
        return REDUCER.End(b)

    m = ModelBuilder()
    x = m.tensor("x", shape, "int8", [in_q[0]], [in_q[1]])
    a = m.constant_int32("axes", list(axes))
    y = m.tensor("y", out, "int8", [out_q[0]], [out_q[1]])
    m.op("MEAN", [x, a], [y], (BuiltinOptions.ReducerOptions, write))
    return m.build([x], [y])


@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("shape, axes", [([1, 5, 5, 16], [1, 2, 3]), ([3, 40], [-1]), ([1, 9, 30], [1])], ids=str)
def test_matches_litert(shape, axes, keep_dims):
    x = np.random.default_rng(len(shape) + sum(axes)).integers(-128, 128, shape).astype(np.int8)
    assert_matches_litert(mean_model(shape, axes, keep_dims), x)


@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("shape, axes", [([1, 6, 7, 20], [3]), ([1, 6, 7, 20], [1]), ([2, 6, 7, 20], [2]),
                                         ([1, 35, 3, 4], [1]), ([1, 2, 3, 5], [-1])], ids=str)
def test_one_axis_of_rank_4_matches_litert(shape, axes, keep_dims):
    rng = np.random.default_rng(len(shape) + sum(axes) + shape[1])
    x = rng.integers(-128, 128, shape).astype(np.int8)
    for ratio, in_zp, out_zp in [(2.5, -3, 5), (1.5, 7, -1), (1.0, 4, 4), (0.75, -20, 11)]:
        out_scale = 0.04
        assert_matches_litert(mean_model(shape, axes, keep_dims, (out_scale, out_zp), (out_scale * ratio, in_zp)), x)


@pytest.mark.parametrize("keep_dims", [True, False])
@pytest.mark.parametrize("shape, axes", [([1, 4, 4, 8], [1, 3]), ([2, 5, 6, 7], [0, 2]), ([3, 4, 5, 6], [0, 1, 3])],
                         ids=str)
def test_axes_apart(shape, axes, keep_dims):
    """Axes that are not adjacent: the reduced ones are moved last (one strided copy) and averaged there."""
    x = np.random.default_rng(len(shape) + sum(axes)).integers(-128, 128, shape).astype(np.int8)
    assert_matches_litert(mean_model(shape, axes, keep_dims), x)
