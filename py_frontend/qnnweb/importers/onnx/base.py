"""The importer's state and node loop, ONNX tensors as the IR sees them (layout, constants), and
the names shared by every op family."""


from collections import defaultdict
from dataclasses import replace

from ...errors import ModelError, QuantizationModeError, UnsupportedModelError
from ...graph import DTYPE_SIZES, Graph, Op, Tensor
from ...numerics.float32 import float32
from .. import unknown_inputs
from .proto import DATA_TYPES, tensor_bytes, tensor_dtype, unpack

XOR_0x80 = bytes(b ^ 0x80 for b in range(256))  # int8 <-> uint8 with the zero point moved by 128
NCHW_TO_NHWC = (0, 2, 3, 1)
UNARY_LUT_OPS = {"Relu": "RELU", "Sigmoid": "LOGISTIC", "HardSwish": "HARD_SWISH", "HardSigmoid": "HARD_SIGMOID",
                 "Tanh": "TANH", "LeakyRelu": "LEAKY_RELU", "Clip": "CLIP", "Elu": "ELU"}
PASSTHROUGH_OPS = ("Identity", "Dropout")


def channels_first(rank):
    """The perm from a channels-last IR tensor (Value.nhwc) of `rank` back to ONNX's layout:
    [N, H, W, C...] -> [N, C..., H, W] ((0, 3, 1, 2) for rank 4)."""
    return (0, *range(3, rank), 1, 2)


class Skip(Exception):
    """Raised inside a node handler: the node cannot run, with the reason."""


class Value:
    """An ONNX tensor as the IR sees it: an IR tensor index, and whether that IR tensor holds the
    ONNX NCHW tensor transposed to NHWC. A 5-D one, [N, A, B, H, W] held [N, H, W, A, B] (the channels
    split in two), only between the Reshape that splits them and the Transpose and Reshape after it,
    which move the channels alone (shape.py, ShuffleNet's channel shuffle): other handlers take
    NHWC tensors as 4-D."""

    def __init__(self, index, nhwc=False):
        self.index, self.nhwc = index, nhwc


STATIC_HOW = "onnxruntime.quantization.quantize_static (QDQ or QOperator, int8 or uint8 activations)"


class Constant:
    def __init__(self, name, dtype, shape, data):
        self.name, self.dtype, self.shape, self.data = name, dtype, tuple(shape), data

    def values(self):
        return unpack(self.dtype, self.data)


class QuantizedConstant:
    """DequantizeLinear of a constant: int8/int32 data with its scale(s) and zero point(s)."""

    def __init__(self, constant, scale, zero_point, axis):
        self.constant, self.scale, self.zero_point, self.axis = constant, scale, zero_point, axis

    def dequantized(self):
        """Its float32 values as DequantizeLinear gives them, (q - zero point) * scale in float32; None when
        it is quantized per axis. (Zero points are in int8 terms: a uint8 constant's data moves by 128.)"""
        if len(self.scale) != 1 or len(self.zero_point) != 1:
            return None
        shift = 128 if self.constant.dtype == "uint8" else 0
        scale, zero_point = float32(self.scale[0]), self.zero_point[0]
        return [float32(float32(v - shift - zero_point) * scale) for v in self.constant.values()]


# AttributeProto.AttributeType -> name, and the type every attribute name the handlers read must have
# (the ONNX schema's, for the operators qnnweb imports). Checked once, in _attributes: a handler never
# sees an attribute of another type, a window of zero or a NaN.
ATTRIBUTE_TYPE_NAMES = {0: "UNDEFINED", 1: "FLOAT", 2: "INT", 3: "STRING", 4: "TENSOR", 5: "GRAPH", 6: "FLOATS",
                        7: "INTS", 8: "STRINGS", 9: "TENSORS", 10: "GRAPHS", 11: "SPARSE_TENSOR",
                        12: "SPARSE_TENSORS", 13: "TYPE_PROTO", 14: "TYPE_PROTOS"}
