"""QuantizeLinear / DequantizeLinear: per tensor between int8 ops, per axis at a model's edges."""


from .base import Constant, QuantizedConstant, Skip, Value, _product
from .quantization import quantize_like_onnxruntime


class QdqMixin:
    """Handlers mixed into OnnxImporter (state and helpers: base.ImporterBase)."""

    def _op_QuantizeLinear(self, node, attrs):
        x, out = node.input[0], node.output[0]
        if x in self.constants:
            self._quantize_constant(node, attrs)
            return
        params, axis = self._qdq_params(node, attrs, "QuantizeLinear output")
        if axis is not None:
            self._quantize_per_axis(x, out, params, axis)
            return
        if x in self.views:  # DQ -> Q: requantize
            source = self.views[x]
            value = self.values[source]
            shape = self.tensors[value.index].shape
            index = self._new_output([out], shape, params, value.nhwc)
            self._op("QUANTIZE", [value.index], [index])
            return
        if x not in self.values or self.tensors[self.values[x].index].dtype != "float32":
            raise Skip(f"quantizes '{x}', which is computed in float")
        value = self.values[x]
        index = self._new_output([out], self.tensors[value.index].shape, params, value.nhwc)
        self._op("QUANTIZE", [value.index], [index])

    def _quantize_constant(self, node, attrs):
        """QuantizeLinear of a float constant: weights the quantizer kept in float, followed by their
        DequantizeLinear (quantize_static's AddQDQPairToWeight). onnxruntime folds it into the int8
        constant its QuantizeLinear kernel gives, and so does this (per tensor or per axis)."""
        x, out = node.input[0], node.output[0]
        constant = self.constants[x]
        if constant.dtype != "float32":
            raise Skip(f"quantizes constant '{x}' of type {constant.dtype}; only float32 constants are quantized")
        if attrs.get("block_size", 0):
            raise Skip(f"quantizes constant '{x}' in blocks (block_size); per tensor or per axis only")
        scales, zero_points, dtype = self._qparams(node.input[1], node.input[2] if len(node.input) > 2 else "",
                                                   "QuantizeLinear output", allow_vector=True)
        shift = 128 if dtype == "uint8" else 0
        zero_points = [z + shift for z in zero_points]   # the model's own zero points
        channel_of = None
        if len(scales) > 1:
            shape = constant.shape
            axis = self._per_axis_dimension(attrs.get("axis", 1), shape, len(scales), "QuantizeLinear")
            inner = _product(shape[axis + 1:])
            channel_of = lambda i: i // inner % len(scales)   # noqa: E731
        q = quantize_like_onnxruntime(constant.values(), scales, zero_points, dtype, channel_of)
        self.constants[out] = Constant(out, dtype, constant.shape, bytes(v & 0xFF for v in q))

    def _op_DequantizeLinear(self, node, attrs):
        q, out = node.input[0], node.output[0]
        if q in self.constants:
            constant = self.constants[q]
            if constant.dtype == "int32":  # a bias: int32 zero points, which must be 0
                scales = tuple(self._scalar_constant(node.input[1], "bias scale").values())
                zero_points = (tuple(self._scalar_constant(node.input[2], "bias zero point").values())
                               if len(node.input) > 2 and node.input[2] else (0,) * len(scales))
            else:
                scales, zero_points, dtype = self._qparams(node.input[1], node.input[2] if len(node.input) > 2 else "",
                                                           "DequantizeLinear", allow_vector=True)
                if dtype != constant.dtype:
                    raise Skip(f"'{q}' is {constant.dtype} but its zero point is {dtype}")
            self.quantized_constants[out] = QuantizedConstant(constant, scales, zero_points, attrs.get("axis", 1))
            return
        if q not in self.values:
            raise Skip(f"dequantizes '{q}', which is not available")
        params, axis = self._qdq_params(node, attrs, "DequantizeLinear")
        if axis is not None:
            self._dequantize_per_axis(q, out, params, axis)
            return
        self._adopt_quantization(q, params)
        value = self.values[q]
        t = self.tensors[value.index]
        if (t.scale, t.zero_point) != params[:2]:
            raise Skip(f"dequantizes '{q}' with other parameters than it was quantized with")
        self.views[out] = q
        if out in self.outputs:
            index = self._tensor(out, t.shape, "float32")
            self._op("DEQUANTIZE", [value.index], [index])
            self.values[out] = Value(index, value.nhwc)

    # Per-axis QuantizeLinear / DequantizeLinear of activations: only at a model's edges (a float model
    # input quantized per axis, dequantized into a model output), where the tensors keep ONNX's layout;
    # int8 ops take tensors quantized per tensor.

    def _qdq_params(self, node, attrs, what):
        """(params, axis) of a QuantizeLinear / DequantizeLinear of an activation; axis is None when it
        is quantized per tensor."""
        if attrs.get("block_size", 0):
            raise Skip(f"{what} uses blocked quantization (block_size); activations are quantized per tensor "
                       "or per axis")
        zero_point_name = node.input[2] if len(node.input) > 2 else ""
        params = self._qparams(node.input[1], zero_point_name, what, allow_vector=True)
        if len(params[0]) == 1 and len(params[1]) == 1:
            return params, None
        if len(self.constants[node.input[1]].shape) != 1 or len(params[0]) != len(params[1]):
            raise Skip(f"{what}: scales of shape {list(self.constants[node.input[1]].shape)} (blocked quantization) "
                       "are not supported; activations are quantized per tensor or per axis")
        return params, attrs.get("axis", 1)

    def _per_axis_dimension(self, axis, shape, channels, what):
        if not -len(shape) <= axis < len(shape):
            raise Skip(f"{what}: axis {axis} out of range for shape {list(shape)}")
        axis %= len(shape)
        if shape[axis] != channels:
            raise Skip(f"{what}: {channels} scales for dimension {axis} of size {shape[axis]}")
        return axis

    def _quantize_per_axis(self, x, out, params, axis):
        scales, zero_points, dtype = params
        graph_inputs = {v.name for v in self.graph.input}
        value = self.values.get(x)
        if (x in self.views or value is None or value.nhwc or x not in graph_inputs
                or self.tensors[value.index].dtype != "float32"):
            raise Skip(f"quantizes '{x}' per axis; only a float model input can be quantized per axis "
                       "(activations between int8 ops are quantized per tensor)")
        for consumer in self.consumers[out]:
            if consumer.op_type != "DequantizeLinear":
                raise Skip(f"'{out}' is quantized per axis and used by {consumer.op_type}; int8 ops take activations "
                           "quantized per tensor")
        shape = self.tensors[value.index].shape
        axis = self._per_axis_dimension(axis, shape, len(scales), "QuantizeLinear")
        index = self._tensor(out, shape, "int8", scales, zero_points, axis=axis)
        self._op("QUANTIZE", [value.index], [index])
        self.values[out] = Value(index)
        self.per_axis[out] = index
        if dtype == "uint8" and out in self.outputs:  # handed back as uint8: XOR 0x80
            edge = self._tensor(out, shape, "uint8", scales, tuple(z + 128 for z in zero_points), axis=axis)
            self._op("QUANTIZE", [index], [edge])
            self.values[out] = Value(edge)

    def _dequantize_per_axis(self, q, out, params, axis):
        scales, zero_points, _ = params
        if out not in self.outputs or self.consumers[out]:
            raise Skip(f"dequantizes '{q}' per axis into a tensor used by other ops; only model outputs can be "
                       "dequantized per axis (int8 ops take activations quantized per tensor)")
        value = self.values[q]
        t = self.tensors[value.index]
        if q in self.per_axis:
            index = self.per_axis[q]
            t = self.tensors[index]
            axis = self._per_axis_dimension(axis, t.shape, len(scales), "DequantizeLinear")
            if (t.scale, t.zero_point, t.quantized_dimension) != (scales, zero_points, axis):
                raise Skip(f"dequantizes '{q}' with other parameters than it was quantized with")
        elif q in {v.name for v in self.graph.input} and not t.scale and not value.nhwc:
            axis = self._per_axis_dimension(axis, t.shape, len(scales), "DequantizeLinear")
            index = value.index
            if t.dtype == "int8":
                t.scale, t.zero_point, t.quantized_dimension = scales, zero_points, axis
            elif t.dtype == "uint8":  # a uint8 model input: XOR 0x80 into int8
                t.scale, t.zero_point, t.quantized_dimension = scales, tuple(z + 128 for z in zero_points), axis
                index = self._tensor(q + "/int8", t.shape, "int8", scales, zero_points, axis=axis)
                self._op("QUANTIZE", [value.index], [index])
            else:
                raise Skip(f"input '{q}' is {t.dtype}; expected int8 or uint8")
            self.per_axis[q] = index
        else:
            raise Skip(f"dequantizes '{q}' per axis; only a model input or a float model input quantized per axis "
                       "can be (int8 ops produce activations quantized per tensor)")
        y = self._tensor(out, self.tensors[index].shape, "float32")
        self._op("DEQUANTIZE", [index], [y])
        self.values[out] = Value(y)
