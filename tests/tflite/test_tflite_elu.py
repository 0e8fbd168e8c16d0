"""TFLite ELU (int8) against ai-edge-litert's default kernels: every int8 input value, at random scales
and zero points and at scale pairs whose results fall on rounding ties, in every variant."""

import numpy as np
import pytest
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb_dev.tflite_builder import ModelBuilder

ALL_VALUES = np.arange(-128, 128, dtype=np.int8).reshape(1, 256)
RNG = np.random.default_rng(17)
TIES = [(0.02, 0, 0.04, 0), (0.03125, 3, 0.0625, -5), (0.0625, -10, 0.125, 7), (0.25, 0, 0.5, -128),
        (0.1, -128, 0.1, 127)]
RANDOM = [(float(RNG.uniform(0.002, 0.3)), int(RNG.integers(-128, 128)), float(RNG.uniform(0.002, 0.3)),
           int(RNG.integers(-128, 128))) for _ in range(12)]


def elu(x_scale, x_zp, y_scale, y_zp):
    m = ModelBuilder()
    x = m.tensor("x", [1, 256], "int8", [x_scale], [x_zp])
    y = m.tensor("y", [1, 256], "int8", [y_scale], [y_zp])
    m.op("ELU", [x], [y])
    return m.build([x], [y])


@pytest.mark.parametrize("params", TIES + RANDOM, ids=str)
def test_every_int8_value_matches_litert(params):
    assert_matches_litert(elu(*params), ALL_VALUES)


def test_elu_after_an_add():
    """ELU on an ADD's output (the ops share the arena; the table reads the ADD's quantization)."""
    m = ModelBuilder()
    a = m.tensor("a", [1, 4, 4, 8], "int8", [0.05], [3])
    b = m.tensor("b", [1, 4, 4, 8], "int8", [0.04], [-7])
    s = m.tensor("s", [1, 4, 4, 8], "int8", [0.07], [10])
    y = m.tensor("y", [1, 4, 4, 8], "int8", [0.03], [-60])
    m.op("ADD", [a, b], [s])
    m.op("ELU", [s], [y])
    data = m.build([a, b], [y])
    rng = np.random.default_rng(3)
    inputs = [rng.integers(-128, 128, (1, 4, 4, 8)).astype(np.int8) for _ in range(2)]
    assert_matches_litert(data, *inputs)
