"""TFLite TRANSPOSE_CONV (CartoonGAN-style generators, segmentation decoders, super-resolution) against
ai-edge-litert (XNNPACK's deconvolution): one-op int8 models written with tflite_builder, SAME and VALID
padding, strides 1-3 (unequal too), kernels smaller and larger than the stride, with and without
bias, weights per channel or per tensor, batch 2, a fused RELU; every variant, bit-exact. qnnweb runs it
as one convolution over the stride x stride output phases (passes.transpose_convs_as_convs)."""

import math
import struct

import numpy as np
import pytest
import qnnweb
from qnnweb_dev.litert_check import assert_matches_litert
from tflite.BuiltinOptions import BuiltinOptions
from tflite.Padding import Padding
from qnnweb_dev.tflite_builder import ModelBuilder
from importlib import import_module

OPTIONS = import_module("tflite.TransposeConvOptions")
ACTIVATIONS = import_module("tflite.ActivationFunctionType").ActivationFunctionType


def output_size(size, kernel, stride, padding):
    return size * stride if padding == "SAME" else (size - 1) * stride + kernel


def transpose_conv_model(x_shape, oc, kernel, stride, padding, bias=True, per_channel=True, activation="NONE",
                         seed=0):
    rng = np.random.default_rng(seed)
    n, h, w, ic = x_shape
    kh, kw = kernel
    sh, sw = stride
    out = [n, output_size(h, kh, sh, padding), output_size(w, kw, sw, padding), oc]
    x_scale, x_zp = 0.05, -5
    w_scales = list(rng.uniform(0.002, 0.01, oc)) if per_channel else [0.006]
    taps = max(1, math.ceil(kh / sh) * math.ceil(kw / sw))
    y_scale = float(x_scale * np.mean(w_scales) * 127 * 60 * math.sqrt(taps * ic) / 8)
    m = ModelBuilder()
    shape = m.constant_int32("output_shape", out)
    weights = m.tensor("w", [oc, kh, kw, ic], "int8", w_scales, [0] * len(w_scales),
                       data=rng.integers(-127, 128, (oc, kh, kw, ic)).astype(np.int8).tobytes())
    x = m.tensor("x", x_shape, "int8", [x_scale], [x_zp])
    inputs = [shape, weights, x]
    if bias:
        scales = [x_scale * s for s in w_scales]
        inputs.append(m.tensor("b", [oc], "int32", scales, [0] * len(scales),
                               data=rng.integers(-3000, 3000, oc).astype(np.int32).tobytes()))
    y = m.tensor("y", out, "int8", [y_scale], [3])

    def write(b):
        OPTIONS.Start(b)
        OPTIONS.AddPadding(b, getattr(Padding, padding))
        OPTIONS.AddStrideH(b, sh)
        OPTIONS.AddStrideW(b, sw)
        OPTIONS.AddFusedActivationFunction(b, getattr(ACTIVATIONS, activation))
        return OPTIONS.End(b)

    m.op("TRANSPOSE_CONV", inputs, [y], (BuiltinOptions.TransposeConvOptions, write))
    return m.build([x], [y]), x_shape


CASES = [  # input, output channels, kernel, stride, padding
    ([1, 4, 4, 8], 6, (3, 3), (2, 2), "SAME"),
    ([1, 5, 4, 8], 6, (4, 4), (2, 2), "SAME"),
    ([1, 5, 4, 8], 6, (4, 4), (2, 2), "VALID"),
    ([1, 6, 6, 16], 8, (2, 2), (2, 2), "VALID"),
    ([1, 6, 6, 5], 7, (3, 3), (1, 1), "SAME"),
    ([1, 4, 5, 4], 4, (1, 1), (2, 2), "VALID"),
    ([1, 3, 4, 6], 5, (5, 5), (3, 3), "SAME"),
    ([1, 4, 5, 6], 5, (3, 2), (2, 1), "SAME"),
    ([2, 3, 3, 12], 20, (3, 3), (2, 2), "VALID"),
]


@pytest.mark.parametrize("bias", [True, False], ids=["bias", "no-bias"])
@pytest.mark.parametrize("x_shape, oc, kernel, stride, padding", CASES, ids=str)
def test_matches_litert(x_shape, oc, kernel, stride, padding, bias):
    data, shape = transpose_conv_model(x_shape, oc, kernel, stride, padding, bias=bias, seed=oc + kernel[0])
    x = np.random.default_rng(sum(x_shape)).integers(-128, 128, shape).astype(np.int8)
    assert_matches_litert(data, x)


@pytest.mark.parametrize("activation", ["NONE", "RELU"])
def test_per_tensor_weights_and_activation(activation):
    data, shape = transpose_conv_model([1, 5, 5, 8], 8, (3, 3), (2, 2), "SAME", per_channel=False,
                                       activation=activation)
    x = np.random.default_rng(1).integers(-128, 128, shape).astype(np.int8)
    assert_matches_litert(data, x)
    assert "TRANSPOSE_CONV" in [op["type"] for op in qnnweb.load(data).info()["ops"]]


def test_huge_strides_are_refused_quickly():
    """A corrupt stride (here 1000) would make a million phases: refused by name, not computed."""
    data, shape = transpose_conv_model([1, 2, 2, 4], 4, (3, 3), (1000, 1000), "VALID", bias=False)
    with pytest.raises(qnnweb.UnsupportedModelError, match="at most 64"):
        qnnweb.load(data)
