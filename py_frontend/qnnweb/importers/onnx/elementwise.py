"""Add / Mul / Sub / Div / Max / Min (QDQ and QLinear), with broadcasting and constant operands (the
unary ops: unary.py)."""


from ...numerics.float32 import F32_OPERATIONS, float32, float32_bytes
from ...numerics.onnxruntime import make_table_onnxruntime
from .base import NCHW_TO_NHWC, Skip, Value
from .quantization import quantize_like_onnxruntime


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


class ElementwiseMixin:
    """Handlers mixed into OnnxImporter (state and helpers: base.ImporterBase)."""

    def _binary(self, op_type, node, a_name, b_name, out_names, params, activation, float_output=False, **extra):
        """``float_output``: the op's float32 result itself is the output (params unused)."""
        values = []
        for name in (a_name, b_name):
            if name in self.values:
                values.append(name)
            else:
                raise Skip(f"input '{name}' is not an int8 activation")
        a, b = (self.values[n] for n in values)
        a_shape, b_shape = self._onnx_shape(values[0]), self._onnx_shape(values[1])
        rank = max(len(a_shape), len(b_shape))
        pa, pb = (1,) * (rank - len(a_shape)) + a_shape, (1,) * (rank - len(b_shape)) + b_shape
        out_shape = []
        for x, y in zip(pa, pb):
            if x != y and 1 not in (x, y):
                raise Skip(f"shapes {list(a_shape)} and {list(b_shape)} do not broadcast")
            out_shape.append(max(x, y))
        nhwc = rank == 4 and (a.nhwc or b.nhwc)
        if nhwc:
            indexes = [self._nhwc_broadcastable(n) for n in values]
            out_shape = [out_shape[i] for i in NCHW_TO_NHWC]
        else:
            indexes = [self._plain(n) for n in values]
        if float_output:
            out = self._tensor(out_names[0], out_shape, "float32")
            self.values[out_names[0]] = Value(out, nhwc)
        else:
            out = self._new_output(out_names, out_shape, params, nhwc)
        options = dict(activation=activation, **extra)
        if op_type in ("ADD", "MUL") and not float_output:  # onnxruntime's kernels work in the model's dtype
            options.update(uint8=params[2] == "uint8")
        if op_type == "ADD" and not float_output:  # its ADD's operand order follows its broadcasting
            options.update(onnxruntime_scalar=_span_scalar(pa, pb, out_shape if not nhwc else
                                                           [max(x, y) for x, y in zip(pa, pb)]))
        self._op(op_type, indexes, [out], **options)

    def _nhwc_broadcastable(self, name):
        value = self.values[name]
        if value.nhwc:
            return value.index
        index = value.index
        shape = self.tensors[index].shape
        if len(shape) < 4:  # numpy broadcasting: leading 1s ([C,1,1], [W], [H,1] ...)
            shape = (1,) * (4 - len(shape)) + tuple(shape)
            index = self._reshaped(index, shape, "/4d")
        if shape[2] == 1 and shape[3] == 1:  # [N,C,1,1]: same bytes as [N,1,1,C]
            return self._reshaped(index, [shape[0], 1, 1, shape[1]], "/nhwc")
        return self._transpose(index, NCHW_TO_NHWC)

    def _constant_operand(self, name):
        """A dequantized int8 constant used as an element-wise operand: becomes an IR constant."""
        if name in self.values:
            return name
        q = self.quantized_constants.get(name)
        if q is None:
            raise Skip(f"input '{name}' is neither an int8 activation nor a dequantized int8 constant")
        if len(q.scale) != 1:
            raise Skip(f"constant '{name}' is quantized per axis")
        dtype = q.constant.dtype
        if dtype not in ("int8", "uint8"):
            raise Skip(f"constant '{name}' is {dtype}")
        # q.zero_point is in int8 terms already (DequantizeLinear's _qparams moved a uint8 one by -128);
        # the data moves with it (XOR 0x80).
        index = self._tensor(name, q.constant.shape, "int8", q.scale, q.zero_point[:1], self._int8_data(q.constant, dtype))
        self.values[name] = Value(index)
        return name

    def _float_value(self, n):
        """Whether `n` is a float32 activation (the model's float input, or a float op's result), not a
        dequantized int8 one."""
        return n in self.values and n not in self.views and self.tensors[self.values[n].index].dtype == "float32"

    def _float_operands(self, node):
        """The two operands as float32 values when the op computes in float32 on a float activation (the
        model's float input, or such an op's result) and a float32 constant or another activation, as a
        normalization before the first QuantizeLinear does ((x - mean) / std, x * 255 ...) or a box decoder
        after the last one (anchors - distances ...); else None."""
        operands = node.input[:2]
        if len(operands) != 2 or not any(map(self._float_value, operands)):
            return None
        return [self._float32_operand(n) for n in operands]

    def _float32_operand(self, n):
        """ONNX name of operand `n` as the float32 values onnxruntime's float op reads: a float activation
        itself; a float32 constant; a dequantized int8 constant or activation, as DequantizeLinear gives it
        ((q - zero point) * scale in float32; the activation through a DEQUANTIZE op)."""
        if self._float_value(n):
            return n
        name = n + "/float32"
        if name in self.values:
            return name
        if n in self.constants and self.constants[n].dtype == "float32":
            c = self.constants[n]
            self.values[name] = Value(self._tensor(name, c.shape, "float32", data=c.data))
        elif n in self.quantized_constants:
            q = self.quantized_constants[n]
            values = q.dequantized() if q.constant.dtype in ("int8", "uint8") else None
            if values is None:
                raise Skip(f"constant '{n}' is quantized per axis or is {q.constant.dtype}")
            self.values[name] = Value(self._tensor(name, q.constant.shape, "float32", data=float32_bytes(values)))
        else:
            x = self._activation_input(n)
            value = self.values[x]
            index = self._tensor(name, self.tensors[value.index].shape, "float32")
            self._op("DEQUANTIZE", [value.index], [index])
            self.values[name] = Value(index, value.nhwc)
        return name

    def _read_in_float(self, name):
        """Whether a float op's result `name` is read in float by an op that does not quantize it (nor
        reaches QuantizeLinear through moves, nor is the model's float tail): onnxruntime then goes on in
        float32 (QOperator leaves such islands: a detector's box decoder), and so does qnnweb."""
        consumers = [c for c in self.consumers.get(name, []) if c.op_type != "Shape"]
        if self._float_tail(name) or (len(consumers) == 1 and consumers[0].op_type in ("Relu", "Clip")):
            return False
        return any(c.op_type != "QuantizeLinear" for c in consumers) and self._quantization_ahead(name) is None

    def _float_island_binary(self, op_type, node):
        """The op in float32 on its operands as float32 values when its result is read in float
        (_read_in_float). Whether it ran."""
        if op_type not in F32_OPERATIONS or not self._read_in_float(node.output[0]):
            return False
        names = [self._float32_operand(n) for n in node.input[:2]]
        self._binary(op_type, node, names[0], names[1], [node.output[0]], None, "NONE", float_output=True)
        return True

    def _float_activation_binary(self, op_type, node):
        """The op in float32 (ops/elementwise.py's binary_f32) when _float_operands says so: its float
        result goes on to QuantizeLinear, or to more such ops. Whether it ran."""
        names = self._float_operands(node) if op_type in F32_OPERATIONS else None
        if names is None:
            return False
        self._binary(op_type, node, names[0], names[1], [node.output[0]], None, "NONE", float_output=True)
        return True

    def _qdq_binary(self, op_type, node):
        if self._float_activation_binary(op_type, node) or self._float_island_binary(op_type, node):
            return
        names = [self._constant_operand(n) if n in self.quantized_constants else self._activation_input(n)
                 for n in node.input[:2]]
        out_names, params, activation = self._quantized_output(node)
        self._binary(op_type, node, names[0], names[1], out_names, params, activation)

    def _op_Add(self, node, attrs):
        self._qdq_binary("ADD", node)

    def _extremum(self, op_type, node):
        """Max / Min of two operands left in float by the quantizer: quantization is monotonic, so the
        quantized float maximum is the maximum of the operands quantized with the output's parameters
        (each as onnxruntime's DequantizeLinear -> QuantizeLinear would give it): IR MAXIMUM / MINIMUM."""
        if len(node.input) != 2:
            raise Skip(f"{node.op_type} of {len(node.input)} inputs; two are supported")
        if self._float_tail(node.output[0]):
            self._float_binary(op_type, node)
            return
        out_names, params, activation = self._quantized_output(node)
        if activation != "NONE":
            raise Skip(f"a {activation} after {node.op_type} is not supported")
        operands = []
        for n in node.input:
            if n in self.constants and self.constants[n].dtype == "float32":   # the quantizer left it float
                operands.append(self._quantized_float_constant(n, params))
            else:
                name = self._constant_operand(n) if n in self.quantized_constants else self._activation_input(n)
                operands.append(self._in_quantization(name, params))
        self._binary(op_type, node, operands[0], operands[1], out_names, params, "NONE")

    def _quantized_float_constant(self, name, params):
        """A float32 constant quantized with ``params`` as onnxruntime's QuantizeLinear does (float32
        division, rounding half to even, saturated)."""
        constant = self.constants[name]
        q = quantize_like_onnxruntime(constant.values(), params[0], params[1], "int8")
        index = self._tensor(name + "/quantized", constant.shape, "int8", params[0], params[1],
                             bytes(v & 0xFF for v in q))
        self.values[name + "/quantized"] = Value(index)
        return name + "/quantized"

    def _in_quantization(self, name, params):
        """ONNX name of int8 ``name`` quantized with ``params`` (itself when it already is)."""
        t = self.tensors[self.values[name].index]
        if (tuple(t.scale), tuple(t.zero_point)) == (tuple(params[0]), tuple(params[1])):
            return name
        out = name + "/requantized"
        if t.is_constant:   # requantized here, with the table the QUANTIZE lowering would use
            table = make_table_onnxruntime("int8", t.scale[0], t.zero_point[0], "int8", params[0][0], params[1][0],
                                           lambda v: v)
            index = self._tensor(out, t.shape, "int8", params[0], params[1], bytes(t.data).translate(table))
            self.values[out] = Value(index, self.values[name].nhwc)
        else:
            self._requantize_to(name, [out], params)
        return out

    def _op_Max(self, node, attrs):
        self._extremum("MAXIMUM", node)

    def _op_Min(self, node, attrs):
        self._extremum("MINIMUM", node)

    def _op_Mul(self, node, attrs):
        self._qdq_binary("MUL", node)

    def _op_Sub(self, node, attrs):
        """Sub left in float by the quantizer (onnxruntime has no quantized Sub): IR SUB, computed as
        onnxruntime's float32 Sub of the dequantized operands (ops/elementwise.py, a 256 x 256 table)."""
        self._float_binary("SUB", node)

    def _op_Div(self, node, attrs):
        """Div left in float by the quantizer, by a constant (a normalization, x / 6 ...) or by an activation:
        IR DIV, onnxruntime's float32 division of the dequantized operands, as Sub."""
        self._float_binary("DIV", node)

    def _float_binary(self, op_type, node):
        """A binary op onnxruntime computes in float32 on its dequantized operands. A float constant the
        quantizer left unquantized becomes an int8 tensor of codes, one per distinct value (at most 256), the
        values themselves in the op's options: the lowering's table takes each code's exact value."""
        if self._float_activation_binary(op_type, node) or self._float_island_binary(op_type, node):
            return
        names, options = [], {}
        for n in node.input[:2]:
            if n in self.constants and self.constants[n].dtype == "float32":
                values = [float32(v) for v in self.constants[n].values()]
                distinct = sorted(set(values))
                if len(distinct) > 256:
                    raise Skip(f"the float constant '{n}' has {len(distinct)} distinct values (at most 256 are supported)")
                if op_type == "DIV" and 0.0 in distinct:
                    raise Skip(f"a division by the constant '{n}', which holds 0")
                code = {v: k for k, v in enumerate(distinct)}
                index = self._tensor(n + "/codes", self.constants[n].shape, "int8", (1.0,), (0,),
                                     bytes((code[v] - 128) & 0xFF for v in values))
                self.values[n + "/codes"] = Value(index)
                names.append(n + "/codes")
                options["float_constant_values"] = distinct
            else:
                names.append(self._constant_operand(n) if n in self.quantized_constants else self._activation_input(n))
        if self._float_tail(node.output[0]):
            self._binary(op_type, node, names[0], names[1], [node.output[0]], None, "NONE", float_output=True,
                         **options)
            return
        out_names, params, activation = self._quantized_output(node)
        self._binary(op_type, node, names[0], names[1], out_names, params, activation, **options)

    LAYOUT_OPS = ("Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity")

    def _float_tail(self, name, depth=0):
        """Whether float `name` is a model output, or reaches model outputs only through ops that move
        values (Transpose, Reshape ...), none quantizing it again: then it is computed in float32."""
        consumers = self.consumers.get(name, [])
        if depth > 32 or (name not in self.outputs and not consumers):
            return False
        return all(c.op_type in self.LAYOUT_OPS and c.input and c.input[0] == name and len(c.output) == 1
                   and self._float_tail(c.output[0], depth + 1) for c in consumers)

    def _qlinear_binary(self, op_type, node):
        a_name, a_s, a_z, b_name, b_s, b_z, y_s = node.input[:7]
        y_z = node.input[7] if len(node.input) > 7 else ""
        operands = []
        for name, s, z in ((a_name, a_s, a_z), (b_name, b_s, b_z)):
            if name in self.constants:
                scales, zps, dtype = self._qparams(s, z, f"constant '{name}'")
                constant = self.constants[name]
                index = self._tensor(name, constant.shape, "int8", scales, zps, self._int8_data(constant, dtype))
                self.values[name] = Value(index)
                operands.append(name)
            else:
                operands.append(self._qlinear_input(name, s, z))
        params = self._qparams(y_s, y_z, f"{node.op_type} output")
        self._binary(op_type, node, operands[0], operands[1], [node.output[0]], params, "NONE")

    def _op_QLinearAdd(self, node, attrs):
        self._qlinear_binary("ADD", node)

    def _op_QLinearMul(self, node, attrs):
        self._qlinear_binary("MUL", node)
