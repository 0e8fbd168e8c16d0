"""A model's integer inputs (int64 / int32: a text encoder's input_ids, attention_mask and token_type_ids,
as transformers' exports declare them). They are held as they are fed. Ids pick rows of constant tables
(Gather of a token embedding table: EMBEDDING_LOOKUP; quantize_dynamic's int8 / uint8 table is read through
its DequantizeLinear, uint8 as its int8 twin). An input only converted to float (through Unsqueeze /
Reshape / Expand ... to a Cast to float: an attention mask) is converted once, first (CAST), and its moves
run on the float32 values (float32_path.py): the same values, as a Cast commutes with moves."""

from ...graph import INDEX_DTYPES
from .constants import int8_data
from .context import Value
from .quantization import bool_cast, float_cast, qparams
from .skip import Skip

MOVES = ("Unsqueeze", "Squeeze", "Reshape", "Flatten", "Expand", "Identity", "Transpose")


def read_as_float(ctx, name):
    """Whether every reader of `name` is a Cast to float32 or bool (held as float32 0 / 1: booleans.py), or
    a move whose output is read so (or a Shape: shapes are static, read from whichever tensor holds the
    values)."""
    readers = ctx.consumers.get(name, [])
    if not readers or name in ctx.outputs:
        return False
    return all(float_cast(node) or bool_cast(node) or node.op_type == "Shape"
               or (node.op_type in MOVES and list(node.input[:1]) == [name] and name not in node.input[1:]
                   and read_as_float(ctx, node.output[0])) for node in readers)


def integer_input(ctx, name, index):
    """The IR value of integer model input `name` (IR tensor `index`): the tensor itself, or its float32
    conversion where it is only read as float."""
    if not read_as_float(ctx, name):
        return Value(index)
    out = ctx.add_tensor(name + "/float32", ctx.tensors[index].shape, "float32")
    ctx.add_op("CAST", [index], [out])
    return Value(out)


def table_quantization(ctx, name, dtype):
    """(scales, zero points in int8 terms) of an 8-bit table's rows `name`, from the DequantizeLinear that
    reads them (quantize_dynamic's quantized Gather: one scale for the table)."""
    readers = ctx.consumers.get(name, [])
    if name in ctx.outputs or not readers or any(r.op_type != "DequantizeLinear" for r in readers):
        raise Skip(f"rows of an {dtype} table are read through a DequantizeLinear only")
    found = {qparams(ctx, r.input[1], r.input[2] if len(r.input) > 2 else "", "DequantizeLinear") for r in readers}
    if len(found) != 1 or next(iter(found))[2] != dtype:
        raise Skip(f"the table's rows are dequantized with other parameters than one {dtype} scale and zero point")
    scales, zero_points, _ = found.pop()
    return scales, zero_points


def embedding_lookup(ctx, node, attrs):
    """Gather of rows (axis 0) of a constant table by a model's integer input: EMBEDDING_LOOKUP, the output
    int8 (an int8 / uint8 table, its DequantizeLinear after it) or float32 (a float table)."""
    table_name, ids = node.input[0], node.input[1]
    value = ctx.values.get(ids)
    if value is None or ctx.tensors[value.index].dtype not in INDEX_DTYPES:
        raise Skip("indices must be a constant or a model's int32 / int64 input")
    constant = ctx.constants.get(table_name)
    if constant is None or constant.dtype not in ("int8", "uint8", "float32") or not constant.shape:
        raise Skip(f"run-time indices pick rows of a constant int8, uint8 or float32 table; '{table_name}' is not one")
    if attrs.get("axis", 0) not in (0, -len(constant.shape)):
        raise Skip("run-time indices pick rows (axis 0) only")
    dtype = "float32" if constant.dtype == "float32" else "int8"
    scale, zero_point = () if dtype == "float32" else table_quantization(ctx, node.output[0], constant.dtype)
    data = constant.data if dtype == "float32" else int8_data(constant, constant.dtype)
    table = ctx.add_tensor(table_name + "/table", constant.shape, dtype, scale, zero_point, data=data)
    shape = list(ctx.tensors[value.index].shape) + list(constant.shape[1:])
    out = ctx.add_tensor(node.output[0], shape, dtype, scale, zero_point)
    ctx.add_op("EMBEDDING_LOOKUP", [value.index, table], [out])
    ctx.values[node.output[0]] = Value(out)
