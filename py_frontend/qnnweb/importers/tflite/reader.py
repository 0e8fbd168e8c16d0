"""The TFLite flatbuffer's tables read field by field: tensors and their buffers, op codes, custom ops,
the model's signatures (vtable slots from schema.fbs; the generated ``tflite`` readers are used for op
options only, options.py)."""

import struct

from flatbuffers import flexbuffers
from tflite.TensorType import TensorType

from ...errors import ModelError
from ...graph import Tensor
from ..flatbuffer_table import Table, field_offsets, scalars_at, string_at, table_at
from ..input_shapes import unknown_inputs

_I8 = struct.Struct("<b").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U32 = struct.Struct("<I").unpack_from
TYPE_NAMES = {v: k.lower() for k, v in vars(TensorType).items() if not k.startswith("_")}
DTYPES = {"float32": "float32", "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64"}

# vtable slots of the fields read here (schema.fbs field order: slot = 4 + 2 * field id)
MODEL_OPERATOR_CODES, MODEL_SUBGRAPHS, MODEL_BUFFERS = 6, 8, 12
SUBGRAPH_TENSORS, SUBGRAPH_INPUTS, SUBGRAPH_OUTPUTS, SUBGRAPH_OPERATORS = 4, 6, 8, 10
CODE_DEPRECATED_BUILTIN, CODE_CUSTOM, CODE_BUILTIN = 4, 6, 10
OPERATOR_CUSTOM_OPTIONS = 14
# custom ops qnnweb runs, by their custom_code: the IR op type
CUSTOM_OPS = {b"TFLite_Detection_PostProcess": "DETECTION_POSTPROCESS"}
TENSOR_FIELDS = 5            # shape, type, buffer, name, quantization (what read_tensor reads)
QUANTIZATION_FIELDS = 7      # min, max, scale, zero_point, details_type, details, quantized_dimension
OPERATOR_FIELDS = 5          # opcode_index, inputs, outputs, builtin_options_type, builtin_options
BUFFER_DATA, BUFFER_OFFSET, BUFFER_SIZE = 4, 6, 8
MODEL_SIGNATURE_DEFS, TENSOR_SHAPE_SIGNATURE = 18, 18
SIGNATURE_INPUTS, SIGNATURE_OUTPUTS, SIGNATURE_KEY, SIGNATURE_SUBGRAPH = 4, 6, 8, 12
TENSOR_MAP_NAME, TENSOR_MAP_INDEX = 4, 6


def custom_op(index, code, operator):
    """(IR op type, options) of a CUSTOM op: a custom op qnnweb runs with its flexbuffer options read, any
    other named so that the error says which custom op it is."""
    name = code.string(CODE_CUSTOM) or b""
    if name not in CUSTOM_OPS:
        return f"CUSTOM {name.decode('utf-8', 'replace') or '(unnamed)'}", {}
    start, size = operator.bytes_span(OPERATOR_CUSTOM_OPTIONS)
    blob = bytes(operator.bytes[start:start + size])
    try:
        options = flexbuffers.Loads(blob) if size else None
    except Exception as e:  # the reader raises whatever a malformed blob makes it trip on
        raise ModelError(f"op {index} {name.decode()}: its custom options are not a valid flexbuffer ({e})") from None
    if not isinstance(options, dict):
        raise ModelError(f"op {index} {name.decode()}: its custom options are not a flexbuffer map")
    return CUSTOM_OPS[name], options


def model_source(model, tensor_positions, tensors, graph_inputs, graph_outputs, input_shapes):
    """The model edges' shape signatures (-1: a dynamic dimension) and the first subgraph's signature
    definitions, as ai-edge-litert reports them."""
    signature = {}
    for i in graph_inputs + graph_outputs:
        stored = Table(model.bytes, tensor_positions[i]).scalars(TENSOR_SHAPE_SIGNATURE, "i", "shape signature", 8)
        signature[i] = list(stored) if len(stored) == len(tensors[i].shape) else list(tensors[i].shape)
    dynamic = {tensors[i].name: [k for k, d in enumerate(signature[i]) if d < 0]
               for i in graph_inputs if tensors[i].name not in input_shapes}
    signatures = []
    for definition in model.tables(MODEL_SIGNATURE_DEFS, "signature"):
        if definition.scalar(SIGNATURE_SUBGRAPH, "<I") != 0:
            continue  # qnnweb runs the first subgraph

        def tensor_map(slot, definition=definition):
            pairs = {}
            for entry in definition.tables(slot, "signature tensor"):
                index = entry.scalar(TENSOR_MAP_INDEX, "<I")
                if index >= len(tensors):
                    raise ModelError(f"corrupt TFLite flatbuffer: a signature refers to tensor {index}")
                pairs[(entry.string(TENSOR_MAP_NAME) or b"").decode("utf-8", "replace")] = index
            return pairs

        key = (definition.string(SIGNATURE_KEY) or b"").decode("utf-8", "replace")
        signatures.append({"key": key, "inputs": tensor_map(SIGNATURE_INPUTS),
                           "outputs": tensor_map(SIGNATURE_OUTPUTS)})
    return {"dynamic": {k: v for k, v in dynamic.items() if v}, "shape_signature": signature,
            "signatures": signatures}


