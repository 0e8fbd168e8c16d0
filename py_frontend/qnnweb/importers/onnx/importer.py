"""The node loop: an ONNX ModelProto imported node by node (registry.handle_node) into an IR Graph, with
the model's inputs and outputs at the edges; every node that cannot run is collected and reported
together (UnsupportedModelError)."""

from dataclasses import replace

from ...errors import ModelError, QuantizationModeError, UnsupportedModelError
from ...graph import INDEX_DTYPES, Graph
from ..input_shapes import unknown_inputs
from .constants import Constant
from .context import ImportContext, Value
from .integer_inputs import integer_input
from .layout import plain_index
from .proto import DATA_TYPES, tensor_bytes, tensor_dtype
from .registry import handle_node, known
from .skip import Skip

STATIC_HOW = "onnxruntime.quantization.quantize_static (QDQ or QOperator, int8 or uint8 activations)"
# what reads a DynamicQuantizeLinear output in the dynamically quantized models qnnweb runs (dynamic.py)
DYNAMIC_PRODUCTS = {"MatMulInteger", "MatMulIntegerToFloat", "ConvInteger"}


def import_graph(model, input_shapes=None):
    """The IR Graph of a parsed ModelProto, or UnsupportedModelError listing every node that cannot run."""
    ctx = ImportContext(model, input_shapes)
    for t in ctx.graph.initializer:
        dtype, shape, data = tensor_bytes(t)
        ctx.constants[t.name] = Constant(t.name, dtype, shape, data)
    # One list of the node objects, used everywhere: protobuf may hand out a new wrapper object on
    # each access to a repeated field, so id() is a stable key only for objects kept alive here.
    ctx.nodes = list(ctx.graph.node)
    for i, node in enumerate(ctx.nodes):
        ctx.node_index[id(node)] = i
        for name in node.input:
            if name:
                ctx.consumers[name].append(node)
    require_quantized(ctx)
    ctx.outputs = [o.name for o in ctx.graph.output]
    inputs = []
    graph_inputs = [v for v in ctx.graph.input if v.name not in ctx.constants]
    unknown_inputs(ctx.input_shapes, [v.name for v in graph_inputs])
    for value_info in graph_inputs:
        inputs.append(graph_input(ctx, value_info))
    ctx.graph_input_indices = set(inputs)
    for position, node in enumerate(ctx.nodes):
        if position in ctx.done:
            continue
        if any(name in ctx.failed for name in node.input):
            ctx.failed.update(node.output)
            if not known(node):  # its inputs' problem is reported already; its own is reported too
                ctx.problems.append((position, node_label(node), "operator not supported"))
            continue
        done_before = set(ctx.done)
        try:
            handle_node(ctx, node)
        except Skip as e:
            ctx.problems.append((position, node_label(node), str(e)))
            ctx.failed.update(node.output)
            for fused in ctx.done - done_before:  # the QuantizeLinear / Relu it was fusing cannot run either
                ctx.failed.update(ctx.nodes[fused].output)
    for name in ctx.outputs:
        if name not in ctx.values and ctx.views.get(name) in ctx.values:
            # a float result that is a view of an int8 tensor (an op that only moved or selected
            # dequantized values): the model's output is that tensor dequantized
            value = ctx.values[ctx.views[name]]
            index = ctx.add_tensor(name, ctx.tensors[value.index].shape, "float32")
            ctx.add_op("DEQUANTIZE", [value.index], [index])
            ctx.values[name] = Value(index, value.nhwc)
    outputs = []
    for name in ctx.outputs:
        if name in ctx.values:
            inner = ctx.values[name].index
            index = plain_index(ctx, name)
            if index != inner:
                # moved back to ONNX's layout: the model's output keeps the model's name, the NHWC
                # tensor it came from is the one renamed
                ctx.tensors[inner] = replace(ctx.tensors[inner], name=name + "/nhwc")
                ctx.tensors[index] = replace(ctx.tensors[index], name=name)
            outputs.append(as_declared(ctx, name, index))
        elif name not in ctx.failed:
            ctx.problems.append((-1, f"output '{name}'", "is computed in float; only int8 ops run"))
    if ctx.problems and ctx.placeholders:
        ctx.problems.append((-1, "symbolic dimensions", f"{', '.join(ctx.placeholders)} taken as 1 to load: give "
                             "their sizes with qnnweb.load(..., input_shapes={name: [...]}) if that is the cause"))
    if ctx.problems:
        raise UnsupportedModelError(ctx.problems)
    return Graph(ctx.tensors, ctx.ops, inputs, outputs, "onnx", source(ctx, graph_inputs))


