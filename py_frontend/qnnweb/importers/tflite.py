"""TFLite flatbuffers -> Graph, with the generated schema readers of PyPI ``tflite`` (no numpy).

Only the structure is read here; whether each op can run is decided in ``qnnweb.ops`` so that all
problems of a model are reported together.
"""

import struct

import flatbuffers
from flatbuffers import flexbuffers
from tflite.ActivationFunctionType import ActivationFunctionType
from tflite.AddOptions import AddOptions
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions
from tflite.ConcatenationOptions import ConcatenationOptions
from tflite.Conv2DOptions import Conv2DOptions
from tflite.DepthToSpaceOptions import DepthToSpaceOptions
from tflite.DepthwiseConv2DOptions import DepthwiseConv2DOptions
from tflite.FullyConnectedOptions import FullyConnectedOptions
from tflite.GatherOptions import GatherOptions
from tflite.LeakyReluOptions import LeakyReluOptions
from tflite.MirrorPadMode import MirrorPadMode
from tflite.MirrorPadOptions import MirrorPadOptions
from tflite.MulOptions import MulOptions
from tflite.PackOptions import PackOptions
from tflite.Padding import Padding
from tflite.Pool2DOptions import Pool2DOptions
from tflite.ReducerOptions import ReducerOptions
from tflite.ResizeBilinearOptions import ResizeBilinearOptions
from tflite.ResizeNearestNeighborOptions import ResizeNearestNeighborOptions
from tflite.SoftmaxOptions import SoftmaxOptions
from tflite.SpaceToDepthOptions import SpaceToDepthOptions
from tflite.SplitOptions import SplitOptions
from tflite.SplitVOptions import SplitVOptions
from tflite.StridedSliceOptions import StridedSliceOptions
from tflite.SubOptions import SubOptions
from tflite.TensorType import TensorType
from tflite.TransposeConvOptions import TransposeConvOptions

from ..errors import ModelError, QuantizationModeError
from ..graph import Graph, Op, Tensor
from . import shape_folding as folding
from .flatbuffer_table import Table, field_offsets, scalars_at, string_at, table_at
from .shape_folding import FoldError

_I8 = struct.Struct("<b").unpack_from
_U8 = struct.Struct("<B").unpack_from
_I32 = struct.Struct("<i").unpack_from
_U32 = struct.Struct("<I").unpack_from
OP_NAMES = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
TYPE_NAMES = {v: k.lower() for k, v in vars(TensorType).items() if not k.startswith("_")}
ACTIVATIONS = {v: k for k, v in vars(ActivationFunctionType).items() if not k.startswith("_")}
DTYPES = {"float32": "float32", "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64"}


def import_tflite(data, input_shapes=None):
    if len(data) < 16:
        raise ModelError(f"truncated TFLite file: {len(data)} bytes")
    try:
        return _read(data, input_shapes or {})
    except ModelError:
        raise
    except (IndexError, ValueError, TypeError, KeyError, OverflowError, struct.error, UnicodeDecodeError,
            flatbuffers.builder.OffsetArithmeticError) as e:
        raise ModelError(f"corrupt or truncated TFLite flatbuffer ({type(e).__name__}: {e})") from None


