"""Shape arithmetic on small constant integer tensors, evaluated at import.

Converters emit shape computations even when every shape is static: TFLite's ``SHAPE ->
STRIDED_SLICE -> PACK -> RESHAPE`` (Keras ``Flatten``), ONNX's ``Shape -> Gather -> Unsqueeze ->
Concat -> Reshape`` (torch's ``x.view(x.size(0), -1)``). The importers fold such a subgraph when its
inputs are constants or static shapes, so that only the RESHAPE remains. Values are ``Folded``:
a shape and the elements as Python ints (or floats), row-major. Every function raises ``FoldError``
when it cannot evaluate its inputs; the importer then keeps the op (and reports it if it cannot run).
"""

import struct

CODES = {"int32": "i", "int64": "q", "float32": "f", "uint8": "B", "int8": "b", "bool": "?", "float16": "e"}
MAX_ELEMENTS = 1 << 16   # shape tensors are tiny; refuse to fold anything large
# the most elements a folded result may have: an Expand / Tile / broadcast of small constants can ask
# for any size, and a crafted model must not make the importer allocate gigabytes
MAX_RESULT = 1 << 20


class FoldError(Exception):
    """The op cannot be evaluated here (not constant, not small, or a form this module does not do)."""


class Folded:
    def __init__(self, shape, values):
        self.shape, self.values = tuple(shape), list(values)
        if product(self.shape) != len(self.values):
            raise FoldError(f"{len(self.values)} values for shape {list(self.shape)}")

    @classmethod
    def from_bytes(cls, dtype, shape, data, limit=MAX_ELEMENTS):
        code = CODES.get(dtype)
        if code is None:
            raise FoldError(f"dtype {dtype}")
        count = product(shape)
        if count > limit or len(data) != count * struct.calcsize(code):
            raise FoldError("too large or wrong byte count")
        return cls(shape, struct.unpack(f"<{count}{code}", bytes(data)))

    def to_bytes(self, dtype):
        code = CODES.get(dtype)
        if code is None:
            raise FoldError(f"dtype {dtype}")
        values = [bool(v) for v in self.values] if dtype == "bool" else (
            [float(v) for v in self.values] if dtype in ("float32", "float16") else [int(v) for v in self.values])
        try:
            return struct.pack(f"<{len(values)}{code}", *values)
        except (struct.error, OverflowError) as e:
            raise FoldError(f"value out of range for {dtype}: {e}") from None


