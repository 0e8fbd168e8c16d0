"""onnxruntime as the ONNX reference, run so that it computes what the ONNX standard says: it lives in
qnnweb.cli.reference_onnx (its docstring says how and why), which ``qnnweb check`` runs too."""

from qnnweb.cli.reference_onnx import ReferenceSession, int8_twin, session_options, uses_uint8

__all__ = ["ReferenceSession", "int8_twin", "session_options", "uses_uint8"]
