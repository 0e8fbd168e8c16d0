"""Code the tests and the tools share (never shipped: the wheel packages py_frontend/qnnweb only).

- ``reference``: numpy references of the int8 ops (``reference.int8``) and onnxruntime run as the
  ONNX reference (``reference.onnxruntime_session``);
- ``onnx_quantized``, ``litert_check``, ``tflite_builder``: small models made by onnxruntime's
  quantizer or by hand, and the comparisons with onnxruntime and ai-edge-litert;
- ``differential``: the differential campaign's generator, runner and comparison;
- ``fuzz``: the mutation fuzzer's mutators, campaign driver and seed models.

Importable with tools/ on sys.path: tests/conftest.py puts it there, every tool script puts it there
itself (tools/README.md).
"""
