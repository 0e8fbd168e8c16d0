"""Chains of element-wise int8 steps that are functions of one tensor's byte, as one table. SiLU as quantized
models write it (LOGISTIC, then MUL of its input and its result: after every convolution of YOLOv8 / YOLO11,
EfficientNet ...), GELU written out (a table of erf(x / sqrt 2), ADD of 1, MUL by x, MUL by 0.5: ViTs,
ConvNeXt), x * hard_sigmoid(x): each step's result depends on the source's byte alone, so the 256 results of
the chain, computed as its kernels compute them, are the table of a single lut step. The same bytes, in one
pass over the tensor instead of two to four.

A step extends a chain when it is a lut, a MUL (any arithmetic) or an ADD of onnxruntime's arithmetic whose
operands are chains of one source, or one such chain and a constant scalar; a chain's step is replaced when an
operand it reads is a chain's result that nothing else reads (not a model output, nor kept by
keep_intermediates): the steps made dead by that are dropped. The arithmetic is the kernels' (src/operators/
mul.c, add.c): mul_byte and add_byte. It runs on the lowered steps (ops.lower's), before memory planning."""

import math

from ..numerics.byte_values import input_values
from ..numerics.float32 import float32, fma32
from .registry import Step

IDENTITY = bytes(range(256))
VALUES = input_values("int8")   # the int8 value of each byte
INT32_LIMIT = 2.0 ** 31         # the kernels convert a rounded float to int32: tabulated only below it


def fuse_byte_functions(graph, steps, keep_intermediates=False):
    """``steps`` with every chain of element-wise steps of one source tensor's bytes ending in a single lut
    step (see the module's doc)."""
    if keep_intermediates:
        return steps
    readers = {}
    for step in steps:
        for index in step.inputs:
            readers[index] = readers.get(index, 0) + 1
    kept = set(graph.outputs)
    chains = {}   # tensor -> (source tensor, table: the tensor's byte for each byte of the source)
    fused = list(steps)
    for position, step in enumerate(steps):
        found = _chain_step(graph, step, chains)
        if found is None:
            continue
        source, table, operands = found
        output = step.fields["output"]
        chains[output] = (source, table)
        consumed = [t for t in operands if t != source and readers.get(t) == 1 and t not in kept]
        if consumed:
            fused[position] = Step("lut", dict(input=source, output=output, size=graph.tensors[output].size),
                                   {"table": table}, op=step.op)
            for t in operands:
                readers[t] -= 1
            readers[source] = readers.get(source, 0) + 1
    return _live(fused, readers, kept)


CHAIN_KINDS = ("lut", "mul", "add")   # steps that write their one output and nothing else


def _live(steps, readers, kept):
    """``steps`` without the chain steps whose result nothing reads any more (last to first, so a chain's
    earlier steps go with it)."""
    live = []
    for step in reversed(steps):
        output = step.fields.get("output")
        if step.kind in CHAIN_KINDS and readers.get(output, 0) == 0 and output not in kept:
            for index in step.inputs:
                readers[index] -= 1
            continue
        live.append(step)
    return live[::-1]


def _chain_step(graph, step, chains):
    """(source, table, the step's tensor operands) when the step's int8 result is a function of one source
    tensor's bytes, else None."""
    f = step.fields
    if step.kind == "lut":
        operands = [f["input"]]
        if not _bytes_alike(graph, [*operands, f["output"]]):
            return None
        source, table = chains.get(f["input"], (f["input"], IDENTITY))
        return source, bytes(step.constants["table"][b] for b in table), operands
    if step.kind not in ("mul", "add") or (step.kind == "add" and f.get("arithmetic") != 1):
        return None
    if f["b_constant"]:
        data = step.constants["input_b"]
        if len(data) != 1 or any(f[f"b_stride{k}"] for k in _spanned(f)):
            return None
        operands = [f["input_a"]]
        source, a_table = chains.get(f["input_a"], (f["input_a"], IDENTITY))
        b_table = bytes([data[0]]) * 256
    else:
        if any(f[f"a_stride{k}"] != f[f"b_stride{k}"] for k in _spanned(f)):
            return None
        operands = [f["input_a"], f["input_b"]]
        source, a_table = chains.get(f["input_a"], (f["input_a"], IDENTITY))
        b_source, b_table = chains.get(f["input_b"], (f["input_b"], IDENTITY))
        if b_source != source:
            return None
    if not _bytes_alike(graph, [*operands, source, f["output"]]):
        return None
    function = mul_byte if step.kind == "mul" else add_byte
    table = bytearray(256)
    for byte in range(256):
        q = function(VALUES[a_table[byte]], VALUES[b_table[byte]], f)
        if q is None:
            return None
        table[byte] = q & 0xFF
    return source, bytes(table), operands


def _spanned(fields):
    """The dimensions of a binary record's output that hold more than one element (a stride along the
    others means nothing)."""
    return [k for k in range(4) if fields[f"dim{k}"] > 1]


def _bytes_alike(graph, tensors):
    """Whether the tensors are int8 of one size: byte for byte the same elements."""
    sizes = {graph.tensors[t].size for t in tensors}
    return len(sizes) == 1 and all(graph.tensors[t].dtype == "int8" for t in tensors)


def mul_byte(a, b, fields):
    """The int8 value mul.c writes for inputs a and b: onnxruntime's rint(product * scale + zero point)
    less the offset (None where that float would leave int32), or the fp32 requantization (clamped in float
    first: always in range)."""
    product = (a - fields["a_zero_point"]) * (b - fields["b_zero_point"])
    scale, zero_point = float32(fields["scale"]), fields["output_zero_point"]
    low, high = fields["output_min"], fields["output_max"]
    scaled = float32(product * scale)   # exact before rounding: a 17-bit integer times a float32
    if fields["arithmetic"] == 1:
        offset = fields["offset"]
        f = float32(scaled + (zero_point + offset))
        if not abs(f) < INT32_LIMIT:
            return None
        return min(max(round(f) - offset, low), high)
    return round(min(max(scaled, float(low - zero_point)), float(high - zero_point))) + zero_point


def add_byte(a, b, fields):
    """The int8 value add.c writes for inputs a and b in onnxruntime's arithmetic (record arithmetic 1):
    fma(x, rx, fma(y, ry, zc - fma(rx, zx, ry * zy))) of the offset values, x the operand its kernel takes
    first, rounded half to even within the domain, less the offset, clamped."""
    offset = fields["input_offset"]
    ra, rb = float32(fields["a_multiplier"]), float32(fields["b_multiplier"])
    za, zb = float(fields["a_zero_point"] + offset), float(fields["b_zero_point"] + offset)
    xa, xb = float(a + offset), float(b + offset)
    if fields["float_form"]:
        zero_points = fma32(rb, zb, float32(ra * za))
        fixed = float32(float(fields["output_zero_point"] + offset) - zero_points)
        v = fma32(xb, rb, fma32(xa, ra, fixed))
    else:
        zero_points = fma32(ra, za, float32(rb * zb))
        fixed = float32(float(fields["output_zero_point"] + offset) - zero_points)
        v = fma32(xa, ra, fma32(xb, rb, fixed))
    if math.isnan(v):
        return None
    v = min(max(v, float(-128 + offset)), float(127 + offset))
    return min(max(round(v) - offset, fields["output_min"]), fields["output_max"])
