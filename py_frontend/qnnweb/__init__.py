"""qnnweb: int8 neural-network inference on WebAssembly, from Python (Pyodide or CPython).

    import qnnweb
    model = qnnweb.load("model.tflite")            # or bytes; in Pyodide: await qnnweb.load_async(url)
    (scores,) = model.run(image)                     # any buffer of the input's shape and dtype
    model.info()                                     # inputs, outputs, ops, variant, memory
"""

import contextlib
import gc

from . import image
from .errors import KernelError, ModelError, UnsupportedModelError
from .importers import import_model
from .kernels import VARIANTS, supported_variants
from .model import Model, TensorInfo

__version__ = "0.1.0"
__all__ = ["load", "load_async", "describe", "Model", "TensorInfo", "ModelError", "UnsupportedModelError",
           "KernelError", "VARIANTS", "supported_variants", "image"]


def _read(source):
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    import os

    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            return f.read()
    raise TypeError(f"expected a path or the model's bytes, got {type(source).__name__}")


def describe(source):
    """Inputs, outputs and ops of a model, without running it (no kernels involved)."""
    return import_model(_read(source)).describe()


def load(source, variant=None, keep_intermediates=False, input_shapes=None):
    """Load a model from a path or bytes. ``variant`` forces "relaxed", "simd128" or "scalar";
    by default the best one this WebAssembly engine validates runs. ``keep_intermediates`` keeps
    every tensor of the last run readable with ``model.intermediate(name)`` (more memory).
    ``input_shapes`` ({input name: shape}) sizes dynamic dimensions: an ONNX model's symbolic ones
    (a symbolic batch is 1 otherwise), a TFLite model's batch, e.g. ``{"input": [4, 3, 224, 224]}``."""
    with _collector_paused():
        return Model(import_model(_read(source), input_shapes), variant, keep_intermediates)


@contextlib.contextmanager
def _collector_paused():
    """Loading makes hundreds of thousands of small objects that all live until the model is built:
    the cyclic garbage collector would scan them again and again (a fifth of a 100,000-op load)."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


async def load_async(url, variant=None, progress=None, input_shapes=None):
    """Pyodide: download a model and load it. ``progress(loaded_bytes, total_bytes)`` is called as
    the bytes arrive (total is 0 when the server does not say)."""
    from .fetch import fetch_bytes

    return load(await fetch_bytes(url, progress), variant, input_shapes=input_shapes)