# vtable slots of the fields read here (schema.fbs field order: slot = 4 + 2 * field id)
MODEL_OPERATOR_CODES, MODEL_SUBGRAPHS, MODEL_BUFFERS = 6, 8, 12
SUBGRAPH_TENSORS, SUBGRAPH_INPUTS, SUBGRAPH_OUTPUTS, SUBGRAPH_OPERATORS = 4, 6, 8, 10
CODE_DEPRECATED_BUILTIN, CODE_CUSTOM, CODE_BUILTIN = 4, 6, 10
OPERATOR_CUSTOM_OPTIONS = 14
# custom ops qnnweb runs, by their custom_code: the IR op type
CUSTOM_OPS = {b"TFLite_Detection_PostProcess": "DETECTION_POSTPROCESS"}
TENSOR_FIELDS = 5            # shape, type, buffer, name, quantization (what _tensor reads)
QUANTIZATION_FIELDS = 7      # min, max, scale, zero_point, details_type, details, quantized_dimension
OPERATOR_FIELDS = 5          # opcode_index, inputs, outputs, builtin_options_type, builtin_options
BUFFER_DATA, BUFFER_OFFSET, BUFFER_SIZE = 4, 6, 8
MODEL_SIGNATURE_DEFS, TENSOR_SHAPE_SIGNATURE = 18, 18
SIGNATURE_INPUTS, SIGNATURE_OUTPUTS, SIGNATURE_KEY, SIGNATURE_SUBGRAPH = 4, 6, 8, 12
TENSOR_MAP_NAME, TENSOR_MAP_INDEX = 4, 6


def _read(data, input_shapes):
    buf = bytes(data) if not isinstance(data, (bytes, bytearray)) else data
    model = Table.root(buf)
    subgraphs = model.tables(MODEL_SUBGRAPHS, "subgraph")
    if not subgraphs:
        raise ModelError("TFLite model has no subgraph")
    subgraph = subgraphs[0]
    codes = model.tables(MODEL_OPERATOR_CODES, "operator code")
    opcodes = [_builtin_code(code) for code in codes]
    buffers = model.tables(MODEL_BUFFERS, "buffer")
    tensor_positions = subgraph.table_positions(SUBGRAPH_TENSORS, "tensor")
    tensors = [_tensor(buf, pos, i, buffers) for i, pos in enumerate(tensor_positions)]
    ops = []
    n_tensors = len(tensors)
    for i, pos in enumerate(subgraph.table_positions(SUBGRAPH_OPERATORS, "operator")):
        code_at, inputs_at, outputs_at, options_type_at, options_at = field_offsets(buf, pos, OPERATOR_FIELDS)
        code_index = _U32(buf, pos + code_at)[0] if code_at else 0
        if code_index >= len(opcodes):
            raise ModelError(f"corrupt TFLite flatbuffer: op {i} has opcode index {code_index}")
        op_type = OP_NAMES.get(opcodes[code_index], f"BUILTIN_{opcodes[code_index]}")
        options = {}
        if op_type == "CUSTOM":
            op_type, options = _custom_op(i, codes[code_index], Table(buf, pos))
        inputs = list(scalars_at(buf, pos + inputs_at, "i", "op input")) if inputs_at else []
        outputs = list(scalars_at(buf, pos + outputs_at, "i", "op output")) if outputs_at else []
        for t in inputs + outputs:
            if t >= n_tensors or t < -1:
                raise ModelError(f"corrupt TFLite flatbuffer: op {i} refers to tensor {t}")
        if op_type in OPTIONS:
            options_class, options_type, read = OPTIONS[op_type]
            stored_type = _U8(buf, pos + options_type_at)[0] if options_type_at else 0
            table = Table(buf, table_at(buf, pos + options_at)) if options_at and stored_type == options_type else None
            options = read(_options_reader(options_class, table), tensors, inputs)
        ops.append(Op(i, op_type, inputs, outputs, options))

    graph_inputs = list(subgraph.scalars(SUBGRAPH_INPUTS, "i", "input"))
    graph_outputs = list(subgraph.scalars(SUBGRAPH_OUTPUTS, "i", "output"))
    for t in graph_inputs + graph_outputs:
        if not 0 <= t < len(tensors):
            raise ModelError(f"corrupt TFLite flatbuffer: graph input/output refers to tensor {t}")
    source = _source(model, tensor_positions, tensors, graph_inputs, graph_outputs, input_shapes)
    if input_shapes:
        _set_batch(tensors, graph_inputs, input_shapes)
    if ops and not any(t.quantized and t.dtype in ("int8", "uint8") for t in tensors):
        raise ModelError("the model is not quantized (it computes in float): qnnweb runs int8 models. Quantize it "
                         "first: TensorFlow's converter with full-integer post-training quantization, or "
                         "ai-edge-quantizer (recipe static_wi8_ai8) for files from litert-torch or MediaPipe")
    _require_full_integer(tensors, ops)
    ops = _quantized_float_islands(tensors, _fold_shape_arithmetic(tensors, ops), graph_outputs)
    ops = _detection_inputs_in_float(tensors, ops)
    return Graph(tensors, ops, graph_inputs, graph_outputs, "tflite", source)