ATTRIBUTE_TYPES = {
    **dict.fromkeys(("group", "axis", "transA", "transB", "ceil_mode", "count_include_pad", "allowzero",
                     "channels_last", "block_size", "keepdims", "saturate", "to", "output_dtype", "storage_order",
                     "noop_with_empty_axes", "value_int", "start", "end", "batch_dims", "num_outputs"), 2),
    **dict.fromkeys(("strides", "dilations", "pads", "kernel_shape", "perm", "axes", "value_ints", "starts", "ends",
                     "split", "output_padding", "output_shape"), 7),
    **dict.fromkeys(("alpha", "beta", "gamma", "min", "max", "ratio", "value_float"), 1),
    **dict.fromkeys(("auto_pad", "value_string", "coordinate_transformation_mode", "nearest_mode"), 3),
    "value": 4, "value_floats": 6,
}
# INTS attributes that describe a 2-D window: how many values (qnnweb runs 2-D windows) and the least.
WINDOW_ATTRIBUTES = {"strides": (2, 1), "dilations": (2, 1), "kernel_shape": (2, 1), "pads": (4, 0)}
FINITE_ATTRIBUTES = ("alpha", "beta", "gamma", "ratio")   # min / max (Clip) may be infinite, never NaN


def _attribute_type(a):
    """The attribute's type; files from before the type field (type 0) by the value that is set."""
    if a.type:
        return a.type
    for kind, present in ((7, len(a.ints)), (6, len(a.floats)), (4, a.HasField("t")), (3, a.HasField("s")),
                          (1, a.HasField("f")), (2, a.HasField("i"))):
        if present:
            return kind
    return 0


def _attributes(node):
    """{name: value} of the node's attributes: FLOAT/INT/STRING/FLOATS/INTS as Python values, other
    types (TENSOR: Constant's value) as the AttributeProto. Raises Skip for an attribute whose type
    or value the schema does not allow (see ATTRIBUTE_TYPES), naming it."""
    out = {}
    for a in node.attribute:
        kind = _attribute_type(a)
        expected = ATTRIBUTE_TYPES.get(a.name)
        if expected is not None and kind != expected:
            raise Skip(f"attribute '{a.name}' is {ATTRIBUTE_TYPE_NAMES.get(kind, f'type {kind}')}; "
                       f"the ONNX schema says {ATTRIBUTE_TYPE_NAMES[expected]}")
        value = {1: a.f, 2: a.i, 3: a.s.decode("utf-8", "replace"), 6: list(a.floats), 7: list(a.ints)}.get(kind, a)
        if a.name in WINDOW_ATTRIBUTES:
            count, smallest = WINDOW_ATTRIBUTES[a.name]
            if len(value) != count or min(value) < smallest:
                raise Skip(f"attribute '{a.name}' = {value}: expected {count} values of at least {smallest} "
                           "(qnnweb runs 2-D windows)")
        if kind == 1 and (value != value or (a.name in FINITE_ATTRIBUTES and abs(value) == float("inf"))):
            raise Skip(f"attribute '{a.name}' is {value}")
        if kind == 6 and any(v != v for v in value):
            raise Skip(f"attribute '{a.name}' holds NaN")
        out[a.name] = value
    return out


