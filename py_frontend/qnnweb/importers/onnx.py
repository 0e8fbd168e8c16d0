"""ONNX (quantized) -> Graph.

Both forms onnxruntime's quantizer writes are read into the same int8 IR:
- QDQ: float ops wrapped in DequantizeLinear / QuantizeLinear. A float op whose activation inputs are
  dequantized int8 tensors, whose weights are dequantized int8 constants and whose output is
  quantized again is fused into one int8 op, so the model runs int8 end to end.
- QOperator: QLinearConv, QLinearMatMul, QGemm, QLinearAdd, ... map to the same int8 ops directly.

uint8 activations (onnxruntime's default "u8s8") are exactly int8 activations with the zero point
moved by 128 (q_s8 = q_u8 - 128): they become int8 here and only the model's own uint8 inputs or
outputs are converted, at the edges. 4-D activations are NCHW in ONNX and NHWC in the IR: the
importer transposes at the edges and wherever a layout-sensitive op (Reshape of a feature map) needs
it; weights keep their ONNX layout and are repacked by the kernels in C.

Every op that cannot run is collected and reported together (UnsupportedModelError).
"""

import math
from collections import defaultdict

from ..errors import ModelError, UnsupportedModelError
from ..graph import Graph, Op, Tensor
from .onnx_proto import parse_model, tensor_bytes, tensor_dtype, unpack

XOR_0x80 = bytes(b ^ 0x80 for b in range(256))  # int8 <-> uint8 with the zero point moved by 128
NCHW_TO_NHWC = (0, 2, 3, 1)
NHWC_TO_NCHW = (0, 3, 1, 2)
UNARY_LUT_OPS = {"Relu": "RELU", "Sigmoid": "LOGISTIC", "HardSwish": "HARD_SWISH", "Tanh": "TANH",
                 "LeakyRelu": "LEAKY_RELU", "Clip": "CLIP"}
PASSTHROUGH_OPS = ("Identity", "Dropout")


class Skip(Exception):
    """Raised inside a node handler: the node cannot run, with the reason."""


class Value:
    """An ONNX tensor as the IR sees it: an IR tensor index, and whether that IR tensor holds the
    ONNX NCHW tensor transposed to NHWC."""

    def __init__(self, index, nhwc=False):
        self.index, self.nhwc = index, nhwc


class Constant:
    def __init__(self, name, dtype, shape, data):
        self.name, self.dtype, self.shape, self.data = name, dtype, tuple(shape), data

    def values(self):
        return unpack(self.dtype, self.data)


class QuantizedConstant:
    """DequantizeLinear of a constant: int8/int32 data with its scale(s) and zero point(s)."""

    def __init__(self, constant, scale, zero_point, axis):
        self.constant, self.scale, self.zero_point, self.axis = constant, scale, zero_point, axis


def import_onnx(data):
    return OnnxImporter(parse_model(data)).run()


def _attributes(node):
    out = {}
    for a in node.attribute:
        kind = a.type
        out[a.name] = {1: a.f, 2: a.i, 3: a.s.decode("utf-8", "replace"), 6: list(a.floats), 7: list(a.ints)}.get(
            kind, a)
    return out


