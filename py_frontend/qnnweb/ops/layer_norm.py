"""LAYER_NORM: normalization of int8 rows with onnxruntime 1.32's float arithmetic (an ONNX
LayerNormalization or InstanceNormalization between DequantizeLinear and QuantizeLinear). The op's
inputs: the int8 tensor, float32 gamma and beta constants, and optionally a float32 table: the input's
values by byte ([256], or [columns, 256]: one per column of the rows) in place of its dequantized ones (a
float op onnxruntime ran on the dequantized tensor first). A float32 input (another float op's result:
LayerNormalization -> LayerNormalization) is read as it is, without a table. A float32 output is written
unquantized (a model's float output, or a float op's input). Options: ``axis`` (the rows are the
dimensions from it on, contiguous in the IR tensor), ``epsilon`` and ``arithmetic``: "layer" (gamma /
beta per element of the row) or "instance" (axis 2, gamma / beta per dimension 1). See
wasm_kernels/src/operators/layer_norm.c."""

from math import prod

from ..numerics.float32 import float32
from .common import require_constant, require_int8
from .registry import Step, Unsupported, lowering

ARITHMETIC = {"layer": 0, "instance": 1}


@lowering("LAYER_NORM")
def lower_layer_norm(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    float_input = x.dtype == "float32"
    x_scale, x_zp = (1.0, 0) if float_input else require_int8(x, "input")
    float_output = y.dtype == "float32"
    y_scale, y_zp = (1.0, 0) if float_output else require_int8(y, "output")
    if x.shape != y.shape:
        raise Unsupported(f"input shape {list(x.shape)} and output shape {list(y.shape)} differ")
    arithmetic = op.options.get("arithmetic", "layer")
    axis = op.options.get("axis", -1)
    if arithmetic not in ARITHMETIC or not isinstance(axis, int) or not -len(x.shape) <= axis < len(x.shape):
        raise Unsupported(f"arithmetic {arithmetic!r} over axis {axis!r} of shape {list(x.shape)}")
    axis %= len(x.shape)
    rows, columns = prod(x.shape[:axis]), prod(x.shape[axis:])
    channels = columns if arithmetic == "layer" else x.shape[1] if axis == 2 else 0
    if channels == 0:
        raise Unsupported("InstanceNormalization normalizes from axis 2")
    parameters = {}
    for name, index in (("gamma", op.inputs[1]), ("beta", op.inputs[2])):
        data = require_constant(graph.tensors[index], name, "float32")
        if len(data) != 4 * channels:
            raise Unsupported(f"{name} has {len(data) // 4} values; the normalization needs {channels}")
        parameters[name] = data
    table_per_column = False
    if len(op.inputs) > 3:
        if float_input:
            raise Unsupported("a table of input values with a float32 input: its values are read as they are")
        table = require_constant(graph.tensors[op.inputs[3]], "table", "float32")
        if len(table) not in (1024, 1024 * columns) or arithmetic != "layer":
            raise Unsupported(f"a table of {len(table) // 4} values: LayerNormalization takes 256, or 256 per "
                              f"column ({columns})")
        table_per_column = len(table) != 1024
        parameters["table"] = table
    epsilon = float32(op.options.get("epsilon", 1e-5))
    if not 0 <= epsilon < 3.0e38:
        raise Unsupported(f"epsilon {epsilon} must be non-negative and finite")
    fields = dict(input=op.inputs[0], output=op.outputs[0], rows=rows, columns=columns, channels=channels,
                  arithmetic=ARITHMETIC[arithmetic], epsilon=epsilon, input_scale=x_scale, input_zero_point=x_zp,
                  output_scale=y_scale, output_zero_point=y_zp, table=0, table_per_column=int(table_per_column),
                  float_output=int(float_output), float_input=int(float_input))
    return [Step("layer_norm", fields, parameters)]