# Inputs and outputs of the operators the handlers read: (required inputs, most inputs or None,
# required outputs, most outputs). A required input must be named ("" is ONNX's absent optional
# input). Checked once, in the node loop, so no handler indexes node.input / node.output past their end.
ARITY = {
    "Conv": (2, 3, 1, 1), "QLinearConv": (8, 9, 1, 1), "Gemm": (2, 3, 1, 1), "MatMul": (2, 2, 1, 1),
    "QLinearMatMul": (8, 8, 1, 1), "QGemm": (6, 9, 1, 1), "Add": (2, 2, 1, 1), "Mul": (2, 2, 1, 1),
    "QLinearAdd": (7, 8, 1, 1), "QLinearMul": (7, 8, 1, 1), "Clip": (1, 3, 1, 1),
    "QLinearSigmoid": (4, 5, 1, 1), "QLinearLeakyRelu": (4, 5, 1, 1),
    "AveragePool": (1, 1, 1, 1), "GlobalAveragePool": (1, 1, 1, 1), "MaxPool": (1, 1, 1, 2), "ReduceMean": (1, 2, 1, 1),
    "QLinearAveragePool": (4, 5, 1, 1), "QLinearGlobalAveragePool": (4, 5, 1, 1),
    "QuantizeLinear": (2, 3, 1, 1), "DequantizeLinear": (2, 3, 1, 1),
    "Flatten": (1, 1, 1, 1), "Reshape": (2, 2, 1, 1), "Squeeze": (1, 2, 1, 1), "Unsqueeze": (1, 2, 1, 1),
    "Identity": (1, 1, 1, 1), "Dropout": (1, 3, 1, 2), "Constant": (0, 0, 1, 1),
    "Concat": (1, None, 1, 1), "QLinearConcat": (5, None, 1, 1), "Softmax": (1, 1, 1, 1),
    "Transpose": (1, 1, 1, 1), "DepthToSpace": (1, 1, 1, 1), "SpaceToDepth": (1, 1, 1, 1), "Shape": (1, 1, 1, 1), "Gather": (2, 2, 1, 1), "Cast": (1, 1, 1, 1),
    "ConstantOfShape": (1, 1, 1, 1), "Slice": (1, 5, 1, 1), "Split": (1, 2, 1, None),
    "PRelu": (2, 2, 1, 1), "Pad": (1, 4, 1, 1), "ConvTranspose": (2, 3, 1, 1), "Resize": (1, 4, 1, 1), "Max": (1, None, 1, 1), "Min": (1, None, 1, 1),
    "Sub": (2, 2, 1, 1), "Div": (2, 2, 1, 1),
}
DEFAULT_ARITY = (1, None, 1, None)   # every other handler reads its first input and first output
GROUPED_INPUTS = {"QLinearConcat": (2, 3)}   # y_scale, y_zero_point, then (x, scale, zero point) triples


def arity_problem(node):
    """Why the node's inputs or outputs do not fit its operator, or None."""
    required, most, outputs, most_outputs = ARITY.get(node.op_type, DEFAULT_ARITY)
    n = len(node.input)
    if n < required or (most is not None and n > most):
        expected = f"{required}" if most == required else f"{required} to {most}" if most else f"at least {required}"
        return f"expected {expected} inputs, got {n}"
    if node.op_type in GROUPED_INPUTS:
        head, group = GROUPED_INPUTS[node.op_type]
        if (n - head) % group:
            return f"expected {head} inputs and then groups of {group}, got {n} inputs"
    for k in range(required):
        if not node.input[k]:
            return f"input {k} is required, but it is absent (empty name)"
    m = len(node.output)
    if m < outputs or (most_outputs is not None and m > most_outputs):
        return f"expected {outputs if most_outputs == outputs else f'{outputs} to {most_outputs}'} outputs, got {m}"
    for k in range(outputs):
        if not node.output[k]:
            return f"output {k} is required, but it is absent (empty name)"
    return None


