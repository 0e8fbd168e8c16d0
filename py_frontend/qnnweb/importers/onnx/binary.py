"""Add / Mul / Sub / Div / Max / Min (QDQ and QLinear), with broadcasting and constant operands (the
unary ops: unary.py)."""

from ...numerics.float32 import F32_OPERATIONS, float32
from ...numerics.onnxruntime import make_table_onnxruntime
from .constants import int8_data
from .context import Value
from .float_region import float_region
from .layout import NCHW_TO_NHWC, onnx_shape, plain_index, reshaped, transpose
from .quantization import (activation_input, float32_operand, float_tail, float_value, new_output, qlinear_input,
                           qparams, quantize_like_onnxruntime, quantized_output, read_in_float, requantize_to)
from .registry import onnx_op
from .skip import Skip
from .unary import qdq_unary, starts_float_run

# the IR op of each binary ONNX op
IR_BINARY = {"Add": "ADD", "Mul": "MUL", "Sub": "SUB", "Div": "DIV", "Max": "MAXIMUM", "Min": "MINIMUM",
             "QLinearAdd": "ADD", "QLinearMul": "MUL"}


def _span_scalar(a_shape, b_shape, out_shape):
    """Which operand ("a", "b" or None) onnxruntime's broadcasting hands its QLinearAdd kernel as a
    scalar per span: the one whose innermost dimension that is not 1 in the output is 1 (ONNX layout,
    shapes right-aligned)."""
    n = len(out_shape)
    while n > 0 and out_shape[n - 1] == 1:
        n -= 1
    if n == 0:
        return None
    if b_shape[n - 1] == 1:
        return "b"
    if a_shape[n - 1] == 1:
        return "a"
    return None


def binary(ctx, op_type, node, a_name, b_name, out_names, params, activation, float_output=False, **extra):
    """``float_output``: the op's float32 result itself is the output (params unused)."""
    values = []
    for name in (a_name, b_name):
        if name in ctx.values:
            values.append(name)
        else:
            raise Skip(f"input '{name}' is not an int8 activation")
    a, b = (ctx.values[n] for n in values)
    a_shape, b_shape = onnx_shape(ctx, values[0]), onnx_shape(ctx, values[1])
    rank = max(len(a_shape), len(b_shape))
    pa, pb = (1,) * (rank - len(a_shape)) + a_shape, (1,) * (rank - len(b_shape)) + b_shape
    out_shape = []
    for x, y in zip(pa, pb):
        if x != y and 1 not in (x, y):
            raise Skip(f"shapes {list(a_shape)} and {list(b_shape)} do not broadcast")
        out_shape.append(max(x, y))
    nhwc = rank == 4 and (a.nhwc or b.nhwc)
    if nhwc:
        indexes = [nhwc_broadcastable(ctx, n) for n in values]
        out_shape = [out_shape[i] for i in NCHW_TO_NHWC]
    else:
        indexes = [plain_index(ctx, n) for n in values]
    if float_output:
        out = ctx.add_tensor(out_names[0], out_shape, "float32")
        ctx.values[out_names[0]] = Value(out, nhwc)
    else:
        out = new_output(ctx, out_names, out_shape, params, nhwc)
    options = dict(activation=activation, **extra)
    if op_type in ("ADD", "MUL") and not float_output:  # onnxruntime's kernels work in the model's dtype
        options.update(uint8=params[2] == "uint8")
    if op_type == "ADD" and not float_output:  # its ADD's operand order follows its broadcasting
        options.update(onnxruntime_scalar=_span_scalar(pa, pb, out_shape if not nhwc else
                                                       [max(x, y) for x, y in zip(pa, pb)]))
    ctx.add_op(op_type, indexes, [out], **options)


def nhwc_broadcastable(ctx, name):
    value = ctx.values[name]
    if value.nhwc:
        return value.index
    index = value.index
    shape = ctx.tensors[index].shape
    if len(shape) < 4:  # numpy broadcasting: leading 1s ([C,1,1], [W], [H,1] ...)
        shape = (1,) * (4 - len(shape)) + tuple(shape)
        index = reshaped(ctx, index, shape, "/4d")
    if shape[2] == 1 and shape[3] == 1:  # [N,C,1,1]: same bytes as [N,1,1,C]
        return reshaped(ctx, index, [shape[0], 1, 1, shape[1]], "/nhwc")
    return transpose(ctx, index, NCHW_TO_NHWC)