# ops whose weights a quantizer's other modes keep int8 while the activations stay float
WEIGHTED_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "BATCH_MATMUL")
FULL_INTEGER_HOW = ("qnnweb runs full-integer models (int8 weights and activations): quantize with "
                    "ai-edge-quantizer's static_wi8_ai8 recipe, or TensorFlow's converter with full-integer "
                    "post-training quantization (a representative dataset)")


def _require_full_integer(tensors, ops):
    """A model a quantizer made in another mode than full integer is refused with what it is, before the
    per-op problems (each of its convolutions would be one): 16-bit activations (static_wi8_ai16, TensorFlow's
    16x8 mode), int8 weights on float activations (dynamic range: dynamic_wi8_afp32, TensorFlow's default
    optimization without a representative dataset) or int8 weights dequantized to float (weight only)."""
    if any(t.dtype == "int16" and t.quantized and not t.is_constant for t in tensors):
        raise QuantizationModeError("the model has 16-bit activations (ai-edge-quantizer's static_wi8_ai16, "
                                    "TensorFlow's 16x8 quantization): " + FULL_INTEGER_HOW)
    dequantized = {op.outputs[0]: op.inputs[0] for op in ops if op.type == "DEQUANTIZE" and op.inputs and op.outputs}
    for op in ops:
        if op.type not in WEIGHTED_OPS or len(op.inputs) < 2 or op.inputs[0] < 0 or op.inputs[1] < 0:
            continue
        x, w = tensors[op.inputs[0]], tensors[op.inputs[1]]
        if x.dtype != "float32" or x.is_constant:
            continue
        if w.dtype == "int8" and w.is_constant:
            raise QuantizationModeError(
                "the model is dynamic-range quantized (int8 weights, float activations: ai-edge-quantizer's "
                "dynamic_wi8_afp32, TensorFlow's converter with Optimize.DEFAULT and no representative dataset): "
                + FULL_INTEGER_HOW)
        source = dequantized.get(op.inputs[1])
        if source is not None and tensors[source].dtype in ("int8", "int4") and tensors[source].is_constant:
            raise QuantizationModeError(
                "the model is weight-only quantized (int8 weights dequantized to float, float activations: "
                "ai-edge-quantizer's weight_only_wi8_afp32): " + FULL_INTEGER_HOW)


def _custom_op(index, code, operator):
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


def _detection_inputs_in_float(tensors, ops):
    """TFLite's detection post-processing dequantizes uint8 box encodings and class predictions itself:
    here a DEQUANTIZE before the op does it (int8 too, which TFLite's kernel refuses), and quantized
    anchors become float32 constants, (float(q) - zero point) * scale in float32 as that kernel computes them."""
    out = []
    for op in ops:
        if op.type != "DETECTION_POSTPROCESS" or len(op.inputs) != 3 or not all(0 <= i < len(tensors) for i in op.inputs):
            out.append(op)
            continue
        inputs = list(op.inputs)
        for k in (0, 1, 2):
            t = tensors[inputs[k]]
            if t.dtype not in ("uint8", "int8") or len(t.scale) != 1:
                continue
            if k == 0 and t.dtype == "uint8" and tensors[inputs[2]].dtype != "uint8":
                continue  # TFLite reads the anchors as uint8 too then: left for lowering to refuse
            index = len(tensors)
            if k == 2 and t.is_constant:
                scale, zp = struct.unpack("<f", struct.pack("<f", t.scale[0]))[0], t.zero_point[0]
                values = struct.unpack(f"<{len(t.data)}{'B' if t.dtype == 'uint8' else 'b'}", bytes(t.data))
                data = struct.pack(f"<{len(values)}f", *((q - zp) * scale for q in values))
                tensors.append(Tensor(index, t.name + "/float", t.shape, "float32", data=data))
            else:
                tensors.append(Tensor(index, t.name + "/dequantized", t.shape, "float32"))
                out.append(Op(op.index, "DEQUANTIZE", [inputs[k]], [index]))
            inputs[k] = index
        out.append(Op(op.index, op.type, inputs, list(op.outputs), op.options))
    return out


