"""The copy_strided record (TRANSPOSE, SLICE, STRIDED_SLICE, SPLIT, GATHER): random dimensions, input
strides of either sign with an offset, output strides of any dimension order, 1-, 2- and 4-byte
elements, read from the arena or from constant data, every variant against numpy's index arithmetic. The ops
built on it: test_slicing.py."""

import numpy as np
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

import harness as H
from test_abi import Kernel

RANK = 6
# the largest output, 5^6 four-byte elements after a gap of 50, fits behind OUTPUT_AT
ARENA, INPUT_BYTES, OUTPUT_AT = 1 << 17, 1 << 14, 1 << 15


@st.composite
def copies(draw):
    dims = [draw(st.integers(1, 5)) for _ in range(RANK)]
    element_bytes = draw(st.sampled_from([1, 2, 4]))
    input_strides = [draw(st.integers(-40, 40)) for _ in range(RANK)]
    low = sum(min(0, (d - 1) * s) for d, s in zip(dims, input_strides))
    high = sum(max(0, (d - 1) * s) for d, s in zip(dims, input_strides))
    room = INPUT_BYTES // element_bytes - (high - low) - 1
    input_offset = -low + draw(st.integers(0, max(0, min(room, 100))))
    # the output: every element written once, its dimensions in any order, after a gap
    order = draw(st.permutations(range(RANK)))
    output_strides, step = [0] * RANK, 1
    for k in reversed(order):
        output_strides[k] = step
        step *= dims[k]
    output_offset = draw(st.integers(0, 50))
    return (dims, element_bytes, input_strides, input_offset, output_strides, output_offset, draw(H.seeds),
            draw(st.booleans()))


def indices(dims, strides, offset):
    """The element index of every position of ``dims`` (row-major), as numpy computes it."""
    grids = np.meshgrid(*[np.arange(d) for d in dims], indexing="ij")
    return offset + sum(g * s for g, s in zip(grids, strides)).reshape(-1)


@pytest.mark.parametrize("variant", H.VARIANTS)
@settings(max_examples=H.examples(150))
@given(case=copies())
# the largest output the strategy draws (CI once drew it; the arena was too small for it then)
@example(case=([5] * RANK, 4, [0] * RANK, 0, [3125, 625, 125, 25, 5, 1], 50, 0, False))
def test_copy_strided_matches_numpy(variant, case):
    dims, eb, input_strides, input_offset, output_strides, output_offset, seed, from_constant = case
    assert max(indices(dims, input_strides, input_offset)) < INPUT_BYTES // eb
    assert OUTPUT_AT + (output_offset + int(np.prod(dims))) * eb <= ARENA
    dtype = {1: np.int8, 2: np.int16, 4: np.int32}[eb]
    rng = np.random.default_rng(seed)
    source = rng.integers(np.iinfo(dtype).min, np.iinfo(dtype).max, INPUT_BYTES // eb, dtype=dtype, endpoint=True)
    k = Kernel(variant, arena_bytes=ARENA)
    arena = k.host.call("qnn_plan_arena", k.plan)
    k.host.write(arena, source.tobytes())
    k.host.write(arena + OUTPUT_AT, bytes(ARENA - OUTPUT_AT))
    # from a constant: the source copied at qnn_plan_add (the staging bytes overwritten after it)
    constant = k.constant(source.tobytes(), 0) if from_constant else 0
    fields = dict(input=OUTPUT_AT if from_constant else 0, output=OUTPUT_AT, element_bytes=eb,
                  input_offset=input_offset, output_offset=output_offset, constant=constant)
    for i in range(RANK):
        fields[f"dim{i}"], fields[f"input_stride{i}"], fields[f"output_stride{i}"] = (
            dims[i], input_strides[i], output_strides[i])
    assert k.add_record("copy_strided", **fields) == 0, k.message()
    if from_constant:
        k.constant(bytes(INPUT_BYTES), 0)
        k.host.write(arena, bytes(INPUT_BYTES))
    assert k.run() == 0
    written = output_offset + int(np.prod(dims))
    got = np.frombuffer(k.host.read(arena + OUTPUT_AT, written * eb), dtype)
    expected = np.zeros(written, dtype)
    expected[indices(dims, output_strides, output_offset)] = source[indices(dims, input_strides, input_offset)]
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("variant", H.VARIANTS)
@pytest.mark.parametrize("dims, input_strides, output_strides", [
    # one block of many rows, split among threads by rows: an RGB image NCHW -> NHWC, a channel slice
    ([1, 1, 1, 1, 5500, 3], [0, 0, 0, 0, 1, 5500], [0, 0, 0, 0, 3, 1]),
    ([1, 1, 1, 1, 4099, 4], [0, 0, 0, 0, 8, 1], [0, 0, 0, 0, 4, 1]),
    # three blocks (fewer than 4 per thread) of strided rows
    ([1, 1, 1, 3, 2731, 2], [0, 0, 0, 1, 9, 3], [0, 0, 0, 5462, 2, 1]),
])
@pytest.mark.parametrize("threads", [1, 2, 3])
def test_large_copies_with_few_blocks_match_numpy(variant, dims, input_strides, output_strides, threads):
    """Copies of 16384 elements or more in fewer blocks than 4 per thread: their rows are split too."""
    rng = np.random.default_rng(5)
    source = rng.integers(-128, 128, 1 << 16, dtype=np.int8)
    k = Kernel(variant, arena_bytes=1 << 17, threads=threads)
    arena = k.host.call("qnn_plan_arena", k.plan)
    k.host.write(arena, source.tobytes())
    fields = dict(input=0, output=1 << 16, element_bytes=1, input_offset=0, output_offset=0, constant=0)
    for i in range(RANK):
        fields[f"dim{i}"], fields[f"input_stride{i}"], fields[f"output_stride{i}"] = (
            dims[i], input_strides[i], output_strides[i])
    assert k.add_record("copy_strided", **fields) == 0, k.message()
    assert k.run() == 0
    count = int(np.prod(dims))
    got = np.frombuffer(k.host.read(arena + (1 << 16), count), np.int8)
    expected = np.empty(count, np.int8)
    expected[indices(dims, output_strides, 0)] = source[indices(dims, input_strides, 0)]
    np.testing.assert_array_equal(got, expected)
