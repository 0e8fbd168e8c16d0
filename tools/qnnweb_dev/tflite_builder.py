"""Tiny TFLite flatbuffers written field by field (flatbuffers Builder + the ``tflite`` schema modules),
for the forms real converters write that qnnweb's own exporter does not: op codes in only one of the
two fields, options tables or fields left out (flatbuffers omits values equal to the schema default),
shape arithmetic (SHAPE, STRIDED_SLICE, PACK) feeding RESHAPE. Every file is also run by ai-edge-litert.
``set_opcode`` rewrites an operator code of a real model in place (an unsupported op for the error tests).
"""

import struct
from importlib import import_module

import flatbuffers
from tflite.BuiltinOperator import BuiltinOperator
from tflite.BuiltinOptions import BuiltinOptions
from tflite.Model import Model as TFLiteModel
from tflite.TensorType import TensorType

# The schema's builder functions live in its modules (the package namespace holds the classes).
Buffer, Model, Operator, OperatorCode, QuantizationParameters, SubGraph, Tensor = (
    import_module(f"tflite.{name}")
    for name in ("Buffer", "Model", "Operator", "OperatorCode", "QuantizationParameters", "SubGraph", "Tensor"))
TYPES = {"float32": TensorType.FLOAT32, "int8": TensorType.INT8, "uint8": TensorType.UINT8, "int32": TensorType.INT32}


def _vector(b, start, items, prepend):
    start(b, len(items))
    for item in reversed(items):
        prepend(item)
    return b.EndVector()


def _int_vector(b, values):
    b.StartVector(4, len(values), 4)
    for v in reversed(values):
        b.PrependInt32(v)
    return b.EndVector()


def _float_vector(b, values):
    b.StartVector(4, len(values), 4)
    for v in reversed(values):
        b.PrependFloat32(v)
    return b.EndVector()


def _long_vector(b, values):
    b.StartVector(8, len(values), 8)
    for v in reversed(values):
        b.PrependInt64(v)
    return b.EndVector()