def _source(model, tensor_positions, tensors, graph_inputs, graph_outputs, input_shapes):
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


def _set_batch(tensors, graph_inputs, input_shapes):
    """TFLite files store every tensor's shape: a new batch (the first dimension of the inputs) is given
    to every activation tensor whose first dimension is the model's batch. Only the batch can change."""
    from . import unknown_inputs

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


def _builtin_code(code):
    """The op code as TFLite's ``GetBuiltinCode`` reads it: the larger of the two raw fields. Older
    files set only ``deprecated_builtin_code`` (an int8, codes < 127), newer converters (ai-edge-quantizer,
    litert-torch) only ``builtin_code``. The ``tflite`` package's ``BuiltinCode()`` is not used: it returns
    the deprecated field whenever ``builtin_code`` < 127, so such files would read as all ADD (0)."""
    return max(code.scalar(CODE_BUILTIN, "<i"), code.scalar(CODE_DEPRECATED_BUILTIN, "<b"))


def _tensor(buf, pos, index, buffers):
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


# A table with no fields: any options class reads the schema's defaults from it (what TFLite uses when
# a field, or the whole options table, is absent). Its vtable: 4 bytes (no field), table: 4 bytes.
EMPTY_TABLE = Table(struct.pack("<HHi", 4, 4, 4), 4)


def _options_reader(options_class, table):
    """The op's options table read by ``options_class``; an absent table, or one of another type, reads
    as the schema's defaults, as TFLite's own parser does (``builtin_options_as_X()`` is null -> defaults)."""
    options = options_class()
    options._tab = table or EMPTY_TABLE  # the generated accessors read through it (Offset, Get, Pos)
    return options


def _same_padding(in_size, kernel, stride, dilation):
    effective = (kernel - 1) * dilation + 1
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + effective - in_size, 0)
    return total // 2, total - total // 2


def _conv_padding(padding, in_h, in_w, kh, kw, sh, sw, dh, dw):
    if padding == Padding.SAME:
        if min(sh, sw, dh, dw) < 1:
            return [0, 0, 0, 0]  # lowering refuses the stride / dilation with a clear message
        top, bottom = _same_padding(in_h, kh, sh, dh)
        left, right = _same_padding(in_w, kw, sw, dw)
        return [top, bottom, left, right]
    return [0, 0, 0, 0]


def _activation(o):
    return ACTIVATIONS.get(o.FusedActivationFunction(), "UNKNOWN")


def _spatial(tensor):
    return (tensor.shape[1], tensor.shape[2]) if len(tensor.shape) == 4 else (1, 1)


def _conv_options(o, tensors, inputs):
    x = tensors[inputs[0]]
    w = tensors[inputs[1]] if len(inputs) > 1 and inputs[1] >= 0 else None
    kh, kw = (w.shape[1], w.shape[2]) if w is not None and len(w.shape) == 4 else (1, 1)
    sh, sw, dh, dw = o.StrideH(), o.StrideW(), o.DilationHFactor(), o.DilationWFactor()
    return {"stride": (sh, sw), "dilation": (dh, dw), "activation": _activation(o),
            "padding": _conv_padding(o.Padding(), *_spatial(x), kh, kw, sh, sw, dh, dw)}