def constant_operand(ctx, name):
    """A dequantized int8 constant used as an element-wise operand: becomes an IR constant."""
    if name in ctx.values:
        return name
    q = ctx.quantized_constants.get(name)
    if q is None:
        raise Skip(f"input '{name}' is neither an int8 activation nor a dequantized int8 constant")
    if len(q.scale) != 1:
        raise Skip(f"constant '{name}' is quantized per axis")
    dtype = q.constant.dtype
    if dtype not in ("int8", "uint8"):
        raise Skip(f"constant '{name}' is {dtype}")
    # q.zero_point is in int8 terms already (DequantizeLinear's qparams moved a uint8 one by -128);
    # the data moves with it (XOR 0x80).
    index = ctx.add_tensor(name, q.constant.shape, "int8", q.scale, q.zero_point[:1], int8_data(q.constant, dtype))
    ctx.values[name] = Value(index)
    return name


def float_operands(ctx, node):
    """The two operands as float32 values when the op computes in float32 on a float activation (the
    model's float input, or such an op's result) and a float32 constant or another activation, as a
    normalization before the first QuantizeLinear does ((x - mean) / std, x * 255 ...) or a box decoder
    after the last one (anchors - distances ...); else None."""
    operands = node.input[:2]
    if len(operands) != 2 or not any(float_value(ctx, n) for n in operands):
        return None
    return [float32_operand(ctx, n) for n in operands]


def float_island_binary(ctx, op_type, node):
    """The op in float32 on its operands as float32 values when its result is read in float
    (read_in_float; not only on its way to the model's output: float_binary's table computes that):
    onnxruntime then goes on in float32 (QOperator leaves such islands: a detector's box decoder), and so
    does qnnweb (float32_path.py). Whether it ran."""
    name = node.output[0]
    if op_type not in F32_OPERATIONS or float_tail(ctx, name) or not read_in_float(ctx, name):
        return False
    names = [float32_operand(ctx, n) for n in node.input[:2]]
    binary(ctx, op_type, node, names[0], names[1], [node.output[0]], None, "NONE", float_output=True)
    return True


def float_activation_binary(ctx, op_type, node):
    """The op in float32 (ops/binary.py's binary_f32) when float_operands says so: its float
    result goes on to QuantizeLinear, or to more such ops. Whether it ran."""
    names = float_operands(ctx, node) if op_type in F32_OPERATIONS else None
    if names is None:
        return False
    binary(ctx, op_type, node, names[0], names[1], [node.output[0]], None, "NONE", float_output=True)
    return True


def qdq_binary(ctx, op_type, node):
    if float_activation_binary(ctx, op_type, node) or float_island_binary(ctx, op_type, node):
        return
    names = [constant_operand(ctx, n) if n in ctx.quantized_constants else activation_input(ctx, n)
             for n in node.input[:2]]
    out_names, params, activation = quantized_output(ctx, node)
    binary(ctx, op_type, node, names[0], names[1], out_names, params, activation)


def in_float_region(ctx, node):
    """Whether `node` starts a float region of one int8 tensor (float_region.py) and was imported with it."""
    source = next((n for n in node.input[:2] if n in ctx.views), None)
    return source is not None and float_region(ctx, node, source, ctx.views[source])


@onnx_op("Add", "Mul")
def import_add_mul(ctx, node, attrs):
    if in_float_region(ctx, node):
        return
    if starts_float_run(ctx, node):
        qdq_unary(ctx, node, attrs)
        return
    qdq_binary(ctx, IR_BINARY[node.op_type], node)


def extremum(ctx, op_type, node):
    """Max / Min of two operands left in float by the quantizer: quantization is monotonic, so the
    quantized float maximum is the maximum of the operands quantized with the output's parameters
    (each as onnxruntime's DequantizeLinear -> QuantizeLinear would give it): IR MAXIMUM / MINIMUM."""
    if len(node.input) != 2:
        raise Skip(f"{node.op_type} of {len(node.input)} inputs; two are supported")
    if float_tail(ctx, node.output[0]):
        float_binary(ctx, op_type, node)
        return
    out_names, params, activation = quantized_output(ctx, node)
    if activation != "NONE":
        raise Skip(f"a {activation} after {node.op_type} is not supported")
    operands = []
    for n in node.input:
        if n in ctx.constants and ctx.constants[n].dtype == "float32":   # the quantizer left it float
            operands.append(quantized_float_constant(ctx, n, params))
        else:
            name = constant_operand(ctx, n) if n in ctx.quantized_constants else activation_input(ctx, n)
            operands.append(in_quantization(ctx, name, params))
    binary(ctx, op_type, node, operands[0], operands[1], out_names, params, "NONE")


def quantized_float_constant(ctx, name, params):
    """A float32 constant quantized with ``params`` as onnxruntime's QuantizeLinear does (float32
    division, rounding half to even, saturated)."""
    constant = ctx.constants[name]
    q = quantize_like_onnxruntime(constant.values(), params[0], params[1], "int8")
    index = ctx.add_tensor(name + "/quantized", constant.shape, "int8", params[0], params[1],
                         bytes(v & 0xFF for v in q))
    ctx.values[name + "/quantized"] = Value(index)
    return name + "/quantized"


