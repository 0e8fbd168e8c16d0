"""Benchmarks: bench.py (engines on whole models, in Chromium and natively), kernel_bench.py,
kernel_ab.py, thread_ab.py, op_models.py (tools/README.md)."""