class ModelBuilder:
    """``tensor(...)`` and ``op(...)`` in order, then ``build(inputs, outputs, opcode_fields)``.
    ``opcode_fields``: "both" (what TensorFlow's converter writes), "builtin" (only ``builtin_code``, as
    ai-edge-quantizer / litert-torch write) or "deprecated" (only ``deprecated_builtin_code``, MediaPipe)."""

    def __init__(self):
        self.tensors, self.ops, self.buffers = [], [], [b""]

    def tensor(self, name, shape, dtype, scale=None, zero_point=None, data=None):
        buffer = 0
        if data is not None:
            self.buffers.append(bytes(data))
            buffer = len(self.buffers) - 1
        self.tensors.append((name, list(shape), dtype, scale, zero_point, buffer))
        return len(self.tensors) - 1

    def constant_int32(self, name, values):
        return self.tensor(name, [len(values)], "int32", data=struct.pack(f"<{len(values)}i", *values))

    def op(self, op_type, inputs, outputs, options=None):
        """options: (BuiltinOptions type, function(builder) -> table offset), or None for no table."""
        self.ops.append((getattr(BuiltinOperator, op_type), inputs, outputs, options))

    def build(self, inputs, outputs, opcode_fields="both"):
        b = flatbuffers.Builder(1024)
        codes = sorted({code for code, *_ in self.ops})
        code_offsets = []
        for code in codes:
            OperatorCode.Start(b)
            if opcode_fields in ("both", "deprecated"):
                OperatorCode.AddDeprecatedBuiltinCode(b, min(code, 127))
            if opcode_fields in ("both", "builtin"):
                OperatorCode.AddBuiltinCode(b, code)
            OperatorCode.AddVersion(b, 1)
            code_offsets.append(OperatorCode.End(b))
        buffer_offsets = []
        for data in self.buffers:
            vector = b.CreateByteVector(data) if data else None
            Buffer.Start(b)
            if vector is not None:
                Buffer.AddData(b, vector)
            buffer_offsets.append(Buffer.End(b))
        tensor_offsets = []
        for name, shape, dtype, scale, zero_point, buffer in self.tensors:
            name_offset = b.CreateString(name)
            shape_offset = _int_vector(b, shape)
            quantization = None
            if scale is not None:
                scale_offset = _float_vector(b, scale)
                zero_point_offset = _long_vector(b, zero_point)
                QuantizationParameters.Start(b)
                QuantizationParameters.AddScale(b, scale_offset)
                QuantizationParameters.AddZeroPoint(b, zero_point_offset)
                quantization = QuantizationParameters.End(b)
            Tensor.Start(b)
            Tensor.AddShape(b, shape_offset)
            Tensor.AddType(b, TYPES[dtype])
            Tensor.AddBuffer(b, buffer)
            Tensor.AddName(b, name_offset)
            if quantization is not None:
                Tensor.AddQuantization(b, quantization)
            tensor_offsets.append(Tensor.End(b))
        op_offsets = []
        for code, op_inputs, op_outputs, options in self.ops:
            inputs_offset, outputs_offset = _int_vector(b, op_inputs), _int_vector(b, op_outputs)
            table = options[1](b) if options else None
            Operator.Start(b)
            Operator.AddOpcodeIndex(b, codes.index(code))
            Operator.AddInputs(b, inputs_offset)
            Operator.AddOutputs(b, outputs_offset)
            if options:
                Operator.AddBuiltinOptionsType(b, options[0])
                Operator.AddBuiltinOptions(b, table)
            op_offsets.append(Operator.End(b))
        tensors_vector = _vector(b, SubGraph.StartTensorsVector, tensor_offsets, b.PrependUOffsetTRelative)
        ops_vector = _vector(b, SubGraph.StartOperatorsVector, op_offsets, b.PrependUOffsetTRelative)
        inputs_vector, outputs_vector = _int_vector(b, inputs), _int_vector(b, outputs)
        SubGraph.Start(b)
        SubGraph.AddTensors(b, tensors_vector)
        SubGraph.AddInputs(b, inputs_vector)
        SubGraph.AddOutputs(b, outputs_vector)
        SubGraph.AddOperators(b, ops_vector)
        subgraph = SubGraph.End(b)
        subgraphs = _vector(b, Model.StartSubgraphsVector, [subgraph], b.PrependUOffsetTRelative)
        codes_vector = _vector(b, Model.StartOperatorCodesVector, code_offsets, b.PrependUOffsetTRelative)
        buffers_vector = _vector(b, Model.StartBuffersVector, buffer_offsets, b.PrependUOffsetTRelative)
        description = b.CreateString("qnnweb test")
        Model.Start(b)
        Model.AddVersion(b, 3)
        Model.AddOperatorCodes(b, codes_vector)
        Model.AddSubgraphs(b, subgraphs)
        Model.AddDescription(b, description)
        Model.AddBuffers(b, buffers_vector)
        b.Finish(Model.End(b), file_identifier=b"TFL3")
        return bytes(b.Output())


def options(name, **fields):
    """The ``options`` of ``ModelBuilder.op``: the schema table ``name`` ("DivOptions") with each field set
    (``FusedActivationFunction=...``: the generated ``AddFusedActivationFunction``)."""
    table = import_module(f"tflite.{name}")   # the module: its builder functions (the package holds the class)

    def write(b):
        table.Start(b)
        for field, value in fields.items():
            getattr(table, f"Add{field}")(b, value)
        return table.End(b)

    return getattr(BuiltinOptions, name), write


def set_opcode(data, old, new):
    """Rewrite, in place, the operator code `old` of a real model to `new` (both builtin codes)."""
    model = TFLiteModel.GetRootAs(data, 0)
    for i in range(model.OperatorCodesLength()):
        code = model.OperatorCodes(i)
        if max(code.BuiltinCode(), code.DeprecatedBuiltinCode()) == old:
            table = code._tab
            deprecated = table.Offset(4)
            if deprecated:
                data[table.Pos + deprecated] = new
            builtin = table.Offset(10)
            if builtin:
                data[table.Pos + builtin:table.Pos + builtin + 4] = new.to_bytes(4, "little")
            return
    raise AssertionError(f"opcode {old} not in model")
