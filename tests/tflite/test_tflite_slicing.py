"""TFLite SLICE, STRIDED_SLICE (masks, ellipsis, shrunk and new axes, negative strides, offset), SPLIT,
SPLIT_V, GATHER with constant indices, and rank-5/6 TRANSPOSE (litert-torch's PixelShuffle) against
ai-edge-litert: one-op int8 models written with tflite_builder, every variant, bit-exact. Also the
contiguous slices that share their input's memory (no copy), chained and read by later ops."""

import struct

import numpy as np
import pytest
import qnnweb
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb import UnsupportedModelError
from qnnweb_dev.tflite_builder import ModelBuilder, options

Q = ([0.05], [-3])


def rng_input(shape, seed=0):
    return np.random.default_rng(seed).integers(-128, 128, shape).astype(np.int8)


def one_op(op_type, shape, out_shapes, constants, opts=None, constants_first=False):
    m = ModelBuilder()
    x = m.tensor("x", shape, "int8", *Q)
    extra = [m.constant_int32(f"c{k}", v) if isinstance(v, list) else
             m.tensor(f"c{k}", [], "int32", data=struct.pack("<i", v)) for k, v in enumerate(constants)]
    ys = [m.tensor(f"y{k}", s, "int8", *Q) for k, s in enumerate(out_shapes)]
    m.op(op_type, extra + [x] if constants_first else [x] + extra, ys, opts)
    return m.build([x], ys)


SLICES = [([1, 10, 10, 8], [0, 2, 3, 1], [1, 5, -1, 4]), ([4, 20, 6], [1, 0, 0], [2, 20, 6]),
          ([2, 7, 33], [1, 3, 0], [1, 1, 33]), ([1, 6, 6, 16], [0, 0, 0, 8], [-1, -1, -1, 8]), ([9], [4], [5])]


@pytest.mark.parametrize("shape, begin, size", SLICES, ids=str)
def test_slice(shape, begin, size):
    out = [d - b if n == -1 else n for d, b, n in zip(shape, begin, size)]
    assert_matches_litert(one_op("SLICE", shape, [out], [begin, size]), rng_input(shape))


# (shape, begin, end, strides, masks): numpy's x[...] for the same spec in the comment
STRIDED = [
    ([1, 8, 8, 16], [0, 0, 0, 0], [1, 8, 8, 8], [1, 1, 1, 1], {}),                       # x[..., :8]
    ([1, 8, 8, 16], [0, 1, 0, 4], [1, 7, 8, 12], [1, 2, 1, 1], {}),                      # x[:, 1:7:2, :, 4:12]
    ([1, 8, 8, 16], [0, 7, 0, 0], [1, 0, 8, 16], [1, -1, 1, 1], {"EndMask": 2}),          # x[:, ::-1]
    ([1, 8, 8, 16], [0, -1, 6, 15], [1, -9, 1, 0], [1, -2, -3, -4], {}),                  # reversed, strided
    ([1, 8, 8, 16], [0, 0, 0, 3], [1, 8, 8, 4], [1, 1, 1, 1], {"ShrinkAxisMask": 8}),     # x[..., 3]
    ([1, 8, 8, 16], [0, 2], [0, 10], [1, 3], {"EllipsisMask": 1}),                        # x[..., 2:10:3]
    ([1, 8, 8, 16], [0, 2, 1, 0], [1, 3, 4, 16], [1, 1, 1, 1], {"Offset": True}),         # sizes from begin
    ([6, 40], [5, 0], [0, 0], [-1, -3], {"BeginMask": 2, "EndMask": 3}),                  # x[::-1, ::-3]
    ([3, 5, 7], [1, 0, 2], [3, 5, 3], [1, 1, 1], {"BeginMask": 2, "EndMask": 2,
                                                  "ShrinkAxisMask": 4}),                 # x[1:3, :, 2]
    ([2, 6, 6, 4], [1, -4, 0, 0], [2, 100, 6, 4], [1, 1, 1, 1], {}),                     # clamped end
]


