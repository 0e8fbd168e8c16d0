"""TFLite flatbuffers -> Graph, with the generated schema readers of PyPI ``tflite`` (no numpy).

Only the structure is read here; whether each op can run is decided in ``qnnweb.ops`` so that all
problems of a model are reported together.
"""

import struct

import flatbuffers
from tflite.ActivationFunctionType import ActivationFunctionType
from tflite.AddOptions import AddOptions
from tflite.BuiltinOperator import BuiltinOperator
from tflite.Conv2DOptions import Conv2DOptions
from tflite.DepthwiseConv2DOptions import DepthwiseConv2DOptions
from tflite.FullyConnectedOptions import FullyConnectedOptions
from tflite.Model import Model as TFLiteModel
from tflite.Padding import Padding
from tflite.Pool2DOptions import Pool2DOptions
from tflite.ReducerOptions import ReducerOptions
from tflite.SoftmaxOptions import SoftmaxOptions
from tflite.TensorType import TensorType

from ..errors import ModelError
from ..graph import Graph, Op, Tensor

OP_NAMES = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}
TYPE_NAMES = {v: k.lower() for k, v in vars(TensorType).items() if not k.startswith("_")}
ACTIVATIONS = {v: k for k, v in vars(ActivationFunctionType).items() if not k.startswith("_")}
DTYPES = {"float32": "float32", "int8": "int8", "uint8": "uint8", "int32": "int32", "int64": "int64"}


def import_tflite(data):
    if len(data) < 16:
        raise ModelError(f"truncated TFLite file: {len(data)} bytes")
    try:
        return _read(data)
    except ModelError:
        raise
    except (IndexError, ValueError, TypeError, KeyError, OverflowError, struct.error, UnicodeDecodeError,
            flatbuffers.builder.OffsetArithmeticError) as e:
        raise ModelError(f"corrupt or truncated TFLite flatbuffer ({type(e).__name__}: {e})") from None


def _bounded(n, what, limit=1 << 26):
    if not 0 <= n <= limit:
        raise ModelError(f"corrupt TFLite flatbuffer: {what} count {n} is out of range")
    return n


def _read(data):
    buf = bytes(data) if not isinstance(data, (bytes, bytearray)) else data
    model = TFLiteModel.GetRootAs(buf, 0)
    if _bounded(model.SubgraphsLength(), "subgraph") < 1:
        raise ModelError("TFLite model has no subgraph")
    subgraph = model.Subgraphs(0)
    opcodes = []
    for i in range(_bounded(model.OperatorCodesLength(), "operator code")):
        code = model.OperatorCodes(i)
        # Newer converters store codes >= 127 in BuiltinCode and a placeholder in the deprecated field.
        opcodes.append(max(code.BuiltinCode(), code.DeprecatedBuiltinCode()))

    tensors = [_tensor(model, subgraph.Tensors(i), i, buf) for i in range(_bounded(subgraph.TensorsLength(), "tensor"))]
    ops = []
    for i in range(_bounded(subgraph.OperatorsLength(), "operator")):
        op = subgraph.Operators(i)
        code_index = op.OpcodeIndex()
        if code_index >= len(opcodes):
            raise ModelError(f"corrupt TFLite flatbuffer: op {i} has opcode index {code_index}")
        op_type = OP_NAMES.get(opcodes[code_index], f"BUILTIN_{opcodes[code_index]}")
        inputs = [op.Inputs(j) for j in range(_bounded(op.InputsLength(), "op input"))]
        outputs = [op.Outputs(j) for j in range(_bounded(op.OutputsLength(), "op output"))]
        for t in inputs + outputs:
            if t >= len(tensors) or t < -1:
                raise ModelError(f"corrupt TFLite flatbuffer: op {i} refers to tensor {t}")
        ops.append(Op(i, op_type, inputs, outputs, _options(op, op_type, tensors, inputs)))

    graph_inputs = [subgraph.Inputs(j) for j in range(_bounded(subgraph.InputsLength(), "input"))]
    graph_outputs = [subgraph.Outputs(j) for j in range(_bounded(subgraph.OutputsLength(), "output"))]
    for t in graph_inputs + graph_outputs:
        if not 0 <= t < len(tensors):
            raise ModelError(f"corrupt TFLite flatbuffer: graph input/output refers to tensor {t}")
    return Graph(tensors, ops, graph_inputs, graph_outputs, "tflite")