def as_declared(ctx, name, index):
    """A model output the graph declares uint8 (a QuantizeLinear to uint8 at the end of a QDQ or
    QOperator model), computed as qnnweb's int8: shifted back to uint8 by a QUANTIZE, the model's
    name moving to the uint8 tensor. The one place this is done, whatever op made the output."""
    t = ctx.tensors[index]
    declared = DATA_TYPES.get(next(o.type.tensor_type.elem_type for o in ctx.graph.output if o.name == name))
    uint8 = (declared or (None,))[0] == "uint8" or (
        declared is None and ctx.quantization.get(name, (None, None, None))[2] == "uint8")
    if t.dtype != "int8" or not uint8:
        return index
    ctx.tensors[index] = replace(t, name=name + "/int8")
    out = ctx.add_tensor(name, t.shape, "uint8", t.scale, tuple(z + 128 for z in t.zero_point))
    ctx.add_op("QUANTIZE", [index], [out])
    return out


def source(ctx, graph_inputs):
    """The declared dimensions (a name for a symbolic one) and the model's metadata, as onnxruntime
    reports them; which input dimensions are symbolic (and were not given by input_shapes)."""
    def dims(value_info):
        return [int(d.dim_value) if d.HasField("dim_value") else (d.dim_param or None)
                for d in value_info.type.tensor_type.shape.dim]

    declared = {v.name: dims(v) for v in [*graph_inputs, *ctx.graph.output]}
    dynamic = {v.name: [k for k, d in enumerate(declared[v.name]) if not isinstance(d, int) or d <= 0]
               for v in graph_inputs if v.name not in ctx.input_shapes}
    m = ctx.model
    metadata = {"producer_name": m.producer_name, "graph_name": ctx.graph.name, "domain": m.domain,
                "description": m.doc_string, "graph_description": ctx.graph.doc_string,
                # onnxruntime's answer for a model without a version: INT64_MAX
                "version": int(m.model_version) if m.HasField("model_version") else (1 << 63) - 1,
                "custom_metadata_map": {p.key: p.value for p in m.metadata_props}}
    return {"dynamic": {k: v for k, v in dynamic.items() if v}, "dims": declared, "metadata": metadata}


def node_label(node):
    domain = f"{node.domain}." if node.domain and node.domain != "ai.onnx" else ""
    return f"{domain}{node.op_type}" + (f" '{node.name}'" if node.name else "")


def require_quantized(ctx):
    """A float model (no quantization anywhere) is refused with a pointer to the quantizers."""
    quantized = any(n.op_type in ("QuantizeLinear", "DequantizeLinear") or n.op_type.startswith("QLinear")
                    or n.op_type in ("QGemm", "ConvInteger", "MatMulInteger", "DynamicQuantizeLinear")
                    for n in ctx.nodes)
    quantized = quantized or any(c.dtype in ("int8", "uint8") for c in ctx.constants.values())
    quantized = quantized or any(tensor_dtype(v.type.tensor_type.elem_type) in ("int8", "uint8")
                                 for v in ctx.graph.input)
    if ctx.nodes and not quantized:
        raise ModelError("the model is not quantized (it computes in float): qnnweb runs int8 models. Quantize "
                         "it first, e.g. with " + STATIC_HOW)
    # the quantizer's other modes, refused with what they are before the per-node problems
    dynamic_readers = {reader.op_type for n in ctx.nodes if n.op_type == "DynamicQuantizeLinear"
                       for reader in ctx.consumers[n.output[0]]} - DYNAMIC_PRODUCTS
    if dynamic_readers:
        raise QuantizationModeError(
            f"the model is dynamically quantized (onnxruntime.quantization.quantize_dynamic: activations quantized "
            f"at run time by DynamicQuantizeLinear) and reads them with {', '.join(sorted(dynamic_readers))}: of such "
            "models qnnweb runs the integer products (MatMulInteger, ConvInteger) only: quantize with " + STATIC_HOW)
    wide = {c.dtype for n in ctx.nodes  # activations: what a QuantizeLinear of a computed tensor gives
            if n.op_type == "QuantizeLinear" and len(n.input) > 2 and n.input[0] not in ctx.constants
            for c in [ctx.constants.get(n.input[2])] if c is not None and c.dtype in ("int16", "uint16")}
    if wide:
        raise QuantizationModeError(
            f"the model has {'/'.join(sorted(wide))} activations (quantize_static with a QInt16 / QUInt16 "
            "activation_type): qnnweb runs 8-bit activations: quantize with " + STATIC_HOW)


def graph_input(ctx, value_info):
    tensor_type = value_info.type.tensor_type
    dtype = tensor_dtype(tensor_type.elem_type)
    dims = list(tensor_type.shape.dim)
    given = ctx.input_shapes.get(value_info.name)
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
        else:
            # a symbolic dimension (a batch, a text encoder's sequence_length): 1 unless input_shapes says
            # otherwise; a feed of another size loads the model again for its shape (model.Reloader)
            shape.append(1)
            if k > 0:
                ctx.placeholders.append(f"input '{value_info.name}' dimension {k} ({d.dim_param or 'unnamed'})")
    if dtype not in ("float32", "int8", "uint8", *INDEX_DTYPES):
        ctx.problems.append((-1, f"input '{value_info.name}'", f"dtype {dtype} not supported"))
    index = ctx.add_tensor(value_info.name, shape, dtype)
    ctx.values[value_info.name] = (integer_input(ctx, value_info.name, index) if dtype in INDEX_DTYPES
                                   else Value(index))
    return index