def _product(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class OnnxImporter:
    def __init__(self, model):
        self.model = model
        self.graph = model.graph
        self.opsets = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
        self.tensors, self.ops, self.problems = [], [], []
        self.values = {}            # ONNX name -> Value (int8 or float activations in the IR)
        self.constants = {}         # ONNX name -> Constant
        self.quantized_constants = {}   # ONNX name (DQ output) -> QuantizedConstant
        self.views = {}             # ONNX name (float DQ output) -> ONNX name of the int8 tensor it dequantizes
        self.quantization = {}      # ONNX name of an int8 tensor -> (scale, zero_point) in int8 terms
        self.per_axis = {}          # ONNX name -> IR index of its int8 tensor quantized per axis (model edges)
        self.consumers = defaultdict(list)
        self.done = set()           # ids of nodes already handled (fused into an earlier op)
        self.transposed = {}        # (IR index, perm) -> IR index
        self.node_index = {}
        self.failed = set()         # ONNX names that cannot be computed because an earlier op cannot run

    # ---------------------------------------------------------------- driver

    def run(self):
        for t in self.graph.initializer:
            dtype, shape, data = tensor_bytes(t)
            self.constants[t.name] = Constant(t.name, dtype, shape, data)
        for i, node in enumerate(self.graph.node):
            self.node_index[id(node)] = i
            for name in node.input:
                if name:
                    self.consumers[name].append(node)
        self.outputs = [o.name for o in self.graph.output]
        inputs = []
        for value_info in self.graph.input:
            if value_info.name in self.constants:
                continue
            inputs.append(self._graph_input(value_info))
        for node in self.graph.node:
            if id(node) in self.done:
                continue
            if any(name in self.failed for name in node.input):
                self.failed.update(node.output)  # already reported where it started
                continue
            try:
                self._node(node)
            except Skip as e:
                self.problems.append((self.node_index[id(node)], self._node_label(node), str(e)))
                self.failed.update(node.output)
        outputs = []
        for name in self.outputs:
            if name in self.values:
                outputs.append(self._plain(name))
            elif name not in self.failed:
                self.problems.append((-1, f"output '{name}'", "is computed in float; only int8 ops run"))
        if self.problems:
            raise UnsupportedModelError(self.problems)
        return Graph(self.tensors, self.ops, inputs, outputs, "onnx")

    def _node_label(self, node):
        domain = f"{node.domain}." if node.domain and node.domain != "ai.onnx" else ""
        return f"{domain}{node.op_type}" + (f" '{node.name}'" if node.name else "")

    def _node(self, node):
        if node.domain not in ("", "ai.onnx", "com.microsoft"):
            raise Skip(f"operator domain {node.domain} not supported")
        handler = getattr(self, f"_op_{node.op_type}", None)
        if handler is None:
            raise Skip("operator not supported")
        handler(node, _attributes(node))

    # ---------------------------------------------------------------- tensors

    def _tensor(self, name, shape, dtype, scale=(), zero_point=(), data=None, axis=0):
        index = len(self.tensors)
        self.tensors.append(Tensor(index, name, tuple(shape), dtype, tuple(scale), tuple(zero_point), axis, data))
        return index

    def _graph_input(self, value_info):
        tensor_type = value_info.type.tensor_type
        dtype = tensor_dtype(tensor_type.elem_type)
        shape = []
        for d in tensor_type.shape.dim:
            if not d.HasField("dim_value") or d.dim_value <= 0:
                # Dynamic batch: run with batch 1 (qnnweb plans memory for static shapes).
                if len(shape) == 0 and d.HasField("dim_param"):
                    shape.append(1)
                    continue
                raise ModelError(f"input '{value_info.name}' has a dynamic dimension; qnnweb needs static shapes")
            shape.append(int(d.dim_value))
        if dtype not in ("float32", "int8", "uint8"):
            self.problems.append((-1, f"input '{value_info.name}'", f"dtype {dtype} not supported"))
        index = self._tensor(value_info.name, shape, dtype)
        self.values[value_info.name] = Value(index)
        return index

    def _op(self, op_type, inputs, outputs, **options):
        self.ops.append(Op(len(self.ops), op_type, list(inputs), list(outputs), options))

    def _shape(self, name):
        return self.tensors[self.values[name].index].shape

    def _onnx_shape(self, name):
        """The tensor's shape in ONNX's layout."""
        value = self.values[name]
        shape = self.tensors[value.index].shape
        return tuple(shape[i] for i in NHWC_TO_NCHW) if value.nhwc else shape

    def _transpose(self, index, perm):
        key = (index, tuple(perm))
        if key not in self.transposed:
            t = self.tensors[index]
            out = self._tensor(t.name + "/transposed", [t.shape[p] for p in perm], t.dtype, t.scale, t.zero_point)
            self._op("TRANSPOSE", [index], [out], perm=list(perm))
            self.transposed[key] = out
        return self.transposed[key]

    def _nhwc(self, name):
        """IR index of the int8 tensor `name` in NHWC (a 4-D ONNX tensor)."""
        value = self.values[name]
        if value.nhwc:
            return value.index
        shape = self.tensors[value.index].shape
        if len(shape) != 4:
            raise Skip(f"expected a 4-D NCHW tensor, '{name}' has shape {list(shape)}")
        return self._transpose(value.index, NCHW_TO_NHWC)

    def _plain(self, name):
        """IR index of `name` in ONNX's own layout."""
        value = self.values[name]
        if not value.nhwc:
            return value.index
        shape = self.tensors[value.index].shape
        if shape[1] == 1 and shape[2] == 1:  # [N,1,1,C] and [N,C,1,1] are the same bytes
            t = self.tensors[value.index]
            out = self._tensor(t.name + "/nchw", [shape[0], shape[3], 1, 1], t.dtype, t.scale, t.zero_point)
            self._op("RESHAPE", [value.index], [out])
            self.values[name] = Value(out)
            return out
        return self._transpose(value.index, NHWC_TO_NCHW)

    # ---------------------------------------------------------------- quantization helpers

    def _scalar_constant(self, name, what):
        if name not in self.constants:
            raise Skip(f"{what} '{name}' must be a constant")
        return self.constants[name]

    def _qparams(self, scale_name, zero_point_name, what, allow_vector=False):
        """(scales, zero points as int8, source dtype) from constant scale / zero point inputs."""
        scale = self._scalar_constant(scale_name, f"{what} scale")
        if scale.dtype not in ("float32", "float16"):
            raise Skip(f"{what} scale is {scale.dtype}; only float32 and float16 scales are supported")
        scales = scale.values()
        dtype = "uint8"
        if zero_point_name:
            zp = self._scalar_constant(zero_point_name, f"{what} zero point")
            dtype = zp.dtype
            if dtype not in ("int8", "uint8"):
                raise Skip(f"{what} is {dtype}; only int8 and uint8 are supported")
            zero_points = zp.values()
        else:
            zero_points = [0] * len(scales)
        if len(scales) != 1 and not allow_vector:
            raise Skip(f"{what} is quantized per axis; activations must be quantized per tensor")
        if len(zero_points) == 1 and len(scales) > 1:
            zero_points = zero_points * len(scales)
        if any(not (s > 0 and math.isfinite(s)) for s in scales):
            raise Skip(f"{what} has a scale that is not positive and finite")
        shift = 128 if dtype == "uint8" else 0
        return tuple(scales), tuple(z - shift for z in zero_points), dtype

    def _int8_data(self, constant, dtype):
        return constant.data.translate(XOR_0x80) if dtype == "uint8" else constant.data

    def _weights(self, name, scale_name=None, zero_point_name=None, axis=0):
        """IR index of an int8 weight tensor: a DequantizeLinear of a constant (QDQ), or a constant with
        explicit scale / zero point inputs (QOperator)."""
        if scale_name is None:
            q = self.quantized_constants.get(name)
            if q is None:
                raise Skip(f"weights '{name}' must be a dequantized int8 constant")
            constant, scales, zero_points, axis = q.constant, q.scale, q.zero_point, q.axis
            dtype = constant.dtype
        else:
            if name not in self.constants:
                raise Skip(f"weights '{name}' must be a constant")
            constant = self.constants[name]
            scales, zero_points, dtype = self._qparams(scale_name, zero_point_name, "weights", allow_vector=True)
            if dtype != constant.dtype:
                raise Skip(f"weights are {constant.dtype} but their zero point is {dtype}")
        if dtype not in ("int8", "uint8"):
            raise Skip(f"weights '{name}' are {dtype}; only int8 and uint8 weights are supported")
        axis = axis % len(constant.shape) if constant.shape else 0
        data, weight_zero_point = self._centered_weights(name, constant, dtype, zero_points, axis)
        return self._tensor(name, constant.shape, "int8", scales, (weight_zero_point,) * len(zero_points), data, axis)

    def _centered_weights(self, name, constant, dtype, zero_points, axis):
        """(int8 bytes, weight zero point). Centred, (w - zero_point, 0), whenever w - zero_point fits
        in int8, which holds for symmetric int8 weights and for uint8 weights with zero point 128: then
        the kernels run their symmetric path, at no cost. Otherwise the int8 weights (uint8 XOR 0x80,
        exact) and their per-tensor zero point, which CONV_2D and FULLY_CONNECTED subtract at run time;
        per-channel zero points must fit. Done with bytes.translate, so it costs no Python loop per
        weight. Zero points are in int8 terms (uint8 ones already moved by -128)."""
        # Offset domain: u = w + 128 for int8 data, u = w for uint8 data; zero point u_zp = zp + 128.
        data = constant.data if dtype == "uint8" else constant.data.translate(XOR_0x80)
        if len(set(zero_points)) == 1:
            slices = [(0, len(data), zero_points[0])]
        elif axis == 0 and len(zero_points) == constant.shape[0]:
            step = len(data) // constant.shape[0]
            slices = [(i * step, (i + 1) * step, z) for i, z in enumerate(zero_points)]
        else:
            raise Skip(f"weights '{name}' have per-channel zero points along axis != 0")
        out = bytearray(len(data))
        for start, end, zero_point in slices:
            chunk = data[start:end]
            if not chunk:
                continue
            u_zp = zero_point + 128
            if min(chunk) - u_zp < -128 or max(chunk) - u_zp > 127:
                if len(slices) > 1:
                    raise Skip(f"weights '{name}' have per-channel zero points and minus them do not fit in int8 "
                               "(only a per-tensor weight zero point is supported)")
                return self._int8_data(constant, dtype), zero_point
            out[start:end] = chunk.translate(bytes((u - u_zp) & 0xFF for u in range(256)))
        return bytes(out), 0

    def _bias(self, name, input_scale, weight_scales, channels):
        """int32 bias: a DequantizeLinear of an int32 constant (QDQ) or the constant itself (QOperator),
        whose scale must be input scale x weight scale (the TFLite / onnxruntime convention)."""
        if not name:
            return -1
        if name in self.quantized_constants:
            q = self.quantized_constants[name]
            constant, scales = q.constant, q.scale
            if any(z != 0 for z in q.zero_point):
                raise Skip("bias has a non-zero zero point")
        elif name in self.constants:
            constant, scales = self.constants[name], None
        else:
            raise Skip(f"bias '{name}' must be an int32 constant")
        if constant.dtype != "int32" or _product(constant.shape) != channels:
            raise Skip(f"bias '{name}' must be int32 with {channels} values")
        if scales is not None:
            expected = [input_scale * w for w in (weight_scales if len(weight_scales) > 1 else weight_scales * channels)]
            given = scales if len(scales) > 1 else scales * channels
            if any(abs(g - e) > 1e-6 * e + 1e-30 for g, e in zip(given, expected)):
                raise Skip("bias scale is not input scale x weight scale")
        return self._tensor(name, (channels,), "int32", data=constant.data)

    def _activation_input(self, name):
        """The int8 ONNX tensor a float input dequantizes (QDQ), or the int8 tensor itself."""
        if name in self.views:
            return self.views[name]
        if name in self.values and self.tensors[self.values[name].index].dtype == "int8":
            return name
        raise Skip(f"input '{name}' is a float tensor that is not a dequantized int8 tensor")

    def _quantized_output(self, node, output_name=None):
        """For a float op in QDQ form: (ONNX name of the int8 output, fused activation) after following
        the float output through an optional Relu/Clip to the QuantizeLinear nodes that consume it."""
        name = output_name or node.output[0]
        activation = "NONE"
        consumers = self.consumers[name]
        if len(consumers) == 1 and consumers[0].op_type in ("Relu", "Clip") and name not in self.outputs:
            fused = self._fusable_activation(consumers[0])
            if fused is not None:
                activation = fused
                self.done.add(id(consumers[0]))
                name = consumers[0].output[0]
                consumers = self.consumers[name]
        quantizers = [c for c in consumers if c.op_type == "QuantizeLinear"]
        if not quantizers or len(quantizers) != len(consumers) or name in self.outputs:
            raise Skip(f"its float output '{name}' is used in float (not only by QuantizeLinear)")
        first = quantizers[0]
        params = self._qparams(first.input[1], first.input[2] if len(first.input) > 2 else "", "output")
        for q in quantizers:
            if self._qparams(q.input[1], q.input[2] if len(q.input) > 2 else "", "output")[:2] != params[:2]:
                raise Skip("its output is quantized twice with different parameters")
            self.done.add(id(q))
        return [q.output[0] for q in quantizers], params, activation

    def _fusable_activation(self, node):
        if node.op_type == "Relu":
            return "RELU"
        low, high = self._clip_bounds(node)
        if low == 0.0 and high == 6.0:
            return "RELU6"
        if low == 0.0 and high == math.inf:
            return "RELU"
        if low == -1.0 and high == 1.0:
            return "RELU_N1_TO_1"
        return None

    def _clip_bounds(self, node):
        attrs = _attributes(node)
        low, high = attrs.get("min", -math.inf), attrs.get("max", math.inf)
        for position, default in ((1, low), (2, high)):
            if len(node.input) > position and node.input[position]:
                constant = self._scalar_constant(node.input[position], "Clip bound")
                value = constant.values()[0]
                low, high = (value, high) if position == 1 else (low, value)
        return low, high

    def _new_output(self, names, shape, params, nhwc):
        """Create the IR int8 tensor for ONNX outputs `names` (all aliases of one tensor)."""
        scales, zero_points, _ = params
        index = self._tensor(names[0], shape, "int8", scales, zero_points)
        for name in names:
            self.values[name] = Value(index, nhwc)
            self.quantization[name] = (scales[0], zero_points[0])
        return index

    # ---------------------------------------------------------------- Q / DQ

    def _op_QuantizeLinear(self, node, attrs):
        x, out = node.input[0], node.output[0]
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
        self._edge_uint8(out, params)

    def _edge_uint8(self, name, params):
        """A uint8 tensor that is a model output is handed back as uint8."""
        if params[2] == "uint8" and name in self.outputs:
            value = self.values[name]
            t = self.tensors[value.index]
            index = self._tensor(name, t.shape, "uint8", t.scale, tuple(z + 128 for z in t.zero_point))
            self._op("QUANTIZE", [value.index], [index])
            self.values[name] = Value(index, value.nhwc)

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

    # ---------------------------------------------------------------- convolution and matmul

    def _conv(self, node, attrs, x_name, w_index, bias_name, out_names, params, activation):
        x = self._nhwc(x_name)
        n, h, w_, c = self.tensors[x].shape
        weights = self.tensors[w_index]
        if len(weights.shape) != 4:
            raise Skip("only 2-D convolutions are supported")
        m, c_per_group, kh, kw = weights.shape
        group = attrs.get("group", 1)
        if group == 1 and c_per_group == c:
            op_type = "CONV_2D"
        elif group == c and c_per_group == 1 and m % c == 0:
            op_type = "DEPTHWISE_CONV_2D"
        else:
            raise Skip(f"grouped convolution (group {group}) is not supported")
        strides = attrs.get("strides", [1, 1])
        dilations = attrs.get("dilations", [1, 1])
        pads = self._pads(attrs, (h, w_), (kh, kw), strides, dilations)
        out_h = (h + pads[0] + pads[1] - ((kh - 1) * dilations[0] + 1)) // strides[0] + 1
        out_w = (w_ + pads[2] + pads[3] - ((kw - 1) * dilations[1] + 1)) // strides[1] + 1
        x_scale = self.tensors[x].scale[0]
        bias = self._bias(bias_name, x_scale, list(weights.scale), m)
        out = self._new_output(out_names, (n, out_h, out_w, m), params, True)
        inputs = [x, w_index] + ([bias] if bias >= 0 else [])
        self._op(op_type, inputs, [out], stride=tuple(strides), dilation=tuple(dilations), padding=pads,
                 activation=activation, weights_layout="OIHW")

    def _pads(self, attrs, size, kernel, strides, dilations):
        """[top, bottom, left, right] from ONNX pads / auto_pad."""
        auto_pad = attrs.get("auto_pad", "NOTSET")
        if auto_pad in ("SAME_UPPER", "SAME_LOWER"):
            out = []
            for i in range(2):
                effective = (kernel[i] - 1) * dilations[i] + 1
                total = max((-(-size[i] // strides[i]) - 1) * strides[i] + effective - size[i], 0)
                small, large = total // 2, total - total // 2
                out += [small, large] if auto_pad == "SAME_UPPER" else [large, small]
            return out
        if auto_pad == "VALID":
            return [0, 0, 0, 0]
        pads = attrs.get("pads", [0, 0, 0, 0])
        if len(pads) != 4 or min(pads) < 0:
            raise Skip(f"pads {pads} not supported")
        return [pads[0], pads[2], pads[1], pads[3]]

    def _op_Conv(self, node, attrs):
        x = self._activation_input(node.input[0])
        w = self._weights(node.input[1])
        out_names, params, activation = self._quantized_output(node)
        self._conv(node, attrs, x, w, node.input[2] if len(node.input) > 2 else "", out_names, params, activation)

    def _op_QLinearConv(self, node, attrs):
        i = list(node.input) + [""] * (9 - len(node.input))
        x = self._qlinear_input(i[0], i[1], i[2])
        w = self._weights(i[3], i[4], i[5])
        params = self._qparams(i[6], i[7], "QLinearConv output")
        self._conv(node, attrs, x, w, i[8], [node.output[0]], params, "NONE")
        self._edge_uint8(node.output[0], params)

    def _adopt_quantization(self, name, params):
        """A model's own int8/uint8 input learns its quantization from its first consumer; a uint8 one is
        converted to int8 there (XOR 0x80, exact)."""
        if name not in self.values:
            raise Skip(f"input '{name}' is not available")
        value = self.values[name]
        t = self.tensors[value.index]
        if t.scale:
            return
        if t.dtype == "int8":
            t.scale, t.zero_point = params[0], params[1]
        elif t.dtype == "uint8":
            t.scale, t.zero_point = params[0], tuple(z + 128 for z in params[1])
            index = self._tensor(name + "/int8", t.shape, "int8", params[0], params[1])
            self._op("QUANTIZE", [value.index], [index])
            self.values[name] = Value(index, value.nhwc)
        else:
            raise Skip(f"input '{name}' is {t.dtype}; expected int8 or uint8")

    def _qlinear_input(self, name, scale_name, zero_point_name):
        """A QOperator int8/uint8 input, requantized if it was quantized otherwise than this op says."""
        params = self._qparams(scale_name, zero_point_name, f"input '{name}'")
        self._adopt_quantization(name, params)
        value = self.values[name]
        t = self.tensors[value.index]
        if t.dtype != "int8":
            raise Skip(f"input '{name}' is {t.dtype}; expected int8 or uint8")
        if (t.scale[0], t.zero_point[0]) != (params[0][0], params[1][0]):
            index = self._tensor(name + "/requantized", t.shape, "int8", params[0], params[1])
            self._op("QUANTIZE", [value.index], [index])
            self.values[name + "/requantized"] = Value(index, value.nhwc)
            return name + "/requantized"
        return name

    def _fully_connected(self, x_name, w_index, bias_name, out_names, params, activation, layout):
        x = self.values[x_name]
        x_shape = self._onnx_shape(x_name)
        x_index = self._plain(x_name) if len(x_shape) > 2 else x.index
        weights = self.tensors[w_index]
        if len(weights.shape) != 2:
            raise Skip(f"weights of shape {list(weights.shape)}: only 2-D weights are supported")
        k, n_out = (weights.shape[1], weights.shape[0]) if layout == "OI" else weights.shape
        if x_shape[-1] != k:
            raise Skip(f"input {list(x_shape)} does not fit weights {list(weights.shape)}")
        if layout == "IO" and len(weights.scale) > 1:
            weights.quantized_dimension = 1
        bias = self._bias(bias_name, self.tensors[x_index].scale[0], list(weights.scale), n_out)
        out = self._new_output(out_names, tuple(x_shape[:-1]) + (n_out,), params, False)
        self._op("FULLY_CONNECTED", [x_index, w_index] + ([bias] if bias >= 0 else []), [out], activation=activation,
                 weights_layout=layout)

    def _op_Gemm(self, node, attrs):
        if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0 or attrs.get("beta", 1.0) != 1.0:
            raise Skip("only Gemm with transA=0, alpha=1, beta=1 is supported")
        x = self._activation_input(node.input[0])
        w = self._weights(node.input[1])
        out_names, params, activation = self._quantized_output(node)
        self._fully_connected(x, w, node.input[2] if len(node.input) > 2 else "", out_names, params, activation,
                              "OI" if attrs.get("transB", 0) else "IO")

    def _op_MatMul(self, node, attrs):
        x = self._activation_input(node.input[0])
        w = self._weights(node.input[1], axis=1) if node.input[1] in self.quantized_constants else None
        if w is None:
            raise Skip("the second MatMul input must be dequantized int8 constant weights")
        out_names, params, activation = self._quantized_output(node)
        self._fully_connected(x, w, "", out_names, params, activation, "IO")

    def _op_QLinearMatMul(self, node, attrs):
        a_s, a_z, b, b_s, b_z, y_s, y_z = node.input[1:8]
        x = self._qlinear_input(node.input[0], a_s, a_z)
        if b not in self.constants:
            raise Skip("the second input must be constant weights")
        if len(self.constants[b].shape) != 2:
            raise Skip(f"weights of shape {list(self.constants[b].shape)}: batched (3-D) weights are not supported")
        w = self._weights(b, b_s, b_z, axis=1)
        params = self._qparams(y_s, y_z, "QLinearMatMul output")
        self._fully_connected(x, w, "", [node.output[0]], params, "NONE", "IO")
        self._edge_uint8(node.output[0], params)

    def _op_QGemm(self, node, attrs):
        i = list(node.input) + [""] * (9 - len(node.input))
        if attrs.get("transA", 0) or attrs.get("alpha", 1.0) != 1.0:
            raise Skip("only QGemm with transA=0 and alpha=1 is supported")
        if not i[7]:
            raise Skip("QGemm with a float output is not supported")
        x = self._qlinear_input(i[0], i[1], i[2])
        w = self._weights(i[3], i[4], i[5], axis=0 if attrs.get("transB", 0) else 1)
        params = self._qparams(i[7], i[8], "QGemm output")
        self._fully_connected(x, w, i[6], [node.output[0]], params, "NONE", "OI" if attrs.get("transB", 0) else "IO")
        self._edge_uint8(node.output[0], params)

    # ---------------------------------------------------------------- element-wise

    def _binary(self, op_type, node, a_name, b_name, out_names, params, activation):
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
        out = self._new_output(out_names, out_shape, params, nhwc)
        self._op(op_type, indexes, [out], activation=activation)

    def _nhwc_broadcastable(self, name):
        value = self.values[name]
        if value.nhwc:
            return value.index
        shape = self.tensors[value.index].shape
        shape = (1,) * (4 - len(shape)) + tuple(shape)
        if shape[2] == 1 and shape[3] == 1:  # [N,C,1,1]: same bytes as [N,1,1,C]
            t = self.tensors[value.index]
            out = self._tensor(t.name + "/nhwc", [shape[0], 1, 1, shape[1]], t.dtype, t.scale, t.zero_point)
            self._op("RESHAPE", [value.index], [out])
            return out
        return self._nhwc(name)

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
        zero_point = q.zero_point[0] - (128 if dtype == "uint8" else 0)
        index = self._tensor(name, q.constant.shape, "int8", q.scale, (zero_point,), self._int8_data(q.constant, dtype))
        self.values[name] = Value(index)
        return name

    def _qdq_binary(self, op_type, node):
        names = [self._constant_operand(n) if n in self.quantized_constants else self._activation_input(n)
                 for n in node.input[:2]]
        out_names, params, activation = self._quantized_output(node)
        self._binary(op_type, node, names[0], names[1], out_names, params, activation)

    def _op_Add(self, node, attrs):
        self._qdq_binary("ADD", node)

    def _op_Mul(self, node, attrs):
        self._qdq_binary("MUL", node)

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
        self._edge_uint8(node.output[0], params)

    def _op_QLinearAdd(self, node, attrs):
        self._qlinear_binary("ADD", node)

    def _op_QLinearMul(self, node, attrs):
        self._qlinear_binary("MUL", node)

    def _unary(self, op_type, x_name, out_names, params, **options):
        value = self.values[x_name]
        shape = self.tensors[value.index].shape
        out = self._new_output(out_names, shape, params, value.nhwc)
        self._op(op_type, [value.index], [out], **options)

    def _unary_options(self, node, attrs):
        op_type = UNARY_LUT_OPS[node.op_type]
        if op_type == "LEAKY_RELU":
            return op_type, {"alpha": attrs.get("alpha", 0.01)}
        if op_type == "CLIP":
            low, high = self._clip_bounds(node)
            return op_type, {"min": low, "max": high}
        return op_type, {}

    def _qdq_unary(self, node, attrs):
        x = self._activation_input(node.input[0])
        op_type, options = self._unary_options(node, attrs)
        out_names, params, activation = self._quantized_output(node)
        if activation != "NONE":
            raise Skip("two activations in a row")
        self._unary(op_type, x, out_names, params, **options)

    _op_Relu = _op_Sigmoid = _op_HardSwish = _op_Tanh = _op_LeakyRelu = _op_Clip = _qdq_unary

    def _op_QLinearSigmoid(self, node, attrs):
        x = self._qlinear_input(node.input[0], node.input[1], node.input[2])
        params = self._qparams(node.input[3], node.input[4] if len(node.input) > 4 else "", "QLinearSigmoid output")
        self._unary("LOGISTIC", x, [node.output[0]], params)
        self._edge_uint8(node.output[0], params)

    def _op_QLinearLeakyRelu(self, node, attrs):
        x = self._qlinear_input(node.input[0], node.input[1], node.input[2])
        params = self._qparams(node.input[3], node.input[4] if len(node.input) > 4 else "", "QLinearLeakyRelu output")
        self._unary("LEAKY_RELU", x, [node.output[0]], params, alpha=attrs.get("alpha", 0.01))
        self._edge_uint8(node.output[0], params)

    # ---------------------------------------------------------------- pooling

    def _pool(self, op_type, node, attrs, x_name, out_names, params, activation, global_pool=False):
        x = self._nhwc(x_name)
        n, h, w, c = self.tensors[x].shape
        if global_pool:
            kernel, strides, pads, ceil_mode = [h, w], [h, w], [0, 0, 0, 0], 0
        else:
            kernel = attrs.get("kernel_shape")
            if not kernel or len(kernel) != 2:
                raise Skip("only 2-D pooling is supported")
            strides = attrs.get("strides", [1, 1])
            if attrs.get("dilations", [1, 1]) != [1, 1]:
                raise Skip("dilated pooling is not supported")
            pads = self._pads(attrs, (h, w), kernel, strides, [1, 1])
            ceil_mode = attrs.get("ceil_mode", 0)
        sizes = []
        for i, (size, before, after) in enumerate(((h, pads[0], pads[1]), (w, pads[2], pads[3]))):
            span = size + before + after - kernel[i]
            out = (-(-span // strides[i]) if ceil_mode else span // strides[i]) + 1
            if ceil_mode and (out - 1) * strides[i] >= size + before:
                out -= 1
            sizes.append(out)
            extra = max((out - 1) * strides[i] + kernel[i] - (size + before + after), 0)
            if extra:
                pads[2 * i + 1] += extra
        options = dict(kernel=tuple(kernel), stride=tuple(strides), padding=pads, activation=activation)
        if op_type == "AVERAGE_POOL_2D":
            options["count_include_pad"] = bool(attrs.get("count_include_pad", 0))
            if options["count_include_pad"] and ceil_mode:
                raise Skip("count_include_pad with ceil_mode is not supported")
        out = self._new_output(out_names, (n, sizes[0], sizes[1], c), params, True)
        self._op(op_type, [x], [out], **options)

    def _op_AveragePool(self, node, attrs):
        x = self._activation_input(node.input[0])
        out_names, params, activation = self._quantized_output(node)
        self._pool("AVERAGE_POOL_2D", node, attrs, x, out_names, params, activation)

    def _op_GlobalAveragePool(self, node, attrs):
        x = self._activation_input(node.input[0])
        out_names, params, activation = self._quantized_output(node)
        self._pool("AVERAGE_POOL_2D", node, attrs, x, out_names, params, activation, global_pool=True)

    def _op_MaxPool(self, node, attrs):
        if len(node.output) > 1 and node.output[1]:
            raise Skip("MaxPool with an Indices output is not supported")
        x = self._activation_input(node.input[0])
        out_names, params, activation = self._quantized_output(node)
        if params[:2] != (self.tensors[self.values[x].index].scale, self.tensors[self.values[x].index].zero_point):
            raise Skip("MaxPool's input and output quantization differ")
        self._pool("MAX_POOL_2D", node, attrs, x, out_names, params, activation)

    def _op_QLinearAveragePool(self, node, attrs):
        if attrs.get("channels_last", 0):
            raise Skip("channels_last QLinearAveragePool is not supported")
        x = self._qlinear_input(node.input[0], node.input[1], node.input[2])
        params = self._qparams(node.input[3], node.input[4] if len(node.input) > 4 else "", "output")
        self._pool("AVERAGE_POOL_2D", node, attrs, x, [node.output[0]], params, "NONE")

    def _op_QLinearGlobalAveragePool(self, node, attrs):
        if attrs.get("channels_last", 0):
            raise Skip("channels_last QLinearGlobalAveragePool is not supported")
        x = self._qlinear_input(node.input[0], node.input[1], node.input[2])
        params = self._qparams(node.input[3], node.input[4] if len(node.input) > 4 else "", "output")
        self._pool("AVERAGE_POOL_2D", node, attrs, x, [node.output[0]], params, "NONE", global_pool=True)

    # ---------------------------------------------------------------- shape ops

    def _reshape_to(self, x_name, shape, out_names):
        """int8 reshape of `x_name` to ONNX `shape`: shares memory with its input."""
        index = self._plain(x_name)
        t = self.tensors[index]
        if _product(shape) != t.size:
            raise Skip(f"cannot reshape {list(t.shape)} to {list(shape)}")
        out = self._tensor(out_names[0], shape, t.dtype, t.scale, t.zero_point)
        self._op("RESHAPE", [index], [out])
        for name in out_names:
            self.values[name] = Value(out)

    def _shape_passthrough(self, node, shape_of):
        """Flatten/Reshape/Squeeze/Unsqueeze: on a dequantized int8 tensor, with the quantized output
        (QDQ) or the float output feeding only QuantizeLinear of the same parameters."""
        x = node.input[0]
        source = self._activation_input(x) if x in self.views else x
        if source not in self.values:
            raise Skip(f"input '{x}' is not available")
        shape = shape_of(self._onnx_shape(source))
        out = node.output[0]
        if x not in self.views:
            self._reshape_to(source, shape, [out])
        elif all(c.op_type == "QuantizeLinear" for c in self.consumers[out]) and self.consumers[out] and out not in self.outputs:
            out_names, params, activation = self._quantized_output(node)
            t = self.tensors[self.values[source].index]
            if params[:2] != (t.scale, t.zero_point) or activation != "NONE":
                raise Skip("requantizing in a reshape is not supported")
            self._reshape_to(source, shape, out_names)
        else:  # the float result is used dequantized: reshape the int8 tensor and view that
            self._reshape_to(source, shape, [out + "/int8"])
            self.views[out] = out + "/int8"

    def _op_Flatten(self, node, attrs):
        axis = attrs.get("axis", 1)

        def shape_of(shape):
            a = axis % len(shape) if shape else 0
            return (_product(shape[:a]), _product(shape[a:]))

        self._shape_passthrough(node, shape_of)

    def _op_Reshape(self, node, attrs):
        target = self._scalar_constant(node.input[1], "Reshape shape").values()

        def shape_of(shape):
            out = [shape[i] if d == 0 and not attrs.get("allowzero", 0) else d for i, d in enumerate(target)]
            if out.count(-1) == 1:
                known = _product([d for d in out if d != -1])
                out[out.index(-1)] = _product(shape) // known if known else 0
            return tuple(out)

        self._shape_passthrough(node, shape_of)

    def _op_Squeeze(self, node, attrs):
        axes = attrs.get("axes") or (self._scalar_constant(node.input[1], "axes").values() if len(node.input) > 1 else None)
        self._shape_passthrough(node, lambda s: tuple(d for i, d in enumerate(s)
                                                      if not (d == 1 and (axes is None or i in [a % len(s) for a in axes]))))

    def _op_Identity(self, node, attrs):
        x = node.input[0]
        if x in self.views:
            self.views[node.output[0]] = self.views[x]
        elif x in self.values:
            self.values[node.output[0]] = self.values[x]
        elif x in self.constants:
            self.constants[node.output[0]] = self.constants[x]
        elif x in self.quantized_constants:
            self.quantized_constants[node.output[0]] = self.quantized_constants[x]
        else:
            raise Skip(f"input '{x}' is not available")

    _op_Dropout = _op_Identity

    def _op_Constant(self, node, attrs):
        value = attrs.get("value")
        if value is None or not hasattr(value, "t"):
            raise Skip("only Constant with a tensor 'value' is supported")
        dtype, shape, data = tensor_bytes(value.t)
        self.constants[node.output[0]] = Constant(node.output[0], dtype, shape, data)

    def _concat(self, node, axis, inputs, out_names, params):
        shapes = [self._onnx_shape(n) for n in inputs]
        rank = len(shapes[0])
        axis %= rank
        nhwc = rank == 4 and any(self.values[n].nhwc for n in inputs)
        indexes = [self._nhwc(n) if nhwc else self._plain(n) for n in inputs]
        out_shape = list(shapes[0])
        out_shape[axis] = sum(s[axis] for s in shapes)
        if nhwc:
            axis = NCHW_TO_NHWC.index(axis)
            out_shape = [out_shape[i] for i in NCHW_TO_NHWC]
        out = self._new_output(out_names, out_shape, params, nhwc)
        self._op("CONCATENATION", indexes, [out], axis=axis, activation="NONE")

    def _op_Concat(self, node, attrs):
        inputs = [self._activation_input(n) for n in node.input]
        out_names, params, activation = self._quantized_output(node)
        if activation != "NONE":
            raise Skip("Concat with a fused activation is not supported")
        self._concat(node, attrs.get("axis", 1), inputs, out_names, params)

    def _op_QLinearConcat(self, node, attrs):
        y_s, y_z = node.input[0], node.input[1]
        rest = list(node.input[2:])
        inputs = [self._qlinear_input_any(rest[i], rest[i + 1], rest[i + 2]) for i in range(0, len(rest), 3)]
        params = self._qparams(y_s, y_z, "QLinearConcat output")
        self._concat(node, attrs.get("axis", 1), inputs, [node.output[0]], params)

    def _qlinear_input_any(self, name, scale_name, zero_point_name):
        """Like _qlinear_input, but a differently quantized input stays as it is (Concat requantizes)."""
        t = self.tensors[self.values[name].index] if name in self.values else None
        if t is not None and t.dtype == "int8" and t.scale:
            return name
        return self._qlinear_input(name, scale_name, zero_point_name)

    def _op_Softmax(self, node, attrs):
        x = self._activation_input(node.input[0])
        shape = self._onnx_shape(x)
        axis = attrs.get("axis", -1 if self.opsets.get("ai.onnx", 13) >= 13 else 1)
        if axis % len(shape) != len(shape) - 1:
            raise Skip("Softmax over an axis other than the last is not supported")
        if self.values[x].nhwc:
            raise Skip("Softmax over a feature map's channels is not supported")
        out_names, params, _ = self._quantized_output(node)
        self._unary("SOFTMAX", x, out_names, params, beta=1.0)

    def _op_Transpose(self, node, attrs):
        x = self._activation_input(node.input[0])
        perm = attrs.get("perm") or list(reversed(range(len(self._onnx_shape(x)))))
        index = self._plain(x)
        out_names, params, _ = self._quantized_output(node)
        t = self.tensors[index]
        if params[:2] != (t.scale, t.zero_point):
            raise Skip("requantizing in a Transpose is not supported")
        out = self._new_output(out_names, [t.shape[p] for p in perm], params, False)
        self._op("TRANSPOSE", [index], [out], perm=list(perm))
