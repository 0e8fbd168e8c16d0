"""Shared by every test folder: tests/ on sys.path, so `from reference import ...` (numpy and
onnxruntime references) works from kernels/, models/, differential/ and fuzz/ alike."""

import os
import sys

TESTS = os.path.dirname(os.path.abspath(__file__))
if TESTS not in sys.path:
    sys.path.insert(0, TESTS)
