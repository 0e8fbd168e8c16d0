"""Model importers: each turns a file's bytes into a ``qnnweb.graph.Graph``."""

from .tflite import import_tflite


def import_model(data):
    """Import a model from bytes, recognising the format by its content."""
    data = memoryview(data).cast("B") if not isinstance(data, (bytes, bytearray)) else data
    if len(data) >= 8 and bytes(data[4:8]) == b"TFL3":
        return import_tflite(data)
    from ..errors import ModelError

    raise ModelError("not a model qnnweb can read: expected a TFLite flatbuffer (file identifier 'TFL3')")
