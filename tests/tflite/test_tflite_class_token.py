"""A CONCATENATION with a constant input (a ViT's class token, concatenated before the patch tokens)
against ai-edge-litert, every variant, bit-exact: the importer writes the constant into an activation
(a BROADCAST_TO to its own shape), which CONCATENATION takes as it takes the others.
(ai-edge-quantizer gives every input the output's quantization; with another one, LiteRT's XNNPACK
delegate fails to prepare the model, so there is no reference to compare with.)"""

import numpy as np
import pytest
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb_dev.tflite_builder import ModelBuilder, options

TOKENS, CHANNELS = 16, 12
CLASS_TOKEN = np.arange(-90, 90, 15, dtype=np.int8)


def concat_options(axis):
    return options("ConcatenationOptions", Axis=axis)


def class_token_model(constant_q, tokens_q, out_q, constant_first=True, tokens=TOKENS):
    m = ModelBuilder()
    token = m.tensor("cls", [1, 1, CHANNELS], "int8", [constant_q[0]], [constant_q[1]], data=CLASS_TOKEN)
    x = m.tensor("x", [1, tokens, CHANNELS], "int8", [tokens_q[0]], [tokens_q[1]])
    y = m.tensor("y", [1, tokens + 1, CHANNELS], "int8", [out_q[0]], [out_q[1]])
    m.op("CONCATENATION", [token, x] if constant_first else [x, token], [y], concat_options(1))
    return m.build([x], [y])


@pytest.mark.parametrize("constant_first", [True, False], ids=["class-token-first", "constant-last"])
@pytest.mark.parametrize("quantization", [(0.03988, -1), (0.1, 127), (1 / 256, -128)], ids=str)
@pytest.mark.parametrize("tokens", [1, TOKENS])
def test_class_token_matches_litert(constant_first, quantization, tokens):
    x = np.random.default_rng(7).integers(-128, 128, [1, tokens, CHANNELS]).astype(np.int8)
    assert_matches_litert(class_token_model(quantization, quantization, quantization, constant_first, tokens), x)


def test_constant_between_inputs_on_the_last_axis_matches_litert():
    """A constant in the middle, along the channels (outer > 1: a strided slice of the output)."""
    m = ModelBuilder()
    a = m.tensor("a", [1, 5, 3], "int8", [0.05], [2])
    c = m.tensor("c", [1, 5, 2], "int8", [0.05], [2], data=np.arange(-50, 50, 10, dtype=np.int8))
    b = m.tensor("b", [1, 5, 4], "int8", [0.05], [2])
    y = m.tensor("y", [1, 5, 9], "int8", [0.05], [2])
    m.op("CONCATENATION", [a, c, b], [y], concat_options(-1))
    rng = np.random.default_rng(8)
    assert_matches_litert(m.build([a, b], [y]), rng.integers(-128, 128, [1, 5, 3]).astype(np.int8),
                          rng.integers(-128, 128, [1, 5, 4]).astype(np.int8))
