"""Graph -> TFLite flatbuffer, with the flatbuffers Builder and the ``tflite`` schema modules.

Used to run the very same int8 weights on LiteRT (benchmarks, cross-checks) and to write models
whose buffers live after the flatbuffer (``external_buffers=True``: the Buffer ``offset``/``size``
fields that converters use for large models).
"""


from importlib import import_module

import flatbuffers
from flatbuffers import flexbuffers
from tflite.ActivationFunctionType import ActivationFunctionType
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions
from tflite.Padding import Padding
from tflite.TensorType import TensorType

from ..errors import ModelError
from ..importers.tflite.options import conv_padding
from .tflite_layout import tflite_ready

TENSOR_TYPES = {"float32": TensorType.FLOAT32, "int8": TensorType.INT8, "uint8": TensorType.UINT8,
                "int32": TensorType.INT32, "int64": TensorType.INT64}
EXTERNAL_ALIGNMENT = 64

# The schema's builder functions live in its modules (the package namespace holds the classes).
(AddOptions, Buffer, ConcatenationOptions, Conv2DOptions, DepthToSpaceOptions, DepthwiseConv2DOptions,
 FullyConnectedOptions, LeakyReluOptions, Model, MulOptions, Operator, OperatorCode, Pool2DOptions,
 QuantizationParameters, ReducerOptions, ResizeBilinearOptions, ResizeNearestNeighborOptions, SoftmaxOptions,
 SpaceToDepthOptions, SubGraph, SubOptions, Tensor) = (
    import_module(f"tflite.{name}") for name in (
        "AddOptions", "Buffer", "ConcatenationOptions", "Conv2DOptions", "DepthToSpaceOptions",
        "DepthwiseConv2DOptions", "FullyConnectedOptions", "LeakyReluOptions", "Model", "MulOptions", "Operator",
        "OperatorCode", "Pool2DOptions", "QuantizationParameters", "ReducerOptions", "ResizeBilinearOptions",
        "ResizeNearestNeighborOptions", "SoftmaxOptions", "SpaceToDepthOptions", "SubGraph", "SubOptions", "Tensor"))

# Options tables of one activation field, or the two fields of a resize.
ACTIVATION_OPTIONS = {"ADD": AddOptions, "SUB": SubOptions, "MUL": MulOptions}
RESIZE_OPTIONS = {"RESIZE_BILINEAR": ResizeBilinearOptions, "RESIZE_NEAREST_NEIGHBOR": ResizeNearestNeighborOptions}
BLOCK_OPTIONS = {"DEPTH_TO_SPACE": DepthToSpaceOptions, "SPACE_TO_DEPTH": SpaceToDepthOptions}
# Options tables of plain scalar fields: op type -> (table name, {IR option: the table's field})
FIELD_OPTIONS = {
    "BATCH_MATMUL": ("BatchMatMulOptions", {"adj_x": "AdjX", "adj_y": "AdjY"}),
    "GATHER": ("GatherOptions", {"axis": "Axis", "batch_dims": "BatchDims"}),
    "SPLIT": ("SplitOptions", {"num_splits": "NumSplits"}),
    "SPLIT_V": ("SplitVOptions", {"num_splits": "NumSplits"}),
    "STRIDED_SLICE": ("StridedSliceOptions", {"begin_mask": "BeginMask", "end_mask": "EndMask",
                                              "ellipsis_mask": "EllipsisMask", "new_axis_mask": "NewAxisMask",
                                              "shrink_axis_mask": "ShrinkAxisMask", "offset": "Offset"}),
}