@pytest.mark.parametrize("shape, begin, end, strides, masks", STRIDED, ids=str)
def test_strided_slice(shape, begin, end, strides, masks):
    python = {"BeginMask": "begin_mask", "EndMask": "end_mask", "EllipsisMask": "ellipsis_mask",
              "ShrinkAxisMask": "shrink_axis_mask", "Offset": "offset"}
    from qnnweb.ops.slicing import strided_slice_window
    *_, out = strided_slice_window(shape, begin, end, strides, {python[k]: v for k, v in masks.items()})
    model = one_op("STRIDED_SLICE", shape, [out], [begin, end, strides], options("StridedSliceOptions", **masks))
    assert_matches_litert(model, rng_input(shape, len(begin)))


@pytest.mark.parametrize("shape, axis, parts", [([1, 6, 6, 16], 3, 2), ([1, 6, 4, 5], 1, 3), ([2, 5, 5, 8], 0, 2),
                                                ([1, 4, 4, 12], -1, 4)], ids=str)
def test_split(shape, axis, parts):
    out = [d // parts if k == axis % len(shape) else d for k, d in enumerate(shape)]
    model = one_op("SPLIT", shape, [out] * parts, [[axis]], options("SplitOptions", NumSplits=parts),
                   constants_first=True)
    assert_matches_litert(model, rng_input(shape))


@pytest.mark.parametrize("shape, axis, sizes", [([1, 4, 4, 16], 3, [3, -1, 5]), ([1, 9, 4, 6], 1, [2, 7]),
                                                ([1, 4, 4, 16], -1, [16])], ids=str)
def test_split_v(shape, axis, sizes):
    real = [shape[axis] - (sum(sizes) + 1) if s == -1 else s for s in sizes]
    outs = [[s if k == axis % len(shape) else d for k, d in enumerate(shape)] for s in real]
    model = one_op("SPLIT_V", shape, outs, [sizes, [axis]], options("SplitVOptions", NumSplits=len(sizes)))
    assert_matches_litert(model, rng_input(shape))


GATHERS = [([1, 6, 6, 10], 3, [0, 2, 4, 6, 8]), ([1, 6, 6, 10], 3, [9, 0, 3, 3, 1, 2]), ([1, 6, 6, 10], 1, 4),
           ([5, 7], 0, [[4, 0], [1, 1]]), ([2, 3, 40], 2, list(range(39, -1, -2)))]


@pytest.mark.parametrize("shape, axis, indices", GATHERS, ids=str)
def test_gather(shape, axis, indices):
    index_shape = list(np.shape(indices))
    out = shape[:axis] + index_shape + shape[axis + 1:]
    m = ModelBuilder()
    x = m.tensor("x", shape, "int8", *Q)
    flat = list(np.ravel(indices))
    i = m.tensor("indices", index_shape, "int32", data=struct.pack(f"<{len(flat)}i", *flat))
    y = m.tensor("y", out, "int8", *Q)
    m.op("GATHER", [x, i], [y], options("GatherOptions", Axis=axis))
    assert_matches_litert(m.build([x], [y]), rng_input(shape))


def test_pixel_shuffle_as_litert_torch_writes_it():
    """RESHAPE [1,H,W,C*r*r] -> [1,H,W,C,r,r], TRANSPOSE (0,1,4,2,5,3), RESHAPE [1,H*r,W*r,C]: a rank-6
    transpose whose moving dimensions merge to 5."""
    h, w, c, r = 5, 6, 3, 2
    m = ModelBuilder()
    x = m.tensor("x", [1, h, w, c * r * r], "int8", *Q)
    s1 = m.constant_int32("s1", [1, h, w, c, r, r])
    a = m.tensor("a", [1, h, w, c, r, r], "int8", *Q)
    perm = m.constant_int32("perm", [0, 1, 4, 2, 5, 3])
    b = m.tensor("b", [1, h, r, w, r, c], "int8", *Q)
    s2 = m.constant_int32("s2", [1, h * r, w * r, c])
    y = m.tensor("y", [1, h * r, w * r, c], "int8", *Q)
    m.op("RESHAPE", [x, s1], [a])
    m.op("TRANSPOSE", [a, perm], [b])
    m.op("RESHAPE", [b, s2], [y])
    x_value = rng_input([1, h, w, c * r * r])
    assert_matches_litert(m.build([x], [y]), x_value)
    expected = x_value.reshape(1, h, w, c, r, r).transpose(0, 1, 4, 2, 5, 3).reshape(1, h * r, w * r, c)
    np.testing.assert_array_equal(qnnweb.load(m.build([x], [y])).run(x_value)[0], expected)


def test_contiguous_slices_share_memory_and_stay_live():
    """SPLIT on the batch axis and a SLICE of whole rows are no copies: their outputs lie inside the
    input's bytes. Each is then read by a TRANSPOSE while the other is still needed, and one is a model
    output next to the input's own TRANSPOSE."""
    m = ModelBuilder()
    x = m.tensor("x", [2, 4, 6, 8], "int8", *Q)
    axis = m.tensor("axis", [], "int32", data=struct.pack("<i", 0))
    a, b = (m.tensor(n, [1, 4, 6, 8], "int8", *Q) for n in ("a", "b"))
    m.op("SPLIT", [axis, x], [a, b], options("SplitOptions", NumSplits=2))
    begin, size = m.constant_int32("begin", [0, 1, 0, 0]), m.constant_int32("size", [1, 2, 6, 8])
    rows = m.tensor("rows", [1, 2, 6, 8], "int8", *Q)
    m.op("SLICE", [b, begin, size], [rows])
    perm = m.constant_int32("perm", [0, 3, 1, 2])
    ta, trows = m.tensor("ta", [1, 8, 4, 6], "int8", *Q), m.tensor("trows", [1, 8, 2, 6], "int8", *Q)
    m.op("TRANSPOSE", [rows, perm], [trows])
    m.op("TRANSPOSE", [a, perm], [ta])
    data = m.build([x], [ta, trows, rows])
    compiled = qnnweb.compiled.CompiledModel.from_bytes(qnnweb.compile(data))
    assert [step[0] for step in compiled.steps] == ["copy_strided", "copy_strided"]   # the two transposes
    assert_matches_litert(data, rng_input([2, 4, 6, 8]))


@pytest.mark.parametrize("op_type, constants, out, message", [
    ("SLICE", [[0, 0, 0, 0], [1, 5, 4, 4]], [1, 5, 4, 4], "leave dimension 1"),
    ("GATHER", [[7]], [1, 4, 4, 1], "outside dimension 3"),
    ("GATHER", [[-1]], [1, 4, 4, 1], "outside dimension 3"),   # ai-edge-litert refuses it too
    ("STRIDED_SLICE", [[0, 0, 0, 0], [1, 4, 4, 4], [1, 1, 0, 1]], [1, 4, 4, 4], "stride of 0"),
])
def test_bad_slices_are_reported(op_type, constants, out, message):
    m = ModelBuilder()
    x = m.tensor("x", [1, 4, 4, 4], "int8", *Q)
    extra = [m.constant_int32(f"c{k}", v) for k, v in enumerate(constants)]
    y = m.tensor("y", out, "int8", *Q)
    m.op(op_type, [x] + extra, [y], options("GatherOptions", Axis=3) if op_type == "GATHER" else None)
    with pytest.raises(UnsupportedModelError, match=message):
        qnnweb.load(m.build([x], [y]))


MIRROR = [([1, 5, 6, 3], [[0, 0], [2, 1], [1, 3], [0, 0]]), ([4, 5, 6], [[1, 2], [3, 0], [2, 2]]),
          ([1, 4, 4, 8], [[0, 0], [1, 1], [1, 1], [0, 0]]), ([1, 3, 3, 5], [[0, 0], [0, 0], [0, 0], [2, 2]])]


@pytest.mark.parametrize("mode", ["REFLECT", "SYMMETRIC"])
@pytest.mark.parametrize("shape, paddings", MIRROR, ids=str)
def test_mirror_pad(mode, shape, paddings):
    """Each dimension before / inside / after: one strided copy per combination, read backwards."""
    from tflite.MirrorPadMode import MirrorPadMode
    if mode == "REFLECT" and any(max(p) > d - 1 for p, d in zip(paddings, shape)):
        pytest.fail("a case outside TFLite's limits")
    out = [d + a + b for d, (a, b) in zip(shape, paddings)]
    m = ModelBuilder()
    x = m.tensor("x", shape, "int8", *Q)
    p = m.tensor("paddings", [len(shape), 2], "int32", data=np.array(paddings, np.int32).tobytes())
    y = m.tensor("y", out, "int8", *Q)
    m.op("MIRROR_PAD", [x, p], [y], options("MirrorPadOptions", Mode=getattr(MirrorPadMode, mode)))
    x_value = rng_input(shape)
    assert_matches_litert(m.build([x], [y]), x_value)
    expected = np.pad(x_value, paddings, mode=mode.lower())
    np.testing.assert_array_equal(qnnweb.load(m.build([x], [y])).run(x_value)[0], expected)


def test_mirror_pad_beyond_the_edge_is_refused():
    from tflite.MirrorPadMode import MirrorPadMode
    m = ModelBuilder()
    x = m.tensor("x", [1, 3, 3, 2], "int8", *Q)
    p = m.tensor("paddings", [4, 2], "int32", data=np.array([[0, 0], [3, 0], [0, 0], [0, 0]], np.int32).tobytes())
    y = m.tensor("y", [1, 6, 3, 2], "int8", *Q)
    m.op("MIRROR_PAD", [x, p], [y], options("MirrorPadOptions", Mode=MirrorPadMode.REFLECT))
    with pytest.raises(UnsupportedModelError, match="padding"):
        qnnweb.load(m.build([x], [y]))


def test_channel_shuffle_is_one_strided_copy():
    """ShuffleNet's channel shuffle, RESHAPE [N,H,W,g*k] -> [N,H,W,g,k], TRANSPOSE (0,1,2,4,3), RESHAPE
    back: the reshapes share memory, the transpose is one strided copy."""
    g, k = 3, 4
    m = ModelBuilder()
    x = m.tensor("x", [1, 5, 6, g * k], "int8", *Q)
    a = m.tensor("a", [1, 5, 6, g, k], "int8", *Q)
    b = m.tensor("b", [1, 5, 6, k, g], "int8", *Q)
    y = m.tensor("y", [1, 5, 6, g * k], "int8", *Q)
    m.op("RESHAPE", [x, m.constant_int32("s1", [1, 5, 6, g, k])], [a])
    m.op("TRANSPOSE", [a, m.constant_int32("perm", [0, 1, 2, 4, 3])], [b])
    m.op("RESHAPE", [b, m.constant_int32("s2", [1, 5, 6, g * k])], [y])
    data = m.build([x], [y])
    compiled = qnnweb.compiled.CompiledModel.from_bytes(qnnweb.compile(data))
    assert [step[0] for step in compiled.steps] == ["copy_strided"]
    x_value = rng_input([1, 5, 6, g * k])
    assert_matches_litert(data, x_value)
    expected = x_value.reshape(1, 5, 6, g, k).transpose(0, 1, 2, 4, 3).reshape(1, 5, 6, g * k)
    np.testing.assert_array_equal(qnnweb.load(data).run(x_value)[0], expected)
