"""Shared by every test folder: tools/ on sys.path, so that tests import the helpers they share with
the tools from the `qnnweb_dev` package (numpy and onnxruntime references, onnx_quantized,
litert_check, ...) and the tools they test by group (`from bench import thread_ab`); tools never
import tests (tools/README.md). The data-dir fixtures (real models, photos) are in data_fixtures.py."""

import os
import sys

TOOLS = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools")
if TOOLS not in sys.path:
    sys.path.insert(0, TOOLS)

pytest_plugins = ["data_fixtures"]