def export_tflite(graph, external_buffers=False, description="qnnweb"):
    graph = tflite_ready(graph)
    if not external_buffers:
        return _build(graph, description, None)
    # Offsets are absolute file positions after the flatbuffer, which is only sized once built: build
    # with placeholders, then again with the real values (same size: the fields are always written).
    blobs = [bytes(t.data) for t in graph.tensors if t.is_constant]
    relative, position = [], 0
    for blob in blobs:
        relative.append(position)
        position += -(-len(blob) // EXTERNAL_ALIGNMENT) * EXTERNAL_ALIGNMENT
    size = len(_build(graph, description, [(2, len(b)) for b in blobs]))
    start = -(-size // EXTERNAL_ALIGNMENT) * EXTERNAL_ALIGNMENT
    flatbuffer = _build(graph, description, [(start + r, len(b)) for r, b in zip(relative, blobs)])
    if len(flatbuffer) != size:
        raise AssertionError("flatbuffer size changed between passes")
    out = bytearray(flatbuffer.ljust(start, b"\0"))
    for r, blob in zip(relative, blobs):
        out.extend(bytes(start + r - len(out)))
        out.extend(blob)
    return bytes(out)


def _build(graph, description, external):
    b = flatbuffers.Builder(1024)
    b.ForceDefaults(True)
    constants = [t for t in graph.tensors if t.is_constant]
    buffer_of = {t.index: i + 1 for i, t in enumerate(constants)}

    buffers = [_buffer(b, None, None)]
    for i, t in enumerate(constants):
        buffers.append(_buffer(b, None if external else bytes(t.data), external[i] if external else None))
    buffers_vector = _vector(b, Model.StartBuffersVector, buffers)

    codes, code_index = [], {}
    for op in graph.ops:
        code_index.setdefault(_code(op), len(code_index))
    for code, custom in code_index:
        name = b.CreateString(custom) if custom else None
        OperatorCode.Start(b)
        OperatorCode.AddDeprecatedBuiltinCode(b, min(code, 127))
        OperatorCode.AddBuiltinCode(b, code)
        if name is not None:
            OperatorCode.AddCustomCode(b, name)
        OperatorCode.AddVersion(b, 1)
        codes.append(OperatorCode.End(b))
    codes_vector = _vector(b, Model.StartOperatorCodesVector, codes)

    tensors = [_tensor(b, t, buffer_of.get(t.index, 0)) for t in graph.tensors]
    operators = [_operator(b, graph, op, code_index[_code(op)]) for op in graph.ops]
    tensors_vector = _vector(b, SubGraph.StartTensorsVector, tensors)
    operators_vector = _vector(b, SubGraph.StartOperatorsVector, operators)
    inputs_vector = _int_vector(b, SubGraph.StartInputsVector, graph.inputs)
    outputs_vector = _int_vector(b, SubGraph.StartOutputsVector, graph.outputs)
    name = b.CreateString("main")
    SubGraph.Start(b)
    SubGraph.AddTensors(b, tensors_vector)
    SubGraph.AddInputs(b, inputs_vector)
    SubGraph.AddOutputs(b, outputs_vector)
    SubGraph.AddOperators(b, operators_vector)
    SubGraph.AddName(b, name)
    subgraph = SubGraph.End(b)
    subgraphs_vector = _vector(b, Model.StartSubgraphsVector, [subgraph])

    description_string = b.CreateString(description)
    Model.Start(b)
    Model.AddVersion(b, 3)
    Model.AddOperatorCodes(b, codes_vector)
    Model.AddSubgraphs(b, subgraphs_vector)
    Model.AddDescription(b, description_string)
    Model.AddBuffers(b, buffers_vector)
    b.Finish(Model.End(b), file_identifier=b"TFL3")
    return bytes(b.Output())


def _vector(b, start, offsets):
    start(b, len(offsets))
    for o in reversed(offsets):
        b.PrependUOffsetTRelative(o)
    return b.EndVector()


def _int_vector(b, start, values, prepend=None):
    start(b, len(values))
    for v in reversed(values):
        (prepend or b.PrependInt32)(v)
    return b.EndVector()


def _buffer(b, data, external):
    data_vector = b.CreateByteVector(data) if data else None
    Buffer.Start(b)
    if data_vector is not None:
        Buffer.AddData(b, data_vector)
    if external is not None:
        Buffer.AddOffset(b, external[0])
        Buffer.AddSize(b, external[1])
    return Buffer.End(b)


def _tensor(b, t, buffer_index):
    name = b.CreateString(t.name)
    shape = _int_vector(b, Tensor.StartShapeVector, list(t.shape))
    quantization = None
    if t.quantized:
        scales = _int_vector(b, QuantizationParameters.StartScaleVector, list(t.scale), b.PrependFloat32)
        zero_points = _int_vector(b, QuantizationParameters.StartZeroPointVector, list(t.zero_point), b.PrependInt64)
        QuantizationParameters.Start(b)
        QuantizationParameters.AddScale(b, scales)
        QuantizationParameters.AddZeroPoint(b, zero_points)
        QuantizationParameters.AddQuantizedDimension(b, t.quantized_dimension)
        quantization = QuantizationParameters.End(b)
    if t.dtype not in TENSOR_TYPES:
        raise ModelError(f"tensor '{t.name}' of dtype {t.dtype} cannot be written to TFLite")
    Tensor.Start(b)
    Tensor.AddShape(b, shape)
    Tensor.AddType(b, TENSOR_TYPES[t.dtype])
    Tensor.AddBuffer(b, buffer_index)
    Tensor.AddName(b, name)
    if quantization is not None:
        Tensor.AddQuantization(b, quantization)
    return Tensor.End(b)


def _activation(op):
    return getattr(ActivationFunctionType, op.options.get("activation", "NONE"))


def _padding_mode(graph, op, kernel, stride, dilation):
    """SAME or VALID, whichever gives the op's explicit padding (TFLite cannot express others)."""
    x = graph.tensors[op.inputs[0]]
    in_h, in_w = x.shape[1], x.shape[2]
    padding = list(op.options["padding"])
    for mode in (Padding.VALID, Padding.SAME):
        if conv_padding(mode, in_h, in_w, kernel[0], kernel[1], stride[0], stride[1], dilation[0], dilation[1]) == padding:
            return mode
    raise ModelError(f"op {op.index} {op.type}: padding {padding} is neither SAME nor VALID; "
                     "TFLite needs an explicit PAD op for it")


def _options(b, graph, op):
    """(BuiltinOptions type, table offset) for an op."""
    o = op.options
    if op.type in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        w = graph.tensors[op.inputs[1]]
        mode = _padding_mode(graph, op, (w.shape[1], w.shape[2]), o["stride"], o["dilation"])
        if op.type == "CONV_2D":
            Conv2DOptions.Start(b)
            Conv2DOptions.AddPadding(b, mode)
            Conv2DOptions.AddStrideH(b, o["stride"][0])
            Conv2DOptions.AddStrideW(b, o["stride"][1])
            Conv2DOptions.AddDilationHFactor(b, o["dilation"][0])
            Conv2DOptions.AddDilationWFactor(b, o["dilation"][1])
            Conv2DOptions.AddFusedActivationFunction(b, _activation(op))
            return BuiltinOptions.Conv2DOptions, Conv2DOptions.End(b)
        x = graph.tensors[op.inputs[0]]
        DepthwiseConv2DOptions.Start(b)
        DepthwiseConv2DOptions.AddPadding(b, mode)
        DepthwiseConv2DOptions.AddStrideH(b, o["stride"][0])
        DepthwiseConv2DOptions.AddStrideW(b, o["stride"][1])
        DepthwiseConv2DOptions.AddDilationHFactor(b, o["dilation"][0])
        DepthwiseConv2DOptions.AddDilationWFactor(b, o["dilation"][1])
        DepthwiseConv2DOptions.AddDepthMultiplier(b, w.shape[3] // x.shape[3])
        DepthwiseConv2DOptions.AddFusedActivationFunction(b, _activation(op))
        return BuiltinOptions.DepthwiseConv2DOptions, DepthwiseConv2DOptions.End(b)
    if op.type in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        mode = _padding_mode(graph, op, o["kernel"], o["stride"], (1, 1))
        Pool2DOptions.Start(b)
        Pool2DOptions.AddPadding(b, mode)
        Pool2DOptions.AddStrideH(b, o["stride"][0])
        Pool2DOptions.AddStrideW(b, o["stride"][1])
        Pool2DOptions.AddFilterHeight(b, o["kernel"][0])
        Pool2DOptions.AddFilterWidth(b, o["kernel"][1])
        Pool2DOptions.AddFusedActivationFunction(b, _activation(op))
        return BuiltinOptions.Pool2DOptions, Pool2DOptions.End(b)
    if op.type == "FULLY_CONNECTED":
        FullyConnectedOptions.Start(b)
        FullyConnectedOptions.AddFusedActivationFunction(b, _activation(op))
        return BuiltinOptions.FullyConnectedOptions, FullyConnectedOptions.End(b)
    if op.type in ACTIVATION_OPTIONS:
        table = ACTIVATION_OPTIONS[op.type]
        table.Start(b)
        table.AddFusedActivationFunction(b, _activation(op))
        return getattr(BuiltinOptions, f"{op.type.capitalize()}Options"), table.End(b)
    if op.type == "CONCATENATION":
        ConcatenationOptions.Start(b)
        ConcatenationOptions.AddAxis(b, o["axis"])
        ConcatenationOptions.AddFusedActivationFunction(b, _activation(op))
        return BuiltinOptions.ConcatenationOptions, ConcatenationOptions.End(b)
    if op.type == "LEAKY_RELU":
        LeakyReluOptions.Start(b)
        LeakyReluOptions.AddAlpha(b, o["alpha"])
        return BuiltinOptions.LeakyReluOptions, LeakyReluOptions.End(b)
    if op.type in BLOCK_OPTIONS:
        table = BLOCK_OPTIONS[op.type]
        table.Start(b)
        table.AddBlockSize(b, o["block_size"])
        return getattr(BuiltinOptions, table.__name__.rsplit(".", 1)[1]), table.End(b)
    if op.type in RESIZE_OPTIONS:
        table = RESIZE_OPTIONS[op.type]
        table.Start(b)
        table.AddAlignCorners(b, o.get("align_corners", False))
        table.AddHalfPixelCenters(b, o.get("half_pixel_centers", False))
        return getattr(BuiltinOptions, table.__name__.rsplit(".", 1)[1]), table.End(b)
    if op.type == "SOFTMAX":
        SoftmaxOptions.Start(b)
        SoftmaxOptions.AddBeta(b, o.get("beta", 1.0))
        return BuiltinOptions.SoftmaxOptions, SoftmaxOptions.End(b)
    if op.type == "MEAN":
        ReducerOptions.Start(b)
        ReducerOptions.AddKeepDims(b, o.get("keep_dims", False))
        return BuiltinOptions.ReducerOptions, ReducerOptions.End(b)
    if op.type in FIELD_OPTIONS:
        name, fields = FIELD_OPTIONS[op.type]
        table = import_module(f"tflite.{name}")
        table.Start(b)
        for option, field in fields.items():
            if option in o:
                getattr(table, f"Add{field}")(b, o[option])
        return getattr(BuiltinOptions, name), table.End(b)
    return BuiltinOptions.NONE, None


# IR op types that are TFLite custom ops: their custom_code (options as a flexbuffer map)
CUSTOM_CODES = {"DETECTION_POSTPROCESS": "TFLite_Detection_PostProcess"}


def _code(op):
    """(builtin code, custom code or None) of an op."""
    if op.type in CUSTOM_CODES:
        return BuiltinOperator.CUSTOM, CUSTOM_CODES[op.type]
    code = getattr(BuiltinOperator, op.type, None)
    if code is None:
        raise ModelError(f"op {op.index} {op.type} has no TFLite builtin")
    return code, None


def _operator(b, graph, op, code_index):
    custom = None
    if op.type in CUSTOM_CODES:
        options_type, options = BuiltinOptions.NONE, None
        custom = b.CreateByteVector(flexbuffers.Dumps(dict(op.options)))
    else:
        options_type, options = _options(b, graph, op)
    inputs = _int_vector(b, Operator.StartInputsVector, op.inputs)
    outputs = _int_vector(b, Operator.StartOutputsVector, op.outputs)
    Operator.Start(b)
    Operator.AddOpcodeIndex(b, code_index)
    Operator.AddInputs(b, inputs)
    Operator.AddOutputs(b, outputs)
    Operator.AddBuiltinOptionsType(b, options_type)
    if options is not None:
        Operator.AddBuiltinOptions(b, options)
    if custom is not None:
        Operator.AddCustomOptions(b, custom)
        Operator.AddCustomOptionsFormat(b, 0)  # FLEXBUFFERS
    return Operator.End(b)


