"""Writes ONNX's protobuf schema (the serialized FileDescriptorProto of onnx-ml.proto, as shipped in the
pinned `onnx` wheel's generated onnx_ml_pb2 module) into the qnnweb package, where
qnnweb.importers.onnx.proto builds message classes from it in a private descriptor pool with the
pure-Python protobuf runtime (no onnx package needed at run time, and none in Pyodide).

    python tools/build/onnx_schema.py [OUTPUT]
"""

import sys
from pathlib import Path

from onnx import onnx_ml_pb2

DEFAULT = Path(__file__).resolve().parents[2] / "py_frontend" / "qnnweb" / "importers" / "onnx-ml.desc"


def main(argv):
    output = Path(argv[1]) if len(argv) > 1 else DEFAULT
    data = onnx_ml_pb2.DESCRIPTOR.serialized_pb
    if output.exists() and output.read_bytes() == data:
        return
    output.write_bytes(data)
    print(f"wrote {output} ({len(data)} bytes)")


if __name__ == "__main__":
    main(sys.argv)
