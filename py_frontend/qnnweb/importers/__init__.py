"""Model importers: each turns a file's bytes into a ``qnnweb.graph.Graph``."""

from ..errors import ModelError
from .input_shapes import check_input_shapes, unknown_inputs  # noqa: F401 (unknown_inputs: for the importers)
from .tflite import import_tflite


def import_model(data, input_shapes=None):
    """Import a model from bytes, recognising the format by its content: a TFLite flatbuffer has the
    file identifier 'TFL3'; an ONNX ModelProto starts with field 1 (ir_version, a varint: byte 0x08).
    ``input_shapes`` ({input name: shape}) sets the shapes of inputs: ONNX dimensions that are symbolic
    ("N", "batch_size"; 1 when not given), TFLite the batch (first) dimension."""
    input_shapes = check_input_shapes(input_shapes)
    data = memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else data
    if len(data) >= 8 and bytes(data[4:8]) == b"TFL3":
        return import_tflite(data, input_shapes)
    if len(data) >= 2 and data[0] == 0x08:
        from .onnx import import_onnx  # protobuf is imported only for ONNX models

        return import_onnx(data, input_shapes)
    raise ModelError("not a model qnnweb can read: expected a TFLite flatbuffer (file identifier 'TFL3') "
                     "or an ONNX model (a ModelProto), or a model compiled by qnnweb.compile (header 'QNNW')")
