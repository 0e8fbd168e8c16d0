"""TFLite GELU (int8 and uint8, approximate or not) against ai-edge-litert's default kernels (XNNPACK does
not take it: TFLite's builtin kernel's lookup table, numerics/tflite.py gelu_table): every input value, at
random scales and zero points and at scale pairs whose results fall on rounding ties (GELU(x) = x for
large x), in every variant. Was refused ("op GELU")."""

import ctypes
import ctypes.util
import platform

import numpy as np
import pytest
from qnnweb.numerics import glibc
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



# RepViT-m0.9's GELU (the TFLite sweep's model built with seed 1): input 26 gives 46.499996 times the output
# scale's inverse with glibc's erfcf (rounded to 46, LiteRT's -75) and 46.5 with a correctly rounded one (-74)
GLIBC_ERFCF_CASES = [(0.04534031078219414, -1, 0.023419104516506195, -121)]


@pytest.mark.parametrize("params", GLIBC_ERFCF_CASES, ids=str)
def test_the_table_follows_glibcs_erfcf(params):
    data = gelu("int8", *params, False)
    assert_matches_litert(data, np.arange(-128, 128).astype(np.int8).reshape(1, 256))


def test_glibc_functions_are_the_system_libms():
    """numerics.glibc's erfcf, expf, expm1f and tanhf give this machine's libm's (glibc's, which LiteRT's kernels
    call) every result: arguments in each of their ranges, down to expf's subnormal results."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    for name, function, low, high in (("erfcf", glibc.erfcf, -11.0, 11.0), ("expf", glibc.expf, -104.0, 89.0),
                                      ("expm1f", glibc.expm1f, -90.0, 89.0), ("tanhf", glibc.tanhf, -12.0, 12.0)):
        theirs = getattr(libm, name)
        theirs.restype, theirs.argtypes = ctypes.c_float, [ctypes.c_float]
        rng = np.random.default_rng(len(name))
        xs = np.concatenate([rng.uniform(low, high, 20_000), rng.uniform(-1.3, 1.3, 5_000)]).astype(np.float32)
        differ = [x for x in xs.tolist() if function(x) != theirs(x)]
        assert not differ, (f"{name} differs from libm ({platform.libc_ver()}) at {len(differ)} arguments, "
                            f"{differ[:5]}: qnnweb follows glibc up to 2.40")
