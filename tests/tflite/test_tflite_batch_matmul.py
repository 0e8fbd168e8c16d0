"""TFLite's attention forms against ai-edge-litert, bit-exact in every variant: BATCH_MATMUL of two int8
activations (adj_x, adj_y, broadcast batch dimensions, ranks 2-4; XNNPACK's fp32 requantization where B's
zero point is 0, else LiteRT's builtin kernel with TFLite's fixed-point multiplier: QUANTIZATION has
both), FULLY_CONNECTED on a rank-3 input with keep_num_dims, SOFTMAX of rank 3-4."""

from importlib import import_module

import numpy as np
import pytest
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb_dev.tflite_builder import ModelBuilder
from tflite.BuiltinOptions import BuiltinOptions

BatchMatMulOptions, FullyConnectedOptions, SoftmaxOptions = (
    import_module(f"tflite.{name}") for name in ("BatchMatMulOptions", "FullyConnectedOptions", "SoftmaxOptions"))


def batch_matmul_options(adj_x, adj_y):
    def write(b):
        BatchMatMulOptions.Start(b)
        BatchMatMulOptions.AddAdjX(b, adj_x)
        BatchMatMulOptions.AddAdjY(b, adj_y)
        return BatchMatMulOptions.End(b)
    return BuiltinOptions.BatchMatMulOptions, write


def matmul_shape(shape, adjoint):
    return tuple(shape[:-2]) + (shape[-1], shape[-2]) if adjoint else tuple(shape)


# (A [.., M, K], B [.., K, N]) before adj_x / adj_y transpose them
SHAPES = [((5, 8), (8, 6)), ((3, 5, 8), (3, 8, 6)), ((2, 3, 7, 16), (2, 3, 16, 7)), ((2, 1, 5, 8), (3, 8, 6)),
          ((4, 5, 8), (8, 6)), ((1, 2, 49, 16), (1, 2, 16, 49)), ((3, 33, 40), (3, 40, 17))]
QUANTIZATION = [(0.05, 3, 0.04, -7, 0.6, -20), (0.02, -128, 0.5, 0, 1.9, 5), (0.1, 127, 0.1, -128, 0.07, 0)]


@pytest.mark.parametrize("adjoints", [(False, False), (False, True), (True, False), (True, True)], ids=str)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
@pytest.mark.parametrize("quantization", QUANTIZATION, ids=str)
def test_batch_matmul_matches_litert(shapes, adjoints, quantization):
    a_scale, a_zp, b_scale, b_zp, y_scale, y_zp = quantization
    (a_shape, b_shape), (adj_x, adj_y) = shapes, adjoints
    y_shape = tuple(np.broadcast_shapes(a_shape[:-2], b_shape[:-2])) + (a_shape[-2], b_shape[-1])
    m = ModelBuilder()
    a = m.tensor("a", list(matmul_shape(a_shape, adj_x)), "int8", [a_scale], [a_zp])
    b = m.tensor("b", list(matmul_shape(b_shape, adj_y)), "int8", [b_scale], [b_zp])
    y = m.tensor("y", list(y_shape), "int8", [y_scale], [y_zp])
    m.op("BATCH_MATMUL", [a, b], [y], batch_matmul_options(adj_x, adj_y))
    rng = np.random.default_rng(len(a_shape) * 10 + len(b_shape))
    inputs = [rng.integers(-128, 128, size=matmul_shape(s, adj), dtype=np.int8)
              for s, adj in ((a_shape, adj_x), (b_shape, adj_y))]
    assert_matches_litert(m.build([a, b], [y]), *inputs)


def test_fully_connected_keeps_a_rank_3_input():
    """[batch, tokens, channels] -> [batch, tokens, units] (keep_num_dims: a transformer's projection)."""
    rng = np.random.default_rng(4)
    m = ModelBuilder()
    x = m.tensor("x", [2, 7, 12], "int8", [0.05], [4])
    w = m.tensor("w", [10, 12], "int8", [0.02], [0], data=rng.integers(-127, 128, size=(10, 12), dtype=np.int8).tobytes())
    bias = m.tensor("bias", [10], "int32", [0.001], [0], data=rng.integers(-500, 500, size=10, dtype=np.int32).tobytes())
    y = m.tensor("y", [2, 7, 10], "int8", [0.1], [-3])

    def options(b):
        FullyConnectedOptions.Start(b)
        FullyConnectedOptions.AddKeepNumDims(b, True)
        return FullyConnectedOptions.End(b)
    m.op("FULLY_CONNECTED", [x, w, bias], [y], (BuiltinOptions.FullyConnectedOptions, options))
    assert_matches_litert(m.build([x], [y]), rng.integers(-128, 128, size=(2, 7, 12), dtype=np.int8))


@pytest.mark.parametrize("shape", [(2, 7, 7), (1, 2, 49, 49), (3, 5, 1, 9)], ids=str)
def test_softmax_of_rank_3_and_4(shape):
    """Attention's softmax over the last axis of [batch, heads, tokens, tokens]."""
    m = ModelBuilder()
    x = m.tensor("x", list(shape), "int8", [0.1], [5])
    y = m.tensor("y", list(shape), "int8", [1 / 256], [-128])

    def options(b):
        SoftmaxOptions.Start(b)
        SoftmaxOptions.AddBeta(b, 1.0)
        return SoftmaxOptions.End(b)
    m.op("SOFTMAX", [x], [y], (BuiltinOptions.SoftmaxOptions, options))
    assert_matches_litert(m.build([x], [y]), np.random.default_rng(6).integers(-128, 128, size=shape, dtype=np.int8))
