"""TFLite DEPTH_TO_SPACE and SPACE_TO_DEPTH (super-resolution heads, pixel shuffles, space-to-depth
stems) against ai-edge-litert: one-op int8 models written with tflite_builder, and the two chained
(a round trip), in every variant."""

from importlib import import_module

import numpy as np
import pytest
import qnnweb
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb import UnsupportedModelError
from tflite.BuiltinOptions import BuiltinOptions
from qnnweb_dev.tflite_builder import ModelBuilder

OPTIONS = {"DEPTH_TO_SPACE": (BuiltinOptions.DepthToSpaceOptions, import_module("tflite.DepthToSpaceOptions")),
           "SPACE_TO_DEPTH": (BuiltinOptions.SpaceToDepthOptions, import_module("tflite.SpaceToDepthOptions"))}


def block_options(op_type, block):
    kind, module = OPTIONS[op_type]

    def write(b):
        module.Start(b)
        module.AddBlockSize(b, block)
        return module.End(b)

    return kind, write


def out_shape(op_type, shape, block):
    n, h, w, c = shape
    if op_type == "DEPTH_TO_SPACE":
        return [n, h * block, w * block, c // (block * block)]
    return [n, h // block, w // block, c * block * block]


def one_op(op_type, shape, block):
    m = ModelBuilder()
    x = m.tensor("x", shape, "int8", [0.05], [-3])
    y = m.tensor("y", out_shape(op_type, shape, block), "int8", [0.05], [-3])
    m.op(op_type, [x], [y], block_options(op_type, block))
    return m.build([x], [y])


CASES = [("DEPTH_TO_SPACE", [1, 5, 7, 12], 2), ("DEPTH_TO_SPACE", [2, 3, 4, 27], 3), ("DEPTH_TO_SPACE", [1, 8, 8, 64], 4),
         ("DEPTH_TO_SPACE", [1, 4, 4, 3], 1), ("SPACE_TO_DEPTH", [1, 8, 6, 3], 2), ("SPACE_TO_DEPTH", [2, 9, 6, 5], 3),
         ("SPACE_TO_DEPTH", [1, 16, 16, 16], 4)]


@pytest.mark.parametrize("op_type, shape, block", CASES, ids=str)
def test_matches_litert(op_type, shape, block):
    x = np.random.default_rng(block).integers(-128, 128, shape).astype(np.int8)
    assert_matches_litert(one_op(op_type, shape, block), x)


def test_space_to_depth_then_depth_to_space_is_the_identity():
    m = ModelBuilder()
    x = m.tensor("x", [1, 12, 8, 4], "int8", [0.1], [0])
    s = m.tensor("s", [1, 6, 4, 16], "int8", [0.1], [0])
    y = m.tensor("y", [1, 12, 8, 4], "int8", [0.1], [0])
    m.op("SPACE_TO_DEPTH", [x], [s], block_options("SPACE_TO_DEPTH", 2))
    m.op("DEPTH_TO_SPACE", [s], [y], block_options("DEPTH_TO_SPACE", 2))
    data = np.random.default_rng(0).integers(-128, 128, [1, 12, 8, 4]).astype(np.int8)
    assert_matches_litert(m.build([x], [y]), data)
    for variant in qnnweb.VARIANTS:
        np.testing.assert_array_equal(qnnweb.load(m.build([x], [y]), variant).run(data)[0], data)


@pytest.mark.parametrize("op_type, shape, block, words", [
    ("DEPTH_TO_SPACE", [1, 4, 4, 12], 0, "block_size is 0"),
    ("DEPTH_TO_SPACE", [1, 4, 4, 12], 3, "not a multiple of block_size"),
    ("SPACE_TO_DEPTH", [1, 5, 4, 3], 2, "multiples of block_size"),
])
def test_bad_block_sizes_are_refused(op_type, shape, block, words):
    m = ModelBuilder()
    x = m.tensor("x", shape, "int8", [0.05], [-3])
    y = m.tensor("y", [1, 2, 2, 3], "int8", [0.05], [-3])
    m.op(op_type, [x], [y], block_options(op_type, block))
    with pytest.raises(UnsupportedModelError, match=words):
        qnnweb.load(m.build([x], [y]))
