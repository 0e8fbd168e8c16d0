"""TFLite's int8 SOFTMAX against ai-edge-litert, bit-exact in every variant.

LiteRT runs it on its builtin kernel (XNNPACK's delegate takes SOFTMAX in float only): the table
expf(-input_scale * beta * (max - x)), a float32 sum of the row, the multiplier 1 / (sum * output_scale)
and std::round (halves away from zero). Rounding the product another way (1 / output_scale / sum, to
even) moves an output by 1 now and then: 2 of 12,675 in DeiT-tiny's seventh attention on a photo, which
then grew to 5 quanta at its logits.
"""

import numpy as np
import pytest
import qnnweb
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb_dev.tflite_builder import ModelBuilder, options


def softmax_model(shape, x_scale, x_zp, y_scale, y_zp, beta=1.0):
    m = ModelBuilder()
    x = m.tensor("x", list(shape), "int8", [x_scale], [x_zp])
    y = m.tensor("y", list(shape), "int8", [y_scale], [y_zp])
    m.op("SOFTMAX", [x], [y], options("SoftmaxOptions", Beta=beta))
    return m.build([x], [y])


def attention_scores(rng, shape, spread):
    """Rows as attention's scores are: a bulk around a random level, a few larger values."""
    level = rng.integers(-100, 60, size=shape[:-1] + (1,))
    x = level + rng.normal(0, spread, size=shape) + (rng.random(shape) < 0.05) * rng.integers(0, 90, size=shape)
    return np.clip(np.rint(x), -128, 127).astype(np.int8)


# (input scale, zero point): DeiT-tiny's and MobileViT-xxs' attention (ai-edge-quantizer's output
# quantization 1/256, -128), EfficientFormerV2-s0's coarser one
ATTENTION = [((1, 3, 65, 65), 0.0045110974460840225, 9), ((1, 3, 65, 65), 0.004150347784161568, -5),
             ((4, 4, 64, 64), 0.0012250208528712392, 1), ((1, 8, 16, 64), 0.058762144297361374, -8)]


@pytest.mark.parametrize("shape, x_scale, x_zp", ATTENTION, ids=str)
def test_attention_softmax_matches_litert(shape, x_scale, x_zp):
    rng = np.random.default_rng(shape[-1])
    for spread in (6, 20, 45):
        assert_matches_litert(softmax_model(shape, x_scale, x_zp, 1 / 256, -128), attention_scores(rng, shape, spread))


# A row of DeiT-tiny's seventh attention on a photo (input scale 0.0045110974460840225): two of its
# outputs are 4.5 exactly before rounding, which LiteRT rounds to 5
DEIT_TIE_ROW = [-2, 24, 44, 14, 10, 58, 43, -1, 5, 30, 46, 35, 46, 59, 30, 39, 37, 38, 32, 5, -1, 22, 35, 0, 10,
                51, 23, 29, -6, 35, 28, -10, 22, 12, 60, 21, 32, 23, 62, 59, 37, 18, 24, 49, 47, 27, 57, 41, 20,
                39, 28, 15, 29, 25, 12, 47, 36, 24, 22, 40, 24, 6, 55, 12, 36]


def test_a_half_rounds_away_from_zero_as_litert():
    x = np.array([DEIT_TIE_ROW], np.int8)
    model = softmax_model(x.shape, 0.0045110974460840225, 9, 1 / 256, -128)
    assert_matches_litert(model, x)
    assert (qnnweb.load(model).run(x)[0][0, [13, 39]] == -123).all()   # 4.5 + zp -128, away from zero


# LiteRT takes an int8 output quantized as 1/256 (within 0.1%), zero point -128, only
@pytest.mark.parametrize("x_scale, y_scale, beta",
                         [(0.1, 1 / 256, 1.0), (0.02, 1 / 256, 1.0), (0.25, 1 / 256, 0.5), (0.004, 1 / 256, 2.0),
                          (1.3, 1 / 256 * 1.0009, 1.0), (0.0123, 1 / 256 * 0.9992, 0.3)], ids=str)
def test_softmax_matches_litert_on_every_input_value(x_scale, y_scale, beta):
    """Rows holding every int8 value, one-hot rows and random rows of 256 columns, rows of 512 equal values
    (each output 0.5 before rounding, where the output scale is 1/256), other betas and output scales."""
    rng = np.random.default_rng(int(x_scale * 1000))
    every = np.stack([rng.permutation(np.arange(-128, 128)) for _ in range(6)])
    one_hot = np.full((2, 256), -128)
    one_hot[:, 7] = 127
    x = np.concatenate([every, one_hot, rng.integers(-128, 128, (50, 256))]).astype(np.int8)
    assert_matches_litert(softmax_model(x.shape, x_scale, 3, y_scale, -128, beta), x)
    equal = np.repeat(rng.integers(-128, 128, (4, 1)), 512, axis=1).astype(np.int8)
    assert_matches_litert(softmax_model(equal.shape, x_scale, 3, y_scale, -128, beta), equal)


def test_output_scale_below_2_to_the_minus_30_is_refused():
    """LiteRT's kernel converts up to 1 / output_scale to int32 unchecked (LiteRT itself takes 1/256 only)."""
    with pytest.raises(qnnweb.UnsupportedModelError, match="below 2"):
        qnnweb.load(softmax_model((2, 10), 0.1, 0, 2.0 ** -31, 0))
