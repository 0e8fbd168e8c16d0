"""SOFTMAX over the innermost dimension."""

from . import Step, Unsupported, lowering
from .common import require_int8


@lowering("SOFTMAX")
def lower_softmax(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_scale, _ = require_int8(x, "input")
    y_scale, y_zp = require_int8(y, "output")
    if x.size != y.size or not x.shape:
        raise Unsupported("input and output sizes differ")
    beta = op.options.get("beta", 1.0)
    if not beta > 0:
        raise Unsupported(f"beta {beta} must be positive")
    columns = x.shape[-1]
    return [Step("softmax", dict(input=op.inputs[0], output=op.outputs[0], rows=x.size // columns, columns=columns,
                                 beta_scale=beta * x_scale, inverse_output_scale=1.0 / y_scale,
                                 output_zero_point=y_zp))]