def _tensor(model, t, index, buf):
    shape = tuple(t.Shape(j) for j in range(_bounded(t.ShapeLength(), "shape", 8)))
    elements = 1
    for d in shape:
        if d < 0:
            raise ModelError(f"tensor {index} has a dynamic or negative dimension in shape {list(shape)}; "
                             "qnnweb needs static shapes")
        elements *= d
    if elements > 1 << 30:
        raise ModelError(f"tensor {index} has {elements} elements: too large for WebAssembly memory")
    type_name = TYPE_NAMES.get(t.Type(), f"type{t.Type()}")
    dtype = DTYPES.get(type_name, type_name)
    name = t.Name()
    name = name.decode("utf-8", "replace") if name else f"tensor{index}"
    scale, zero_point, axis = (), (), 0
    q = t.Quantization()
    if q is not None and q.ScaleLength() > 0:
        scale = tuple(q.Scale(j) for j in range(_bounded(q.ScaleLength(), "scale")))
        zero_point = tuple(q.ZeroPoint(j) for j in range(_bounded(q.ZeroPointLength(), "zero point")))
        axis = q.QuantizedDimension()
    data = _buffer_data(model, t.Buffer(), buf)
    return Tensor(index, name, shape, dtype, scale, zero_point, axis, data)


def _buffer_data(model, buffer_index, buf):
    if buffer_index == 0 or buffer_index >= model.BuffersLength():
        return None
    b = model.Buffers(buffer_index)
    if b.Offset() > 1:
        # Large models keep buffers after the flatbuffer: offset is from the start of the file.
        start, size = b.Offset(), b.Size()
        if start + size > len(buf):
            raise ModelError(f"truncated TFLite file: buffer {buffer_index} ends at byte {start + size}, file has {len(buf)}")
        return memoryview(buf)[start:start + size]
    o = b._tab.Offset(4)
    if o == 0:
        return None
    start = b._tab.Vector(o)
    size = b._tab.VectorLen(o)
    if start + size > len(buf):
        raise ModelError(f"truncated TFLite file: buffer {buffer_index} ends past the end of the file")
    return memoryview(buf)[start:start + size] if size else None


def _table(op, options_class):
    table = op.BuiltinOptions()
    if table is None:
        return None
    options = options_class()
    options.Init(table.Bytes, table.Pos)
    return options


def _same_padding(in_size, kernel, stride, dilation):
    effective = (kernel - 1) * dilation + 1
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + effective - in_size, 0)
    return total // 2, total - total // 2


def _conv_padding(padding, in_h, in_w, kh, kw, sh, sw, dh, dw):
    if padding == Padding.SAME:
        top, bottom = _same_padding(in_h, kh, sh, dh)
        left, right = _same_padding(in_w, kw, sw, dw)
        return [top, bottom, left, right]
    return [0, 0, 0, 0]


def _options(op, op_type, tensors, inputs):
    if op_type in ("CONV_2D", "DEPTHWISE_CONV_2D"):
        o = _table(op, Conv2DOptions if op_type == "CONV_2D" else DepthwiseConv2DOptions)
        if o is None:
            raise ModelError(f"corrupt TFLite flatbuffer: {op_type} without options")
        x, w = tensors[inputs[0]], tensors[inputs[1]]
        kh, kw = (w.shape[1], w.shape[2]) if len(w.shape) == 4 else (1, 1)
        in_h, in_w = (x.shape[1], x.shape[2]) if len(x.shape) == 4 else (1, 1)
        sh, sw, dh, dw = o.StrideH(), o.StrideW(), o.DilationHFactor(), o.DilationWFactor()
        return {
            "stride": (sh, sw),
            "dilation": (dh, dw),
            "padding": _conv_padding(o.Padding(), in_h, in_w, kh, kw, sh, sw, dh, dw),
            "activation": ACTIVATIONS.get(o.FusedActivationFunction(), "UNKNOWN"),
        }
    if op_type in ("AVERAGE_POOL_2D", "MAX_POOL_2D"):
        o = _table(op, Pool2DOptions)
        if o is None:
            raise ModelError(f"corrupt TFLite flatbuffer: {op_type} without options")
        x = tensors[inputs[0]]
        kh, kw, sh, sw = o.FilterHeight(), o.FilterWidth(), o.StrideH(), o.StrideW()
        in_h, in_w = (x.shape[1], x.shape[2]) if len(x.shape) == 4 else (1, 1)
        return {
            "kernel": (kh, kw),
            "stride": (sh, sw),
            "padding": _conv_padding(o.Padding(), in_h, in_w, kh, kw, sh, sw, 1, 1),
            "activation": ACTIVATIONS.get(o.FusedActivationFunction(), "UNKNOWN"),
        }
    if op_type == "FULLY_CONNECTED":
        o = _table(op, FullyConnectedOptions)
        return {
            "activation": ACTIVATIONS.get(o.FusedActivationFunction(), "UNKNOWN") if o else "NONE",
            "weights_format": o.WeightsFormat() if o else 0,
        }
    if op_type == "ADD":
        o = _table(op, AddOptions)
        return {"activation": ACTIVATIONS.get(o.FusedActivationFunction(), "UNKNOWN") if o else "NONE"}
    if op_type == "SOFTMAX":
        o = _table(op, SoftmaxOptions)
        return {"beta": o.Beta() if o else 1.0}
    if op_type == "MEAN":
        o = _table(op, ReducerOptions)
        return {"keep_dims": bool(o.KeepDims()) if o else False}
    return {}