def in_quantization(ctx, name, params):
    """ONNX name of int8 ``name`` quantized with ``params`` (itself when it already is)."""
    t = ctx.tensors[ctx.values[name].index]
    if (tuple(t.scale), tuple(t.zero_point)) == (tuple(params[0]), tuple(params[1])):
        return name
    out = name + "/requantized"
    if t.is_constant:   # requantized here, with the table the QUANTIZE lowering would use
        table = make_table_onnxruntime("int8", t.scale[0], t.zero_point[0], "int8", params[0][0], params[1][0],
                                       lambda v: v)
        index = ctx.add_tensor(out, t.shape, "int8", params[0], params[1], bytes(t.data).translate(table))
        ctx.values[out] = Value(index, ctx.values[name].nhwc)
    else:
        requantize_to(ctx, name, [out], params)
    return out


@onnx_op("Max", "Min")
def import_max_min(ctx, node, attrs):
    extremum(ctx, IR_BINARY[node.op_type], node)


@onnx_op("Sub", "Div")
def import_sub_div(ctx, node, attrs):
    """Sub and Div left in float by the quantizer (onnxruntime has no quantized Sub; Div by a constant, a
    normalization, x / 6 ..., or by an activation): IR SUB / DIV, computed as onnxruntime's float32 Sub /
    division of the dequantized operands (ops/binary.py, a 256 x 256 table); by a constant scalar with
    more float element ops after it, one table of them all (unary.py); in a float region of one int8
    tensor, one table of the region (float_region.py)."""
    if in_float_region(ctx, node):
        return
    if starts_float_run(ctx, node):
        qdq_unary(ctx, node, attrs)
        return
    float_binary(ctx, IR_BINARY[node.op_type], node)


def float_binary(ctx, op_type, node):
    """A binary op onnxruntime computes in float32 on its dequantized operands. A float constant the
    quantizer left unquantized becomes an int8 tensor of codes, one per distinct value (at most 256), the
    values themselves in the op's options: the lowering's table takes each code's exact value."""
    if float_activation_binary(ctx, op_type, node) or float_island_binary(ctx, op_type, node):
        return
    names, options = [], {}
    for n in node.input[:2]:
        if n in ctx.constants and ctx.constants[n].dtype == "float32":
            values = [float32(v) for v in ctx.constants[n].values()]
            distinct = sorted(set(values))
            if len(distinct) > 256:
                raise Skip(f"the float constant '{n}' has {len(distinct)} distinct values (at most 256 are supported)")
            if op_type == "DIV" and 0.0 in distinct:
                raise Skip(f"a division by the constant '{n}', which holds 0")
            code = {v: k for k, v in enumerate(distinct)}
            index = ctx.add_tensor(n + "/codes", ctx.constants[n].shape, "int8", (1.0,), (0,),
                                 bytes((code[v] - 128) & 0xFF for v in values))
            ctx.values[n + "/codes"] = Value(index)
            names.append(n + "/codes")
            options["float_constant_values"] = distinct
        else:
            names.append(constant_operand(ctx, n) if n in ctx.quantized_constants else activation_input(ctx, n))
    if float_tail(ctx, node.output[0]):
        binary(ctx, op_type, node, names[0], names[1], [node.output[0]], None, "NONE", float_output=True,
                     **options)
        return
    out_names, params, activation = quantized_output(ctx, node)
    binary(ctx, op_type, node, names[0], names[1], out_names, params, activation, **options)


def qlinear_binary(ctx, op_type, node):
    a_name, a_s, a_z, b_name, b_s, b_z, y_s = node.input[:7]
    y_z = node.input[7] if len(node.input) > 7 else ""
    operands = []
    for name, s, z in ((a_name, a_s, a_z), (b_name, b_s, b_z)):
        if name in ctx.constants:
            scales, zps, dtype = qparams(ctx, s, z, f"constant '{name}'")
            constant = ctx.constants[name]
            index = ctx.add_tensor(name, constant.shape, "int8", scales, zps, int8_data(constant, dtype))
            ctx.values[name] = Value(index)
            operands.append(name)
        else:
            operands.append(qlinear_input(ctx, name, s, z))
    params = qparams(ctx, y_s, y_z, f"{node.op_type} output")
    binary(ctx, op_type, node, operands[0], operands[1], [node.output[0]], params, "NONE")


@onnx_op("QLinearAdd", "QLinearMul")
def import_qlinear_add_mul(ctx, node, attrs):
    qlinear_binary(ctx, IR_BINARY[node.op_type], node)