def _pool_options(o, tensors, inputs):
    kh, kw, sh, sw = o.FilterHeight(), o.FilterWidth(), o.StrideH(), o.StrideW()
    return {"kernel": (kh, kw), "stride": (sh, sw), "activation": _activation(o),
            "padding": _conv_padding(o.Padding(), *_spatial(tensors[inputs[0]]), kh, kw, sh, sw, 1, 1)}


def _transpose_conv_options(o, tensors, inputs):
    """The padding as TFLite's kernel computes it: a forward convolution's padding from the output
    (output_shape, a constant) back to the input; only top and left place the output."""
    sh, sw = o.StrideH(), o.StrideW()
    options = {"stride": (sh, sw), "activation": _activation(o)}
    w = tensors[inputs[1]] if len(inputs) > 1 and 0 <= inputs[1] < len(tensors) else None
    shape = tensors[inputs[0]] if inputs and 0 <= inputs[0] < len(tensors) else None
    if (w is None or len(w.shape) != 4 or shape is None or shape.data is None or shape.dtype != "int32"
            or len(shape.data) != 16 or min(sh, sw) < 1):
        return options   # lowering reports the missing padding
    _, oh, ow, _ = struct.unpack("<4i", bytes(shape.data))
    options["padding"] = [max(p, 0) for p in _conv_padding(o.Padding(), oh, ow, w.shape[1], w.shape[2], sh, sw, 1, 1)]
    return options


def _resize_options(o, tensors, inputs):
    return {"align_corners": bool(o.AlignCorners()), "half_pixel_centers": bool(o.HalfPixelCenters())}


# op type -> (options class, its BuiltinOptions union type, reader of the IR options)
OPTIONS = {
    "CONV_2D": (Conv2DOptions, BuiltinOptions.Conv2DOptions, _conv_options),
    "DEPTHWISE_CONV_2D": (DepthwiseConv2DOptions, BuiltinOptions.DepthwiseConv2DOptions, _conv_options),
    "AVERAGE_POOL_2D": (Pool2DOptions, BuiltinOptions.Pool2DOptions, _pool_options),
    "MAX_POOL_2D": (Pool2DOptions, BuiltinOptions.Pool2DOptions, _pool_options),
    "FULLY_CONNECTED": (FullyConnectedOptions, BuiltinOptions.FullyConnectedOptions,
                        lambda o, t, i: {"activation": _activation(o), "weights_format": o.WeightsFormat()}),
    "ADD": (AddOptions, BuiltinOptions.AddOptions, lambda o, t, i: {"activation": _activation(o)}),
    "SUB": (SubOptions, BuiltinOptions.SubOptions, lambda o, t, i: {"activation": _activation(o)}),
    "DEPTH_TO_SPACE": (DepthToSpaceOptions, BuiltinOptions.DepthToSpaceOptions,
                       lambda o, t, i: {"block_size": o.BlockSize()}),
    "SPACE_TO_DEPTH": (SpaceToDepthOptions, BuiltinOptions.SpaceToDepthOptions,
                       lambda o, t, i: {"block_size": o.BlockSize()}),
    "MUL": (MulOptions, BuiltinOptions.MulOptions, lambda o, t, i: {"activation": _activation(o)}),
    "CONCATENATION": (ConcatenationOptions, BuiltinOptions.ConcatenationOptions,
                      lambda o, t, i: {"axis": o.Axis(), "activation": _activation(o)}),
    "SOFTMAX": (SoftmaxOptions, BuiltinOptions.SoftmaxOptions, lambda o, t, i: {"beta": o.Beta()}),
    "MEAN": (ReducerOptions, BuiltinOptions.ReducerOptions, lambda o, t, i: {"keep_dims": bool(o.KeepDims())}),
    "LEAKY_RELU": (LeakyReluOptions, BuiltinOptions.LeakyReluOptions, lambda o, t, i: {"alpha": o.Alpha()}),
    "STRIDED_SLICE": (StridedSliceOptions, BuiltinOptions.StridedSliceOptions,
                      lambda o, t, i: {"begin_mask": o.BeginMask(), "end_mask": o.EndMask(),
                                       "ellipsis_mask": o.EllipsisMask(), "new_axis_mask": o.NewAxisMask(),
                                       "shrink_axis_mask": o.ShrinkAxisMask(), "offset": bool(o.Offset())}),
    "SPLIT": (SplitOptions, BuiltinOptions.SplitOptions, lambda o, t, i: {"num_splits": o.NumSplits()}),
    "SPLIT_V": (SplitVOptions, BuiltinOptions.SplitVOptions, lambda o, t, i: {"num_splits": o.NumSplits()}),
    "MIRROR_PAD": (MirrorPadOptions, BuiltinOptions.MirrorPadOptions,
                   lambda o, t, i: {"mode": "SYMMETRIC" if o.Mode() == MirrorPadMode.SYMMETRIC else "REFLECT"}),
    "TRANSPOSE_CONV": (TransposeConvOptions, BuiltinOptions.TransposeConvOptions, _transpose_conv_options),
    "PACK": (PackOptions, BuiltinOptions.PackOptions, lambda o, t, i: {"axis": o.Axis()}),
    "GATHER": (GatherOptions, BuiltinOptions.GatherOptions,
               lambda o, t, i: {"axis": o.Axis(), "batch_dims": o.BatchDims()}),
    "RESIZE_BILINEAR": (ResizeBilinearOptions, BuiltinOptions.ResizeBilinearOptions, _resize_options),
    "RESIZE_NEAREST_NEIGHBOR": (ResizeNearestNeighborOptions, BuiltinOptions.ResizeNearestNeighborOptions,
                                _resize_options),
}


