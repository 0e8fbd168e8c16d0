"""Model importers: each turns a file's bytes into a ``qnnweb.graph.Graph``."""

from ..errors import ModelError
from .tflite import import_tflite


def import_model(data):
    """Import a model from bytes, recognising the format by its content: a TFLite flatbuffer has the
    file identifier 'TFL3'; an ONNX ModelProto starts with field 1 (ir_version, a varint: byte 0x08)."""
    data = memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else data
    if len(data) >= 8 and bytes(data[4:8]) == b"TFL3":
        return import_tflite(data)
    if len(data) >= 2 and data[0] == 0x08:
        from .onnx import import_onnx  # protobuf is imported only for ONNX models

        return import_onnx(data)
    raise ModelError("not a model qnnweb can read: expected a TFLite flatbuffer (file identifier 'TFL3') "
                     "or an ONNX model (a ModelProto)")
