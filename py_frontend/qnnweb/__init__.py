"""qnnweb: int8 neural-network inference on WebAssembly, from Python (Pyodide or CPython).

    import qnnweb
    model = qnnweb.load("model.tflite")            # or bytes; in Pyodide: await qnnweb.load_async(url)
    (scores,) = model.run(image)                     # any buffer of the input's shape and dtype
    model.info()                                     # inputs, outputs, ops, variant, memory
"""

import contextlib
import functools
import gc

from . import image
from .errors import KernelError, ModelError, QuantizationModeError, UnsupportedModelError
from .kernels import VARIANTS, supported_variants
from .compiled import CompiledModel, is_compiled
from .model import Model, Reloader, TensorInfo, compile_graph

__all__ = ["load", "load_async", "init", "compile", "describe", "Model", "TensorInfo", "ModelError", "UnsupportedModelError",
           "QuantizationModeError", "KernelError", "VARIANTS", "supported_variants", "image"]


def _read(source):
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source)
    import os

    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            return f.read()
    raise TypeError(f"expected a path or the model's bytes, got {type(source).__name__}")


def import_model(data, input_shapes=None):
    """``qnnweb.importers.import_model``, imported on first use: a page that only loads compiled
    models never imports the TFLite and ONNX readers (flatbuffers, tflite, protobuf: ~200 modules)."""
    from .importers import import_model as read

    return read(data, input_shapes)


def describe(source):
    """Inputs, outputs and ops of a model, without running it (no kernels involved)."""
    data = _read(source)
    if is_compiled(data):
        return CompiledModel.from_bytes(data).describe
    return import_model(data).describe()


# the compiled forms a loaded model keeps for the input shapes it was last fed (a text encoder's lengths): a
# length seen again loads without importing the model again (docs/performance-log.md: ~150 of ~220 ms for
# MiniLM-L6); each holds the model's constants
RECOMPILED_SHAPES = 4


def load(source, variant=None, keep_intermediates=False, input_shapes=None, threads=None):
    """Load a model from a path or bytes: TFLite, ONNX or a compiled ``.qnn`` (``qnnweb.compile``).
    ``variant`` forces "relaxed", "simd128" or "scalar"; by default the best one this WebAssembly
    engine validates runs. ``keep_intermediates`` keeps every tensor of the last run readable with
    ``model.intermediate(name)`` (more memory). ``input_shapes`` ({input name: shape}) sizes dynamic
    dimensions: an ONNX model's symbolic ones (a symbolic batch is 1 otherwise), a TFLite model's
    batch, e.g. ``{"input": [4, 3, 224, 224]}``. ``threads``: how many threads run the kernels (the
    outputs are the same bytes for any count); by default, in a browser, ``min(4, cores)`` when the
    page is cross-origin isolated, else 1, and 1 in CPython. ``model.info()["threads"]`` says how
    many run and ``["threads_note"]`` why fewer than asked. ``model.close()`` (or ``with``) ends them."""
    data = _read(source)
    with _collector_paused():
        if is_compiled(data):
            if keep_intermediates or input_shapes:
                raise ValueError("keep_intermediates and input_shapes are fixed when a model is compiled: "
                                 "pass them to qnnweb.compile")
            return Model(CompiledModel.from_bytes(data), variant, threads=threads)
        graph = import_model(data, input_shapes)

        @functools.lru_cache(maxsize=RECOMPILED_SHAPES)
        def compiled_for(key):
            with _collector_paused():
                other = import_model(data, {**(input_shapes or {}), **{name: list(shape) for name, shape in key}})
                return compile_graph(other, keep_intermediates), other

        def recompile(shapes):  # model.reshape, a dynamic batch or length: the same file for other input shapes
            return compiled_for(tuple(sorted((name, tuple(shape)) for name, shape in shapes.items())))

        return Model.from_graph(graph, variant, keep_intermediates, threads,
                                reloader=Reloader(recompile, graph.source.get("dynamic", {})))


def compile(source, metadata=None, keep_intermediates=False, input_shapes=None):
    """The compiled form (``.qnn`` bytes) of a TFLite or ONNX model: its op records and constants
    before packing, its inputs and outputs, and ``metadata`` (a JSON-ready dict: labels, preprocess,
    task...). ``qnnweb.load`` and web/qnnweb.js load it in any kernel variant without importing the
    model again."""
    data = _read(source)
    if is_compiled(data):
        raise ValueError("this is already a compiled model")
    with _collector_paused():
        graph = import_model(data, input_shapes)
        return compile_graph(graph, keep_intermediates, metadata).to_bytes()


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


def __getattr__(name):
    # `qnnweb.importers` / `qnnweb.exporters` after a plain `import qnnweb`, imported when first used
    if name in ("importers", "exporters"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    if name == "__version__":  # read when asked: importlib.metadata imports ~100 modules
        from .version import package_version

        return package_version()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


async def init():
    """Pyodide: load qnnweb's JavaScript runtime (it instantiates the kernels), after which
    ``qnnweb.load`` works synchronously. ``load_async`` does it itself; in CPython it does nothing."""
    from .host import IN_PYODIDE

    if IN_PYODIDE:
        from .host.pyodide_host import load_runtime

        await load_runtime()


async def load_async(url, variant=None, progress=None, input_shapes=None, threads=None):
    """Pyodide: download a model and load it. ``progress(loaded_bytes, total_bytes)`` is called as
    the bytes arrive (total is 0 when the server does not say)."""
    import asyncio

    from .fetch import fetch_bytes

    _, data = await asyncio.gather(init(), fetch_bytes(url, progress))  # the runtime loads as bytes arrive
    return load(data, variant, input_shapes=input_shapes, threads=threads)
