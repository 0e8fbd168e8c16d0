"""Compiled models: a graph lowered to op records and their constants, before packing.

This is what every load hands to the kernels, whatever the source format, and what a ``.qnn`` file
stores, so that a page can run a model without importing it again (web/qnnweb.js reads the same
bytes). Packing and validation stay in C, so one compiled model loads in every kernel variant.

Records go to the kernels in batches, one host call each (a call costs more than a small op). A
batch is its constants (16-byte aligned blobs), its records laid end to end, and the positions of
the record words holding constant addresses: those hold offsets into the batch's constants, and the
loader adds the address where it staged them ("relocations"). A step whose constants exceed the
staging size has a batch alone.

File layout (little endian; README "Compiled models"):

    0   magic "QNNW"
    4   u32 format version (FORMAT_VERSION)
    8   u32 kernel ABI version (records.ABI_VERSION: the module must report the same)
    12  u32 CRC-32 (zlib's) of every byte from offset 16 to the end
    16  u32 metadata bytes M
    20  u32 body bytes B
    24  8 reserved bytes (zero)
    32  metadata: M bytes of UTF-8 JSON (see ``_meta``), zero-padded to a multiple of 16
    ..  body: B bytes; the metadata's "batches" give offsets into it
"""

import array
import base64
import binascii
import json
import struct
import sys
import zlib
from typing import NamedTuple

from .errors import ModelError
from .graph import DTYPE_SIZES, tensor_info
from .records import ABI_VERSION, CONSTANT_FIELDS, FIELD_WORDS, RECORDS, TENSOR_FIELDS, pack_record, record_words

MAGIC = b"QNNW"
FORMAT_VERSION = 2          # the newest this qnnweb reads and writes
STATELESS_FORMAT_VERSION = 1  # a file without resource-variable state is written as version 1, so runtimes from
                              # before state read it; one with state is version 2, which they refuse by name
                              # instead of running it with its state never initialised
HEADER = struct.Struct("<4sIIIII8x")

# Staging for one batch of records: their constants (or one step's, if larger) and the records.
STAGING_BYTES = 1 << 20
RECORDS_BYTES = 1 << 16
MAX_RECORD_BYTES = 4 * max(record_words(kind) for kind in RECORDS)


def is_compiled(data):
    return len(data) >= 4 and bytes(data[:4]) == MAGIC


class PlanStep(NamedTuple):
    """One record of the plan, as error messages and profiles name it (a list in a .qnn file's
    metadata, in this order)."""

    kind: str            # the record's kind: "conv2d", "lut", ...
    op_index: int        # the source op it lowers (-1: an op a pass made)
    op_type: str         # that op's type ("CONV_2D", "Conv"...), or the kind for an op a pass made
    output: str          # the output tensor's name
    output_shape: list
    family: str          # ``op_family``'s: the kind, or a convolution's window and stride
    macs: int            # multiply-accumulates (convolutions only, else 0)
    details: dict        # a convolution's DETAIL_FIELDS, else empty


class StateTensor(NamedTuple):
    """A resource variable's memory: its arena offset and the bytes a stream starts from."""

    name: str
    offset: int
    initial: bytes


