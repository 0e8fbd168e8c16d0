"""Differential campaign: random float ONNX graphs, quantized by onnxruntime, run by qnnweb and compared
with onnxruntime (see generator.py, runner.py, compare.py)."""
