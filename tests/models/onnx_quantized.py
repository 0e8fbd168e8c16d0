"""Small float ONNX graphs quantized by onnxruntime's own quantizer, for regression tests of the
forms it writes: ``quantized(nodes, inputs, outputs, initializers, **quantize_static options)``."""

import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static


class _Reader(CalibrationDataReader):
    def __init__(self, feeds):
        self.feeds = iter(feeds)

    def get_next(self):
        return next(self.feeds, None)


def float_model(nodes, inputs, outputs, initializers=(), opset=13):
    """inputs / outputs: [(name, shape)] float32; initializers: {name: numpy array}."""
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in dict(initializers).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def quantized(model, feeds, quant_format="QDQ", activation="QUInt8", weight="QInt8", per_channel=False, **extra):
    """The model quantized by ``quantize_static`` (MinMax, calibrated on ``feeds``), as bytes."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
        onnx.save(model, src)
        quantize_static(str(src), str(dst), _Reader(feeds), quant_format=getattr(QuantFormat, quant_format),
                        activation_type=getattr(QuantType, activation), weight_type=getattr(QuantType, weight),
                        per_channel=per_channel, extra_options=extra or None)
        return dst.read_bytes()


def output_quantum(graph):
    """One quantum of a loaded model's first (dequantized, float) output: the scale of the int8 tensor
    it is dequantized from, found back through the layout ops in between (``model._graph``)."""
    tensor = graph.outputs[0]
    while not graph.tensors[tensor].scale:
        tensor = next(op for op in graph.ops if tensor in op.outputs).inputs[0]
    return graph.tensors[tensor].scale[0]