def product(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def _axis(axis, rank):
    if not -rank <= axis < rank:
        raise FoldError(f"axis {axis} for rank {rank}")
    return axis % rank


def shape_of(shape):
    return Folded((len(shape),), shape)


def _split(x, axis):
    """x as (outer, extent, inner) around ``axis``."""
    return product(x.shape[:axis]), x.shape[axis], product(x.shape[axis + 1:])


def concat(inputs, axis):
    rank = len(inputs[0].shape)
    axis = _axis(axis, rank)
    for x in inputs:
        if len(x.shape) != rank or any(x.shape[k] != inputs[0].shape[k] for k in range(rank) if k != axis):
            raise FoldError("shapes do not concatenate")
    shape = list(inputs[0].shape)
    shape[axis] = sum(x.shape[axis] for x in inputs)
    require_size(shape)
    outer = product(inputs[0].shape[:axis])
    values = []
    for o in range(outer):
        for x in inputs:
            _, extent, inner = _split(x, axis)
            values += x.values[o * extent * inner:(o + 1) * extent * inner]
    return Folded(shape, values)


def reshape(x, shape):
    return Folded(shape, x.values)


def expand_dims(x, axis):
    rank = len(x.shape) + 1
    axis = _axis(axis, rank)
    return Folded(x.shape[:axis] + (1,) + x.shape[axis:], x.values)


def stack(inputs, axis):
    """TFLite PACK / a Concat of Unsqueezed values: new axis ``axis``."""
    return concat([expand_dims(x, axis) for x in inputs], axis)


def gather(x, indices, axis):
    axis = _axis(axis, len(x.shape))
    require_size(x.shape[:axis] + indices.shape + x.shape[axis + 1:])
    outer, extent, inner = _split(x, axis)
    values = []
    for o in range(outer):
        for i in indices.values:
            i = int(i)
            if not -extent <= i < extent:
                raise FoldError(f"index {i} outside {extent}")
            i %= extent
            values += x.values[(o * extent + i) * inner:(o * extent + i + 1) * inner]
    return Folded(x.shape[:axis] + indices.shape + x.shape[axis + 1:], values)


def slice_1d(x, start, stop, step):
    """Python-style slicing of a 1-D value with already-clamped bounds."""
    if len(x.shape) != 1 or step == 0:
        raise FoldError("only 1-D slices")
    values = x.values[start:stop:step]
    return Folded((len(values),), values)


def clamp_bounds(start, stop, step, size):
    """ONNX Slice / TFLite STRIDED_SLICE bounds: negatives count from the end, then clamped."""
    if step == 0:
        raise FoldError("step 0")
    if start < 0:
        start += size
    if stop < 0:
        stop += size
    if step > 0:
        return min(max(start, 0), size), min(max(stop, 0), size)
    return min(max(start, -1), size - 1), min(max(stop, -1), size - 1)


def require_size(shape):
    """Refuse a result of more than MAX_RESULT elements before it is made."""
    count = product(shape)
    if count > MAX_RESULT:
        raise FoldError(f"its result would have {count} elements (shape {list(shape)}); at most {MAX_RESULT} "
                        "are computed at load time")
    return shape


def broadcast_shape(*shapes):
    """numpy's (multidirectional) broadcast of ``shapes``."""
    rank = max(len(s) for s in shapes)
    padded = [(1,) * (rank - len(s)) + tuple(s) for s in shapes]
    out = []
    for dims in zip(*padded):
        sizes = {d for d in dims if d != 1}
        if len(sizes) > 1:
            raise FoldError(f"shapes {' and '.join(str(list(s)) for s in shapes)} do not broadcast")
        out.append(sizes.pop() if sizes else 1)
    return require_size(tuple(out))


def select(x, positions):
    """The elements of ``x`` at ``positions`` (one list of indices per axis, row-major product): the
    one gather that broadcasting, Expand, Tile and Slice are made of."""
    flat = [0]
    stride = product(x.shape)
    for axis, picked in enumerate(positions):
        stride //= x.shape[axis] or 1
        flat = [i + p * stride for i in flat for p in picked]
    return Folded([len(p) for p in positions], [x.values[i] for i in flat])


def broadcast_to(x, shape):
    padded = (1,) * (len(shape) - len(x.shape)) + x.shape
    if padded == tuple(shape):
        return Folded(shape, x.values)
    return select(Folded(padded, x.values), [range(d) if d == n else [0] * n for d, n in zip(padded, shape)])


def elementwise(function, *inputs):
    """``function`` of the inputs' elements, numpy-broadcast."""
    shape = broadcast_shape(*(x.shape for x in inputs))
    columns = [broadcast_to(x, shape).values for x in inputs]
    return Folded(shape, [function(*args) for args in zip(*columns)])


def transpose(x, perm):
    rank = len(x.shape)
    if sorted(perm) != list(range(rank)):
        raise FoldError(f"perm {list(perm)} for rank {rank}")
    strides = [product(x.shape[k + 1:]) for k in range(rank)]
    flat = [0]
    for axis in perm:
        flat = [i + j * strides[axis] for i in flat for j in range(x.shape[axis])]
    return Folded([x.shape[axis] for axis in perm], [x.values[i] for i in flat])


def tile(x, repeats):
    if len(repeats) != len(x.shape) or any(r < 0 for r in repeats):
        raise FoldError(f"repeats {list(repeats)} for shape {list(x.shape)}")
    require_size([d * r for d, r in zip(x.shape, repeats)])
    return select(x, [list(range(d)) * r for d, r in zip(x.shape, repeats)])


def int_div(p, q):
    """Integer division rounding toward zero (TFLite DIV / ONNX Div on integers)."""
    if q == 0:
        raise FoldError("division by zero")
    r = abs(p) // abs(q)
    return r if (p >= 0) == (q > 0) else -r


ARITHMETIC = {
    "ADD": lambda p, q: p + q, "SUB": lambda p, q: p - q, "MUL": lambda p, q: p * q, "DIV": int_div,
}