# ---------------------------------------------------------------- shape arithmetic folded at import

def _fold_shape_arithmetic(tensors, ops):
    """Evaluate every op of integer shape arithmetic whose inputs are constants or static shapes
    (SHAPE, STRIDED_SLICE, PACK, CONCATENATION, GATHER, CAST, RESHAPE, SQUEEZE, EXPAND_DIMS, ADD,
    SUB, MUL, DIV on int32/int64): its output becomes a constant and the op is dropped."""
    kept = []
    for op in ops:
        try:
            value = _fold(op, tensors)
        except FoldError:
            value = None
        if value is None:
            kept.append(op)
            continue
        y = tensors[op.outputs[0]]
        try:
            y.data = value.to_bytes(y.dtype)
        except FoldError:
            kept.append(op)
            continue
        if y.shape != value.shape and folding.product(y.shape) == folding.product(value.shape):
            y.shape = value.shape
    return kept


INTEGER = ("int32", "int64")


def _constant(tensors, index):
    t = tensors[index] if index >= 0 else None
    if t is None or t.data is None or t.dtype not in INTEGER + ("float32",):
        raise FoldError("not a constant")
    return folding.Folded.from_bytes(t.dtype, t.shape, t.data)


def _fold(op, tensors):
    if len(op.outputs) != 1 or op.outputs[0] < 0:
        return None
    y = tensors[op.outputs[0]]
    if y.dtype not in INTEGER or y.data is not None:
        return None
    if op.type == "SHAPE":
        return folding.shape_of(tensors[op.inputs[0]].shape)
    if op.type not in ("STRIDED_SLICE", "PACK", "CONCATENATION", "GATHER", "CAST", "RESHAPE", "SQUEEZE",
                       "EXPAND_DIMS", *folding.ARITHMETIC):
        return None
    args = [_constant(tensors, i) for i in op.inputs]
    o = op.options
    if op.type == "PACK":
        return folding.stack(args, o.get("axis", 0))
    if op.type == "CONCATENATION":
        return folding.concat(args, o.get("axis", 0))
    if op.type == "GATHER":
        return folding.gather(args[0], args[1], o.get("axis", 0))
    if op.type in ("CAST", "RESHAPE", "SQUEEZE", "EXPAND_DIMS"):
        return folding.reshape(args[0], y.shape)
    if op.type in folding.ARITHMETIC:
        return folding.elementwise(folding.ARITHMETIC[op.type], args[0], args[1])
    return _strided_slice(args, o)


