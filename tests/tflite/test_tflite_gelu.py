"""TFLite GELU (int8 and uint8, approximate or not) against ai-edge-litert's default kernels (XNNPACK does
not take it: TFLite's builtin kernel's lookup table, numerics/tflite.py gelu_table): every input value, at
random scales and zero points and at scale pairs whose results fall on rounding ties (GELU(x) = x for
large x), in every variant. Was refused ("op GELU")."""

import numpy as np
import pytest
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb_dev.tflite_builder import ModelBuilder
from tflite.BuiltinOptions import BuiltinOptions

import qnnweb

RNG = np.random.default_rng(19)
TIES = [(0.25, 0, 0.5, 3), (0.25, -100, 0.5, -4), (0.125, 20, 0.25, 0), (0.1, -128, 0.1, 127)]
RANDOM = [(float(RNG.uniform(0.002, 0.3)), int(RNG.integers(-128, 128)), float(RNG.uniform(0.002, 0.3)),
           int(RNG.integers(-128, 128))) for _ in range(8)]


def gelu_options(approximate):
    """GeluOptions {approximate} (the tflite package reads it but has no builder for it)."""
    def table(b):
        b.StartObject(1)
        b.PrependBoolSlot(0, approximate, False)
        return b.EndObject()
    return BuiltinOptions.GeluOptions, table


def gelu(dtype, x_scale, x_zp, y_scale, y_zp, approximate):
    shift = 128 if dtype == "uint8" else 0
    m = ModelBuilder()
    x = m.tensor("x", [1, 256], dtype, [x_scale], [x_zp + shift])
    y = m.tensor("y", [1, 256], dtype, [y_scale], [y_zp + shift])
    m.op("GELU", [x], [y], gelu_options(approximate))
    return m.build([x], [y])


@pytest.mark.parametrize("approximate", [False, True], ids=["erf", "tanh"])
@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("params", TIES + RANDOM, ids=str)
def test_every_value_matches_litert(params, dtype, approximate):
    data = gelu(dtype, *params, approximate)
    values = np.arange(-128, 128).astype(np.int8) if dtype == "int8" else np.arange(256).astype(np.uint8)
    assert "GELU" in {o.type for o in qnnweb.load(data)._graph.ops}
    assert_matches_litert(data, values.reshape(1, 256))