def permuted_bytes(data, shape, perm, width):
    """Row-major bytes of a tensor of ``shape`` transposed by ``perm`` (output dim k = input dim perm[k])."""
    rank = len(shape)
    strides = [width] * rank
    for k in range(rank - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    out_shape = [shape[p] for p in perm]
    offsets = [0]
    for k in range(rank):  # byte offsets of every output element, built one dimension at a time
        step = strides[perm[k]]
        offsets = [o + i * step for o in offsets for i in range(out_shape[k])]
    data = bytes(data)
    return b"".join(data[o:o + width] for o in offsets)


def _product(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class ImporterBase:
    """State, the node loop and the IR tensors; the op handlers (``_op_<OpType>``) live in the mixins."""

    FOLDABLE = ()   # op types folding.FoldingMixin may evaluate at import

    def __init__(self, model, input_shapes=None):
        self.model = model
        self.input_shapes = dict(input_shapes or {})   # input name -> shape given by the caller
        self.graph = model.graph
        self.opsets = {(o.domain or "ai.onnx"): o.version for o in model.opset_import}
        self.tensors, self.ops, self.problems = [], [], []
        self.values = {}            # ONNX name -> Value (int8 or float activations in the IR)
        self.constants = {}         # ONNX name -> Constant
        self.quantized_constants = {}   # ONNX name (DQ output) -> QuantizedConstant
        self.views = {}             # ONNX name (float DQ output) -> ONNX name of the int8 tensor it dequantizes
        self.quantization = {}      # ONNX name of an int8 tensor -> (scale, zero_point in int8 terms, source dtype)
        self.per_axis = {}          # ONNX name -> IR index of its int8 tensor quantized per axis (model edges)
        self.consumers = defaultdict(list)
        self.done = set()           # positions of nodes already handled (fused into an earlier op)
        self.transposed = {}        # (IR index, perm) -> IR index
        self.node_index = {}
        self.failed = set()         # ONNX names that cannot be computed because an earlier op cannot run
        self.node = None            # the node whose handler runs

    # ---------------------------------------------------------------- driver

    def run(self):
        for t in self.graph.initializer:
            dtype, shape, data = tensor_bytes(t)
            self.constants[t.name] = Constant(t.name, dtype, shape, data)
        # One list of the node objects, used everywhere: protobuf may hand out a new wrapper object on
        # each access to a repeated field, so id() is a stable key only for objects kept alive here.
        self.nodes = list(self.graph.node)
        for i, node in enumerate(self.nodes):
            self.node_index[id(node)] = i
            for name in node.input:
                if name:
                    self.consumers[name].append(node)
        self._require_quantized()
        self.outputs = [o.name for o in self.graph.output]
        inputs = []
        graph_inputs = [v for v in self.graph.input if v.name not in self.constants]
        unknown_inputs(self.input_shapes, [v.name for v in graph_inputs])
        for value_info in graph_inputs:
            inputs.append(self._graph_input(value_info))
        self.graph_input_indices = set(inputs)
        for position, node in enumerate(self.nodes):
            if position in self.done:
                continue
            if any(name in self.failed for name in node.input):
                self.failed.update(node.output)
                if not self._known(node):  # its inputs' problem is reported already; its own is reported too
                    self.problems.append((position, self._node_label(node), "operator not supported"))
                continue
            done_before = set(self.done)
            try:
                self._node(node)
            except Skip as e:
                self.problems.append((position, self._node_label(node), str(e)))
                self.failed.update(node.output)
                for fused in self.done - done_before:  # the QuantizeLinear / Relu it was fusing cannot run either
                    self.failed.update(self.nodes[fused].output)
        for name in self.outputs:
            if name not in self.values and self.views.get(name) in self.values:
                # a float result that is a view of an int8 tensor (an op that only moved or selected
                # dequantized values): the model's output is that tensor dequantized
                value = self.values[self.views[name]]
                index = self._tensor(name, self.tensors[value.index].shape, "float32")
                self._op("DEQUANTIZE", [value.index], [index])
                self.values[name] = Value(index, value.nhwc)
        outputs = []
        for name in self.outputs:
            if name in self.values:
                inner = self.values[name].index
                index = self._plain(name)
                if index != inner:
                    # moved back to ONNX's layout: the model's output keeps the model's name, the NHWC
                    # tensor it came from is the one renamed
                    self.tensors[inner] = replace(self.tensors[inner], name=name + "/nhwc")
                    self.tensors[index] = replace(self.tensors[index], name=name)
                outputs.append(self._as_declared(name, index))
            elif name not in self.failed:
                self.problems.append((-1, f"output '{name}'", "is computed in float; only int8 ops run"))
        if self.problems:
            raise UnsupportedModelError(self.problems)
        return Graph(self.tensors, self.ops, inputs, outputs, "onnx", self._source(graph_inputs))

    def _as_declared(self, name, index):
        """A model output the graph declares uint8 (a QuantizeLinear to uint8 at the end of a QDQ or
        QOperator model), computed as qnnweb's int8: shifted back to uint8 by a QUANTIZE, the model's
        name moving to the uint8 tensor. The one place this is done, whatever op made the output."""
        t = self.tensors[index]
        declared = DATA_TYPES.get(next(o.type.tensor_type.elem_type for o in self.graph.output if o.name == name))
        uint8 = (declared or (None,))[0] == "uint8" or (
            declared is None and self.quantization.get(name, (None, None, None))[2] == "uint8")
        if t.dtype != "int8" or not uint8:
            return index
        self.tensors[index] = replace(t, name=name + "/int8")
        out = self._tensor(name, t.shape, "uint8", t.scale, tuple(z + 128 for z in t.zero_point))
        self._op("QUANTIZE", [index], [out])
        return out

    def _source(self, graph_inputs):
        """The declared dimensions (a name for a symbolic one) and the model's metadata, as onnxruntime
        reports them; which input dimensions are symbolic (and were not given by input_shapes)."""
        def dims(value_info):
            return [int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None)
                    for d in value_info.type.tensor_type.shape.dim]

        declared = {v.name: dims(v) for v in [*graph_inputs, *self.graph.output]}
        dynamic = {v.name: [k for k, d in enumerate(declared[v.name]) if not isinstance(d, int) or d <= 0]
                   for v in graph_inputs if v.name not in self.input_shapes}
        m = self.model
        metadata = {"producer_name": m.producer_name, "graph_name": self.graph.name, "domain": m.domain,
                    "description": m.doc_string, "graph_description": self.graph.doc_string,
                    # onnxruntime's answer for a model without a version: INT64_MAX
                    "version": int(m.model_version) if m.HasField("model_version") else (1 << 63) - 1,
                    "custom_metadata_map": {p.key: p.value for p in m.metadata_props}}
        return {"dynamic": {k: v for k, v in dynamic.items() if v}, "dims": declared, "metadata": metadata}

    def _node_label(self, node):
        domain = f"{node.domain}." if node.domain and node.domain != "ai.onnx" else ""
        return f"{domain}{node.op_type}" + (f" '{node.name}'" if node.name else "")

    def _require_quantized(self):
        """A float model (no quantization anywhere) is refused with a pointer to the quantizers."""
        quantized = any(n.op_type in ("QuantizeLinear", "DequantizeLinear") or n.op_type.startswith("QLinear")
                        or n.op_type in ("QGemm", "ConvInteger", "MatMulInteger", "DynamicQuantizeLinear")
                        for n in self.nodes)
        quantized = quantized or any(c.dtype in ("int8", "uint8") for c in self.constants.values())
        quantized = quantized or any(tensor_dtype(v.type.tensor_type.elem_type) in ("int8", "uint8")
                                     for v in self.graph.input)
        if self.nodes and not quantized:
            raise ModelError("the model is not quantized (it computes in float): qnnweb runs int8 models. Quantize "
                             "it first, e.g. with " + STATIC_HOW)
        # the quantizer's other modes, refused with what they are before the per-node problems
        if any(n.op_type == "DynamicQuantizeLinear" for n in self.nodes):
            raise QuantizationModeError(
                "the model is dynamically quantized (onnxruntime.quantization.quantize_dynamic: int8 weights, "
                "activations quantized at run time by DynamicQuantizeLinear): qnnweb runs statically quantized "
                "models: quantize with " + STATIC_HOW)
        wide = {c.dtype for n in self.nodes  # activations: what a QuantizeLinear of a computed tensor gives
                if n.op_type == "QuantizeLinear" and len(n.input) > 2 and n.input[0] not in self.constants
                for c in [self.constants.get(n.input[2])] if c is not None and c.dtype in ("int16", "uint16")}
        if wide:
            raise QuantizationModeError(
                f"the model has {'/'.join(sorted(wide))} activations (quantize_static with a QInt16 / QUInt16 "
                "activation_type): qnnweb runs 8-bit activations: quantize with " + STATIC_HOW)

    def _known(self, node):
        return node.domain in ("", "ai.onnx", "com.microsoft") and (
            hasattr(self, f"_op_{node.op_type}") or node.op_type in self.FOLDABLE)

    def _mark_done(self, node):
        """`node` (an object of self.nodes, a later node) is handled by the current one: skip it."""
        self.done.add(self.node_index[id(node)])

    def _node(self, node):
        problem = arity_problem(node) if self._known(node) else None
        if problem:
            raise Skip(problem)
        if self._fold(node):  # integer shape arithmetic on constants and static shapes (folding.py)
            return
        if node.domain not in ("", "ai.onnx", "com.microsoft"):
            raise Skip(f"operator domain {node.domain} not supported")
        handler = getattr(self, f"_op_{node.op_type}", None)
        if handler is None:
            raise Skip("operator not supported")
        self.node = node
        handler(node, _attributes(node))

    # ---------------------------------------------------------------- tensors

    def _tensor(self, name, shape, dtype, scale=(), zero_point=(), data=None, axis=0):
        if data is None and not all(isinstance(d, int) and d > 0 for d in shape):
            # an activation of a node whose window arithmetic gives no output (corrupt sizes or strides)
            raise Skip(f"its output '{name}' would have shape {list(shape)}; activations must not be empty")
        index = len(self.tensors)
        self.tensors.append(Tensor(index, name, tuple(shape), dtype, tuple(scale), tuple(zero_point), axis, data))
        return index

    def _graph_input(self, value_info):
        tensor_type = value_info.type.tensor_type
        dtype = tensor_dtype(tensor_type.elem_type)
        dims = list(tensor_type.shape.dim)
        given = self.input_shapes.get(value_info.name)
        if given is not None and len(given) != len(dims):
            raise ValueError(f"input_shapes[{value_info.name!r}] = {list(given)} has rank {len(given)}; "
                             f"the model's input has rank {len(dims)}")
        shape = []
        for k, d in enumerate(dims):
            fixed = d.HasField("dim_value") and d.dim_value > 0
            if given is not None:
                if fixed and given[k] != d.dim_value:
                    raise ValueError(f"input_shapes[{value_info.name!r}] = {list(given)}: dimension {k} is fixed at "
                                     f"{d.dim_value} in the model")
                shape.append(given[k])
            elif fixed:
                shape.append(int(d.dim_value))
            elif k == 0:
                shape.append(1)  # a symbolic batch ("N", "batch_size"): 1 unless input_shapes says otherwise
            else:
                raise ModelError(f"input '{value_info.name}' has a dynamic dimension {k} "
                                 f"({d.dim_param or 'unnamed'}); give its size with "
                                 f"qnnweb.load(..., input_shapes={{{value_info.name!r}: [...]}})")
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
        return tuple(shape[i] for i in channels_first(len(shape))) if value.nhwc else shape

    def _transpose(self, index, perm):
        """IR index of tensor ``index`` permuted; a constant is permuted here, into a new constant."""
        key = (index, tuple(perm))
        if key not in self.transposed:
            t = self.tensors[index]
            shape = [t.shape[p] for p in perm]
            if t.is_constant:
                data = permuted_bytes(t.data, t.shape, perm, DTYPE_SIZES[t.dtype])
                out = self._tensor(t.name + "/transposed", shape, t.dtype, t.scale, t.zero_point, data)
            else:
                out = self._tensor(t.name + "/transposed", shape, t.dtype, t.scale, t.zero_point)
                self._op("TRANSPOSE", [index], [out], perm=list(perm))
            self.transposed[key] = out
        return self.transposed[key]

    def _reshaped(self, index, shape, suffix):
        """IR index of tensor ``index`` with another shape, the same bytes: a RESHAPE (no copy), or for
        a constant a new constant sharing the data (an op would leave it without data)."""
        t = self.tensors[index]
        if t.is_constant:
            return self._tensor(t.name + suffix, shape, t.dtype, t.scale, t.zero_point, t.data)
        out = self._tensor(t.name + suffix, shape, t.dtype, t.scale, t.zero_point)
        self._op("RESHAPE", [index], [out])
        return out

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
        perm = channels_first(len(shape))
        if shape[1] == 1 and shape[2] == 1:  # [N,1,1,C] and [N,C,1,1] are the same bytes
            out = self._reshaped(value.index, [shape[p] for p in perm], "/nchw")
            self.values[name] = Value(out)
            return out
        return self._transpose(value.index, perm)