class CompiledModel:
    """``arena_bytes``; ``inputs`` / ``outputs`` and ``intermediates`` (name -> tensor dict, with
    its arena ``offset``); ``steps`` (a ``PlanStep`` per record, for error messages and profiles); ``batches`` (constants bytes,
    records bytes, record count, relocation word indices); ``staging`` (constants bytes, records
    bytes) to allocate once; ``describe`` (the source's summary); ``metadata`` (labels, preprocess...);
    ``state`` (a ``StateTensor`` per resource variable: the memory kept from one run to the next)."""

    def __init__(self, arena_bytes, inputs, outputs, steps, batches, staging, describe, metadata=None,
                 intermediates=None, state=()):
        self.arena_bytes, self.inputs, self.outputs = arena_bytes, inputs, outputs
        self.steps, self.batches, self.staging = steps, batches, staging
        self.describe, self.metadata = describe, metadata or {}
        self.intermediates = intermediates
        self.state = list(state)

    def to_bytes(self):
        body, entries = bytearray(), []
        for constants, records, count, relocations in self.batches:
            entry = [len(body), len(constants)]
            body += constants
            entry += [len(body), len(records), count]
            body += records
            entry += [len(body), len(relocations)]
            body += array.array("I", relocations).tobytes() if sys.byteorder == "little" else _le(relocations)
            body += bytes(-len(body) % 16)
            entries.append(entry)
        meta = json.dumps(self._meta(entries), separators=(",", ":"), allow_nan=False).encode()
        meta += bytes(-len(meta) % 16)
        rest = struct.pack("<II8x", len(meta), len(body)) + meta + body
        crc = zlib.crc32(rest)
        version = FORMAT_VERSION if self.state else STATELESS_FORMAT_VERSION
        return MAGIC + struct.pack("<III", version, ABI_VERSION, crc) + rest

    def _meta(self, batches):
        return {
            "arena_bytes": self.arena_bytes,
            "inputs": self.inputs,
            "outputs": self.outputs,
            "staging": list(self.staging),
            "batches": batches,
            "steps": self.steps,
            "describe": self.describe,
            "metadata": self.metadata,
            "intermediates": self.intermediates,
            # bytes a stream starts from, written at the variable's arena offset by load and reset
            "state": [{"name": s.name, "offset": s.offset, "initial": base64.b64encode(s.initial).decode()}
                      for s in self.state],
        }

    @classmethod
    def from_bytes(cls, data):
        """Parse a .qnn file; anything wrong with it is a ModelError saying what."""
        data = bytes(data)
        if len(data) < HEADER.size or data[:4] != MAGIC:
            raise ModelError("not a compiled qnnweb model (no 'QNNW' header)")
        _, version, abi, crc, meta_bytes, body_bytes = HEADER.unpack_from(data)
        if not STATELESS_FORMAT_VERSION <= version <= FORMAT_VERSION:
            raise ModelError(f"compiled model format version {version}; this qnnweb reads versions "
                             f"{STATELESS_FORMAT_VERSION} to {FORMAT_VERSION}: compile the model again with "
                             "qnnweb.compile")
        if abi != ABI_VERSION:
            raise ModelError(f"the compiled model was made for kernel ABI version {abi}; this qnnweb's kernels are "
                             f"version {ABI_VERSION}: compile the model again with qnnweb.compile")
        if HEADER.size + meta_bytes + body_bytes != len(data):
            raise ModelError(f"compiled model truncated or padded: the header says {HEADER.size + meta_bytes + body_bytes} "
                             f"bytes, the file has {len(data)}")
        if zlib.crc32(memoryview(data)[16:]) != crc:
            raise ModelError("compiled model corrupt: its checksum does not match its bytes")
        try:
            meta = json.loads(data[HEADER.size:HEADER.size + meta_bytes].rstrip(b"\0"))
            body = memoryview(data)[HEADER.size + meta_bytes:]
            batches = [_batch(body, entry) for entry in meta["batches"]]
            staging = tuple(int(n) for n in meta["staging"])
            steps = [PlanStep(*step) for step in meta["steps"]]
            state = [StateTensor(s["name"], int(s["offset"]), base64.b64decode(s["initial"], validate=True))
                     for s in meta.get("state", [])]
            model = cls(int(meta["arena_bytes"]), meta["inputs"], meta["outputs"], steps, batches, staging,
                        meta["describe"], meta.get("metadata"), meta.get("intermediates"), state)
            for t in model.inputs + model.outputs:
                _check_tensor(t, model.arena_bytes)
            for s in state:
                if not 0 <= s.offset <= model.arena_bytes - len(s.initial):
                    raise ModelError(f"compiled model corrupt: state '{s.name}' lies outside the arena")
        except ModelError:
            raise
        except (ValueError, KeyError, TypeError, IndexError, binascii.Error) as exc:
            raise ModelError(f"compiled model corrupt: bad metadata ({type(exc).__name__}: {exc})") from None
        if sum(count for _, _, count, _ in batches) != len(model.steps):
            raise ModelError("compiled model corrupt: its batches and its steps disagree on the number of records")
        for constants, records, _, _ in batches:
            if len(constants) > staging[0] or len(records) > staging[1]:
                raise ModelError("compiled model corrupt: a batch is larger than its staging buffer")
        return model


