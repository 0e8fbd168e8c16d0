"""MEAN and SUM of float32 tensors (a model's float ReduceMean / ReduceSum, such as the statistics of a
LayerNorm written out in float ops): the reduce_f32 step, onnxruntime's float arithmetic
(src/operators/reduce_f32.c), which the op's option ``arithmetic: "onnxruntime"`` asks for
(``"onnxruntime_pool"``: its float GlobalAveragePool's, MLAS's pooling kernel).

onnxruntime sums each row of the input viewed as [kept, reduced] in Eigen's order when the reduced axes
are the last ones (its FastReduceKR, or every axis: its mean() of the whole tensor), and each column of
[reduced, kept] row after row when they lead (its FastReduceRK: a LayerNorm over the channels of an NCHW
feature map, written out); other patterns (kept axes on both sides: Eigen's blocked rowwise sums) are
refused by name. The int8 reductions are pooling.py's; pooling.lower_mean / lower_sum hand float32 ones
here."""

import math

from .common import given_axes
from .registry import Step, Unsupported

OPERATIONS = {"MEAN": 0, "SUM": 1}   # the reduce_f32 record's operation (2, max, is reserved)
# the reduce_f32 record's: onnxruntime's orders (ReduceMean / ReduceSum's two; its GlobalAveragePool's)
ARITHMETIC_ROWS, ARITHMETIC_COLUMNS, ARITHMETIC_POOL = 0, 1, 2


def is_float32_reduction(graph, op):
    """Whether the reduction reads or writes float32 (then it is reduce_f32's, or refused)."""
    return any(graph.tensors[i].dtype == "float32" for i in (op.inputs[0], op.outputs[0]))


def lower_float32_reduction(graph, op):
    """The reduce_f32 step of a float32 MEAN / SUM as onnxruntime computes it: over the input's last axes
    (each row in Eigen's order), or over leading axes with only size-1 axes before them and more than one
    element after (each column, row after row)."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    name = op.type.lower()
    if (x.dtype, y.dtype) != ("float32", "float32"):
        raise Unsupported(f"a {name} of {x.dtype} into {y.dtype}: a float {name} needs float32 input and output")
    if op.options.get("arithmetic") not in ("onnxruntime", "onnxruntime_pool"):
        raise Unsupported(f"a float32 {name} is computed as onnxruntime's float kernel only (option arithmetic "
                          f"'onnxruntime', an ONNX model's, or 'onnxruntime_pool', its GlobalAveragePool's); this "
                          f"one asks for {op.options.get('arithmetic')!r}")
    rank = max(len(x.shape), 1)    # a scalar's one axis: itself
    shape = list(x.shape) or [1]
    axes = given_axes(graph, op)   # all of them: a size-1 axis changes onnxruntime's order
    before, after = math.prod(shape[:axes[0]]), axes[-1] + 1
    pool = op.options["arithmetic"] == "onnxruntime_pool"
    if axes == list(range(axes[0], rank)):          # [rows][columns], each row reduced: `rows` results
        arithmetic, rows, columns = ARITHMETIC_POOL if pool else ARITHMETIC_ROWS, before, math.prod(shape[axes[0]:])
        results = rows
    elif axes == list(range(axes[0], after)) and before == 1 and math.prod(shape[after:]) > 1 and not pool:
        arithmetic, rows, columns = ARITHMETIC_COLUMNS, math.prod(shape[axes[0]:after]), math.prod(shape[after:])
        results = columns                           # [rows][columns], each column reduced
    else:
        raise Unsupported(f"a float32 {name} over axes {axes} of {list(x.shape)}: only over the last axes (each row "
                          "summed in onnxruntime's order) or over leading ones (each column); onnxruntime sums "
                          "other axes in other orders")
    if rows == 0 or columns == 0:
        raise Unsupported(f"a float32 {name} of the empty tensor {list(x.shape)}")
    if y.size != results:
        raise Unsupported(f"output {list(y.shape)} does not fit a {name} of {list(x.shape)} over axes {axes}")
    return [Step("reduce_f32", dict(input=op.inputs[0], output=op.outputs[0], rows=rows, columns=columns,
                                    operation=OPERATIONS[op.type], arithmetic=arithmetic))]
