"""TFLite PRELU (Face Mesh, BlazeFace): int8 and uint8, one slope or one per channel (alpha [C],
[1, 1, C]), slopes of both signs, against ai-edge-litert (its reference kernel: XNNPACK takes no
quantized PRELU) on every input value, every variant, bit-exact."""

import numpy as np
import pytest
import qnnweb
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb import UnsupportedModelError
from qnnweb_dev.tflite_builder import ModelBuilder


def prelu_model(dtype, channels, alpha_shape, alpha, x_q, y_q, alpha_q, height=16):
    m = ModelBuilder()
    x = m.tensor("x", [1, height, 16, channels], dtype, [x_q[0]], [x_q[1]])
    a = m.tensor("alpha", alpha_shape, dtype, [alpha_q[0]], [alpha_q[1]],
                 data=np.asarray(alpha, np.int8 if dtype == "int8" else np.uint8).tobytes())
    y = m.tensor("y", [1, height, 16, channels], dtype, [y_q[0]], [y_q[1]])
    m.op("PRELU", [x, a], [y])
    return m.build([x], [y])


def every_value(dtype, channels, height=16):
    """Every input byte in every channel (16 x 16 pixels = 256 values, shifted per channel)."""
    values = np.arange(256).reshape(height, 16)
    x = np.stack([np.roll(values, c) for c in range(channels)], axis=-1)[None]
    return (x - 128).astype(np.int8) if dtype == "int8" else x.astype(np.uint8)


CASES = [  # channels, alpha shape, quantization of x, y, alpha (scale, zero point)
    (24, [1, 1, 24], (0.05, -3), (0.04, 10), (0.004, 0)),
    (24, [24], (0.1, 20), (0.07, -30), (0.02, -7)),
    (7, [1, 1, 7], (0.02, 0), (0.03, -128), (0.01, 3)),
    (16, [1], (0.05, -3), (0.05, -3), (0.003, 0)),
    (33, [1, 1, 1, 33], (0.5, 127), (0.01, 0), (0.05, 1)),
]


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
@pytest.mark.parametrize("channels, alpha_shape, x_q, y_q, alpha_q", CASES, ids=str)
def test_matches_litert(dtype, channels, alpha_shape, x_q, y_q, alpha_q):
    shift = 0 if dtype == "int8" else 128
    rng = np.random.default_rng(channels)
    alpha = rng.integers(-128, 128, int(np.prod(alpha_shape))) + shift
    x_q, y_q, alpha_q = ((s, z + shift) for s, z in (x_q, y_q, alpha_q))
    data = prelu_model(dtype, channels, alpha_shape, alpha, x_q, y_q, alpha_q)
    assert_matches_litert(data, every_value(dtype, channels))


def test_one_slope_is_one_table():
    data = prelu_model("int8", 8, [1, 1, 8], [5] * 8, (0.05, 0), (0.05, 0), (0.01, 0))
    compiled = qnnweb.compiled.CompiledModel.from_bytes(qnnweb.compile(data))
    assert [step[0] for step in compiled.steps] == ["lut"]
    assert_matches_litert(data, every_value("int8", 8))


def test_slopes_over_pixels_are_refused():
    data = prelu_model("int8", 4, [16, 16, 4], np.zeros(16 * 16 * 4), (0.05, 0), (0.05, 0), (0.01, 0))
    with pytest.raises(UnsupportedModelError, match="varies over more than the channels"):
        qnnweb.load(data)
