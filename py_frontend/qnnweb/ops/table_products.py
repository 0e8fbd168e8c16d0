"""A table step followed by the product of its input and its result, as one table: SiLU x * sigmoid(x) as
quantized models write it (LOGISTIC, then MUL of the LOGISTIC's input and output: after every convolution of
YOLOv8 / YOLO11, EfficientNet, MobileNetV4-hybrid ...), x * tanh(...), x * hard_sigmoid(x). The product of
an int8 byte x and table[x] depends on the byte x alone, so the 256 products, computed as the mul kernel
computes them (src/operators/mul.c: onnxruntime's QLinearMul, or the fp32 requantization of LiteRT's
kernels), are the table of a single lut step: the same bytes, in one pass over the tensor instead of two.

It runs on the lowered steps (ops.lower's), before memory planning; the table's result must be read by
the product alone (not a model output, nor kept with keep_intermediates)."""

import math

from ..numerics.byte_values import input_values
from ..numerics.float32 import float32
from .registry import Step

INT32_LIMIT = 2.0 ** 31   # mul.c converts the rounded float to int32: composed only below it


def fuse_table_products(graph, steps, keep_intermediates=False):
    """``steps`` with each lut step whose result only a following elementwise mul of the lut's own input reads
    replaced, with that mul, by one lut step of the composed table."""
    if keep_intermediates:
        return steps
    readers = {}
    for step in steps:
        for index in step.inputs:
            readers[index] = readers.get(index, 0) + 1
    kept = set(graph.outputs)
    tables = {}   # the output of each lut step: its position in steps
    fused, dropped = list(steps), set()
    for position, step in enumerate(steps):
        if step.kind == "lut":
            tables[step.fields["output"]] = position
        elif step.kind == "mul" and _elementwise(step):
            a, b = step.fields["input_a"], step.fields["input_b"]
            for x, s, x_first in ((a, b, True), (b, a, False)):
                table_at = tables.get(s)
                if table_at is None or steps[table_at].fields["input"] != x or readers[s] != 1 or s in kept:
                    continue
                if any(graph.tensors[i].dtype != "int8" for i in (x, s, step.fields["output"])):
                    continue
                table = composed_table(steps[table_at].constants["table"], step.fields, x_first)
                if table is None:
                    continue
                fields = dict(input=x, output=step.fields["output"], size=steps[table_at].fields["size"])
                fused[position] = Step("lut", fields, {"table": table}, op=step.op)
                dropped.add(table_at)
                break
    return [step for position, step in enumerate(fused) if position not in dropped]


def _elementwise(step):
    """Whether a mul step reads both inputs element by element (no constant, no broadcasting)."""
    f = step.fields
    return not f["b_constant"] and all(f[f"a_stride{k}"] == f[f"b_stride{k}"] for k in range(4))


def composed_table(table, fields, x_first):
    """256 bytes: for each int8 byte x, the mul record ``fields``'s product of x and table[x] (x its first
    input when ``x_first``); None where mul.c's float would leave int32 (a scale near 2^100)."""
    values = input_values("int8")
    composed = bytearray(256)
    for byte, x in enumerate(values):
        s = values[table[byte]]
        a, b = (x, s) if x_first else (s, x)
        q = mul_byte((a - fields["a_zero_point"]) * (b - fields["b_zero_point"]), fields)
        if q is None:
            return None
        composed[byte] = q & 0xFF
    return bytes(composed)


def mul_byte(product, fields):
    """The int8 value mul.c writes for the integer product (a - a_zp) * (b - b_zp)."""
    scale, zero_point = float32(fields["scale"]), fields["output_zero_point"]
    low, high = fields["output_min"], fields["output_max"]
    scaled = float32(product * scale)   # exact: a 17-bit integer times a float32, rounded once
    if fields["arithmetic"] == 1:       # onnxruntime's: rint(product * scale + zero point) - offset, clamped
        offset = fields["offset"]
        f = float32(scaled + (zero_point + offset))
        if not abs(f) < INT32_LIMIT:
            return None
        return min(max(round(f) - offset, low), high)
    f = min(max(scaled, float(low - zero_point)), float(high - zero_point))   # fp32 requantization
    if not math.isfinite(f):
        return None
    return round(f) + zero_point