def set_batch(tensors, graph_inputs, input_shapes):
    """TFLite files store every tensor's shape: a new batch (the first dimension of the inputs) is given
    to every activation tensor whose first dimension is the model's batch. Only the batch can change."""
    names = {tensors[i].name: i for i in graph_inputs}
    unknown_inputs(input_shapes, names)
    batches = set()
    for name, shape in input_shapes.items():
        t = tensors[names[name]]
        if len(shape) != len(t.shape) or not t.shape or tuple(shape[1:]) != tuple(t.shape[1:]):
            raise ValueError(f"input_shapes[{name!r}] = {list(shape)}: a TFLite model's inputs can change only their "
                             f"batch (first) dimension; the input is {list(t.shape)}")
        batches.add((t.shape[0], shape[0]))
    if len(batches) != 1:
        raise ValueError(f"input_shapes give the inputs different batches: {sorted(b for _, b in batches)}")
    (old, new), = batches
    for t in tensors:
        if t.data is None and t.shape and t.shape[0] == old:
            t.shape = (new,) + tuple(t.shape[1:])


def builtin_code(code):
    """The op code as TFLite's ``GetBuiltinCode`` reads it: the larger of the two raw fields. Older
    files set only ``deprecated_builtin_code`` (an int8, codes < 127), newer converters (ai-edge-quantizer,
    litert-torch) only ``builtin_code``. The ``tflite`` package's ``BuiltinCode()`` is not used: it returns
    the deprecated field whenever ``builtin_code`` < 127, so such files would read as all ADD (0)."""
    return max(code.scalar(CODE_BUILTIN, "<i"), code.scalar(CODE_DEPRECATED_BUILTIN, "<b"))


def read_tensor(buf, pos, index, buffers):
    """The tensor table at ``pos``, read field by field at the vtable's offsets (the hottest reader: one
    call per tensor)."""
    shape_at, type_at, buffer_at, name_at, quantization_at = field_offsets(buf, pos, TENSOR_FIELDS)
    shape = scalars_at(buf, pos + shape_at, "i", "shape", 8) if shape_at else ()
    elements = 1
    for d in shape:
        if d < 0:
            raise ModelError(f"tensor {index} has a dynamic or negative dimension in shape {list(shape)}; "
                             "qnnweb needs static shapes")
        elements *= d
    if elements > 1 << 30:
        raise ModelError(f"tensor {index} has {elements} elements: too large for WebAssembly memory")
    type_code = _I8(buf, pos + type_at)[0] if type_at else 0
    type_name = TYPE_NAMES.get(type_code, f"type{type_code}")
    dtype = DTYPES.get(type_name, type_name)
    name = string_at(buf, pos + name_at) if name_at else None
    name = name.decode("utf-8", "replace") if name else f"tensor{index}"
    scale, zero_point, axis = (), (), 0
    if quantization_at:
        q = table_at(buf, pos + quantization_at)
        _, _, scale_at, zero_point_at, _, _, dimension_at = field_offsets(buf, q, QUANTIZATION_FIELDS)
        scale = scalars_at(buf, q + scale_at, "f", "scale") if scale_at else ()
        if scale:
            zero_point = scalars_at(buf, q + zero_point_at, "q", "zero point") if zero_point_at else ()
            axis = _I32(buf, q + dimension_at)[0] if dimension_at else 0
    data = _buffer_data(buffers, _U32(buf, pos + buffer_at)[0], buf) if buffer_at else None
    return Tensor(index, name, shape, dtype, scale, zero_point, axis, data)


def _buffer_data(buffers, buffer_index, buf):
    if buffer_index == 0 or buffer_index >= len(buffers):
        return None
    b = buffers[buffer_index]
    offset = b.scalar(BUFFER_OFFSET, "<Q")
    if offset > 1:
        # Large models keep buffers after the flatbuffer: offset is from the start of the file.
        start, size = offset, b.scalar(BUFFER_SIZE, "<Q")
        if start + size > len(buf):
            raise ModelError(f"truncated TFLite file: buffer {buffer_index} ends at byte {start + size}, file has {len(buf)}")
        return memoryview(buf)[start:start + size]
    start, size = b.bytes_span(BUFFER_DATA)
    if start + size > len(buf):
        raise ModelError(f"truncated TFLite file: buffer {buffer_index} ends past the end of the file")
    return memoryview(buf)[start:start + size] if size else None