def _strided_slice(args, o):
    x, begin, end, strides = args
    if len(x.shape) != 1 or len(begin.values) != 1 or o.get("ellipsis_mask") or o.get("new_axis_mask"):
        raise FoldError("only 1-D strided slices")
    step = int(strides.values[0])
    b, e = int(begin.values[0]), int(end.values[0])
    if o.get("offset"):
        e += b
    size = x.shape[0]
    if o.get("begin_mask", 0) & 1:
        b = 0 if step > 0 else size - 1
    if o.get("end_mask", 0) & 1:
        e = size if step > 0 else -size - 1
    if o.get("shrink_axis_mask", 0) & 1:
        if not -size <= b < size:
            raise FoldError("index outside the tensor")
        return folding.Folded((), [x.values[b % size]])
    b, e = folding.clamp_bounds(b, e, step, size)
    if step < 0 and e == -1:
        e = None
    return folding.slice_1d(x, b, e, step)


# ---------------------------------------------------------------- float unary ops between int8 ops

FLOAT_UNARY = ("RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "LOGISTIC", "TANH", "HARD_SWISH")


def _quantized_float_islands(tensors, ops, graph_outputs):
    """ai-edge-quantizer leaves some activations in float between int8 ops: DEQUANTIZE(int8 x) -> RELU6
    (float) -> QUANTIZE(int8 y), and PRELU with its float slopes (MediaPipe's Face Mesh). Each such op
    becomes the int8 op x -> y (a 256-entry table, per slope for PRELU: the same function of the same 256
    input values); the QUANTIZE goes, and the DEQUANTIZE too once nothing else reads it."""
    producer = {o: op for op in ops for o in op.outputs}
    readers = {}
    for op in ops:
        for i in op.inputs:
            readers.setdefault(i, []).append(op)
    replaced, dropped = {}, set()
    for op in ops:
        prelu = (op.type == "PRELU" and len(op.inputs) == 2 and 0 <= op.inputs[1] < len(tensors)
                 and tensors[op.inputs[1]].is_constant and tensors[op.inputs[1]].dtype == "float32")
        if (op.type not in FLOAT_UNARY and not prelu) or not op.inputs or len(op.outputs) != 1:
            continue
        source = producer.get(op.inputs[0])
        quantizers = readers.get(op.outputs[0], [])
        if (source is None or source.type != "DEQUANTIZE" or not source.inputs or op.outputs[0] in graph_outputs
                or tensors[source.inputs[0]].dtype != "int8" or len(quantizers) != 1
                or quantizers[0].type != "QUANTIZE" or tensors[quantizers[0].outputs[0]].dtype != "int8"):
            continue
        # float_island: LiteRT computes it in float (its int8 kernel's fixed point does not apply)
        replaced[id(op)] = Op(op.index, op.type, [source.inputs[0], *op.inputs[1:]], list(quantizers[0].outputs),
                              dict(op.options, float_island=True))
        dropped.add(id(quantizers[0]))
    kept = [replaced.get(id(op), op) for op in ops if id(op) not in dropped]
    still_read = {i for op in kept for i in op.inputs} | set(graph_outputs)
    return [op for op in kept if not (op.type == "DEQUANTIZE" and op.outputs and op.outputs[0] not in still_read
                                      and id(op) not in replaced)]