def _batch(body, entry):
    c_at, c_bytes, r_at, r_bytes, count, rel_at, rel_count = (int(v) for v in entry)
    if min(c_at, c_bytes, r_at, r_bytes, count, rel_at, rel_count) < 0 or r_bytes % 4 or \
            max(c_at + c_bytes, r_at + r_bytes, rel_at + 4 * rel_count) > len(body):
        raise ModelError(f"compiled model corrupt: batch {entry} lies outside the file")
    relocations = array.array("I", bytes(body[rel_at:rel_at + 4 * rel_count]))
    if sys.byteorder != "little":
        relocations.byteswap()
    if any(w >= r_bytes // 4 for w in relocations):
        raise ModelError(f"compiled model corrupt: a relocation of batch {entry} lies outside its records")
    return bytes(body[c_at:c_at + c_bytes]), bytes(body[r_at:r_at + r_bytes]), count, relocations


def _check_tensor(t, arena_bytes):
    size = 1
    for d in t["shape"]:
        size *= int(d)
    if t["dtype"] not in DTYPE_SIZES or not 0 <= t["offset"] <= arena_bytes - size * DTYPE_SIZES[t["dtype"]]:
        raise ModelError(f"compiled model corrupt: tensor '{t['name']}' lies outside the arena")


def _le(words):
    return struct.pack(f"<{len(words)}I", *words)


def compile_steps(graph, steps, offsets, arena_bytes, metadata=None, keep_intermediates=False, describe=None):
    """The compiled model of a lowered graph: ``steps`` from ``ops.lower``, ``offsets`` (tensor index
    -> arena offset) and ``arena_bytes`` from ``planner.plan_memory``; ``describe``: the source graph's
    summary (default: this graph's; passes may have rewritten its ops)."""
    real = [s for s in steps if not s.alias]
    sizes = [sum(_aligned(len(c)) for c in s.constants.values()) for s in real]
    constants_capacity = max(max(sizes, default=0), min(sum(sizes), STAGING_BYTES))
    batches, table = [], []
    constants, records, relocations, count = bytearray(), bytearray(), [], 0
    tensors = graph.tensors
    for i, step in enumerate(real):
        if count and (len(constants) + sizes[i] > constants_capacity or len(records) + MAX_RECORD_BYTES > RECORDS_BYTES):
            batches.append((bytes(constants), bytes(records), count, relocations))
            constants, records, relocations, count = bytearray(), bytearray(), [], 0
        fields = dict(step.fields)
        for name in TENSOR_FIELDS:
            if name in fields:
                fields[name] = offsets[fields[name]]
        word = len(records) // 4
        for name in CONSTANT_FIELDS:
            if name in step.constants:
                data = step.constants[name]
                fields[name] = len(constants)
                constants += data
                constants += bytes(_aligned(len(data)) - len(data))
        record = pack_record(step.kind, fields)
        words = FIELD_WORDS[step.kind]
        relocations += [word + words[name] for name in CONSTANT_FIELDS if name in step.constants]
        records += record
        count += 1
        output = tensors[step.outputs[0]]
        family, macs = op_family(step)
        f = step.fields
        details = {k: f[k] for k in DETAIL_FIELDS if k in f} if step.kind in ("conv2d", "dwconv2d") else {}
        index, op_type = step.op or (-1, step.kind)
        table.append(PlanStep(step.kind, index, op_type, output.name, list(output.shape), family, macs, details))
    if count:
        batches.append((bytes(constants), bytes(records), count, relocations))

    # an input of ids (EMBEDDING_LOOKUP's): the rows of the smallest table it picks from, which the hosts
    # check its values against before a run (onnxruntime refuses an id outside the table)
    rows = {}
    for op in graph.ops:
        if op.type == "EMBEDDING_LOOKUP":
            table_rows = tensors[op.inputs[1]].shape[0]
            rows[op.inputs[0]] = min(rows.get(op.inputs[0], table_rows), table_rows)

    def entry(index):
        info = dict(tensor_info(tensors[index]), offset=offsets[index])
        if index in rows:
            info["index_rows"] = rows[index]
        return info

    intermediates = None
    if keep_intermediates:
        intermediates = {}
        for t in tensors:
            if t.index in offsets:
                intermediates[t.name] = entry(t.index)   # the last tensor of a name wins, as in the graph
    state = [StateTensor(tensors[i].name, offsets[i], bytes(initial)) for i, initial in graph.variables.items()]
    return CompiledModel(arena_bytes, [entry(i) for i in graph.inputs], [entry(i) for i in graph.outputs], table,
                         batches, (constants_capacity, RECORDS_BYTES), describe or graph.describe(), metadata,
                         intermediates, state)


def op_family(step):
    """(family, multiply-accumulates) of a plan step, for per-op-kind profiles: convolutions by window
    and stride (the few-channel first convolution apart), depthwise likewise; MACs for those,
    batch_matmul, dynamic_matmul and dynamic_conv2d, else 0."""
    f = step.fields
    if step.kind == "batch_matmul":
        return step.kind, f["batch0"] * f["batch1"] * f["batch2"] * f["rows"] * f["depth"] * f["columns"]
    if step.kind == "dynamic_matmul":
        return step.kind, f["rows"] * f["depth"] * f["columns"]
    if step.kind == "dynamic_conv2d":
        return (f"{step.kind} {f['kernel_height']}x{f['kernel_width']} s{f['stride_height']}",
                f["batch"] * f["output_height"] * f["output_width"] * f["output_channels"] * f["kernel_height"]
                * f["kernel_width"] * f["input_channels"])
    if step.kind not in ("conv2d", "dwconv2d"):
        return step.kind, 0
    family = f"{step.kind} {f['kernel_height']}x{f['kernel_width']} s{f['stride_height']}"
    pixels = f["batch"] * f["output_height"] * f["output_width"]
    taps = f["kernel_height"] * f["kernel_width"]
    if step.kind == "dwconv2d":
        return family, pixels * f["output_channels"] * taps
    first = " (first)" if f["input_channels"] <= 4 else ""
    return family + first, pixels * f["output_channels"] * taps * f["input_channels"]  # per-group input channels


DETAIL_FIELDS = ("input_channels", "output_channels", "kernel_height", "kernel_width", "stride_height",
                 "output_height", "output_width")


def _aligned(n):
    return (n + 15) // 16 * 16
