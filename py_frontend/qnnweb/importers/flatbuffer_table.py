"""Flatbuffers tables read with one ``struct`` call per field.

The generated readers of PyPI ``tflite`` (over ``flatbuffers.table.Table``) spend several Python calls
on each field (number-type checks, a fresh object per sub-table): ~0.1 ms per tensor or operator, 12 s
for a 100,000-op model. The importer reads its hot tables (tensors, operators, buffers) with this;
the op options keep the generated classes, which name every field, reading through this (``_tab``).

Slots are the vtable offsets of schema.fbs fields: 4 + 2 * field id. Every read is bounds-checked by
``struct`` (``struct.error`` / ``IndexError`` on a corrupt file, which the importer reports).
"""

import struct

from ..errors import ModelError

_I32 = struct.Struct("<i").unpack_from
_U32 = struct.Struct("<I").unpack_from
_U16 = struct.Struct("<H").unpack_from
_SLOTS = [struct.Struct(f"<{n}H") for n in range(64)]  # a vtable's first n field offsets, in one call


class Table:
    __slots__ = ("bytes", "pos", "_vtable", "_vtable_size")

    def __init__(self, buf, pos):
        if not 0 <= pos <= len(buf) - 4:
            raise IndexError(f"table at {pos} outside the buffer")
        vtable = pos - _I32(buf, pos)[0]
        if not 0 <= vtable <= len(buf) - 4:
            raise IndexError(f"vtable at {vtable} outside the buffer")
        self.bytes, self.pos, self._vtable = buf, pos, vtable
        self._vtable_size = _U16(buf, vtable)[0]

    @classmethod
    def root(cls, buf):
        return cls(buf, _U32(buf, 0)[0])

    def _field(self, slot):
        """Position of the field's data, or 0 when it is absent (its default applies)."""
        if slot >= self._vtable_size:
            return 0
        o = _U16(self.bytes, self._vtable + slot)[0]
        return self.pos + o if o else 0

    def scalar(self, slot, fmt, default=0):
        at = self._field(slot)
        return struct.unpack_from(fmt, self.bytes, at)[0] if at else default

    def table(self, slot):
        at = self._field(slot)
        return Table(self.bytes, at + _U32(self.bytes, at)[0]) if at else None

    def _vector(self, slot):
        at = self._field(slot)
        if not at:
            return 0, 0
        start = at + _U32(self.bytes, at)[0]
        return start + 4, _U32(self.bytes, start)[0]

    # What the generated classes of ``tflite`` call on their ``_tab`` (flatbuffers.table.Table's API) to
    # read scalar fields: the op options keep their named accessors, at this reader's speed.
    @property
    def Pos(self):
        return self.pos

    def Offset(self, slot):
        at = self._field(slot)
        return at - self.pos if at else 0

    def Get(self, flags, at):
        return flags.packer_type.unpack_from(self.bytes, at)[0]

    def String(self, at):
        return string_at(self.bytes, at)

    def scalars(self, slot, fmt, what, limit=1 << 26):
        """A vector of scalars (struct format ``fmt``), or () when absent."""
        start, n = self._vector(slot)
        _check_count(n, what, limit)
        return struct.unpack_from(f"<{n}{fmt}", self.bytes, start) if n else ()

    def bytes_span(self, slot):
        """(start, size) of a vector of bytes, or (0, 0) when absent."""
        return self._vector(slot)

    def tables(self, slot, what, limit=1 << 26):
        """The tables of a vector of tables."""
        return [Table(self.bytes, pos) for pos in self.table_positions(slot, what, limit)]

    def table_positions(self, slot, what, limit=1 << 26):
        """The positions of the tables of a vector of tables."""
        start, n = self._vector(slot)
        _check_count(n, what, limit)
        return [start + 4 * i + offset for i, offset in
                enumerate(struct.unpack_from(f"<{n}I", self.bytes, start))] if n else []

    def string(self, slot):
        start, n = self._vector(slot)
        if not start:
            return None
        if start + n > len(self.bytes):
            raise IndexError("a string runs past the end of the buffer")
        return bytes(self.bytes[start:start + n])


# The hottest tables (one per tensor) are read without a Table object: ``field_offsets`` reads the
# vtable in one struct call, and the fields are read at ``pos + offset`` (offset 0: absent).

def field_offsets(buf, pos, count):
    """The offsets from ``pos`` of the table's first ``count`` fields; 0 where a field is absent."""
    vtable = pos - _I32(buf, pos)[0]
    if vtable < 0:
        raise IndexError(f"vtable at {vtable} outside the buffer")
    stored = (_U16(buf, vtable)[0] - 4) >> 1
    if stored >= count:
        return _SLOTS[count].unpack_from(buf, vtable + 4)
    return _SLOTS[max(stored, 0)].unpack_from(buf, vtable + 4) + (0,) * (count - max(stored, 0))


def vector_at(buf, at):
    """(start, length) of the vector whose offset is stored at ``at``."""
    start = at + _U32(buf, at)[0]
    return start + 4, _U32(buf, start)[0]


def scalars_at(buf, at, fmt, what, limit=1 << 26):
    """The vector of scalars whose offset is stored at ``at``."""
    start, n = vector_at(buf, at)
    _check_count(n, what, limit)
    return struct.unpack_from(f"<{n}{fmt}", buf, start) if n else ()


def string_at(buf, at):
    start, n = vector_at(buf, at)
    if start + n > len(buf):
        raise IndexError("a string runs past the end of the buffer")
    return bytes(buf[start:start + n])


def table_at(buf, at):
    """Position of the sub-table whose offset is stored at ``at``."""
    return at + _U32(buf, at)[0]


def _check_count(n, what, limit):
    if n > limit:
        raise ModelError(f"corrupt TFLite flatbuffer: {what} count {n} is out of range")
