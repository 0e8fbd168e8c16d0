"""Pyodide host: the browser's own WebAssembly engine, reached through Pyodide's JS FFI.

Kernel modules are instantiated by qnnweb's JavaScript runtime (web/qnnweb.js, shipped inside this
package as qnnweb/js/qnnweb.js), the one place that does it in a browser. The runtime is an ES
module, which only loads asynchronously: ``await load_runtime()`` (done by ``qnnweb.load_async``
and ``qnnweb.init``) before a synchronous ``qnnweb.load``; where JSPI lets Python wait for a
promise synchronously, ``qnnweb.load`` loads it itself.
"""

import functools
from importlib import resources

from js import Uint8Array, WebAssembly  # only imported in Pyodide (see host_class)
from pyodide.code import run_js
from pyodide.ffi import to_js

_runtime = None

_IMPORT_SOURCE = """(source) => import(URL.createObjectURL(new Blob([source], { type: "text/javascript" })))"""


@functools.cache
def runtime_source():
    """The JavaScript runtime's source, the package's own copy."""
    return resources.files("qnnweb").joinpath("js", "qnnweb.js").read_text(encoding="utf-8")


async def load_runtime():
    """The JavaScript runtime module (imported once)."""
    global _runtime
    if _runtime is None:
        _runtime = await run_js(_IMPORT_SOURCE)(runtime_source())
    return _runtime


def runtime():
    if _runtime is not None:
        return _runtime
    try:
        from pyodide.ffi import can_run_sync, run_sync
    except ImportError:  # an older Pyodide
        can_run_sync = None
    if can_run_sync is not None and can_run_sync():
        return run_sync(load_runtime())
    raise RuntimeError("in Pyodide, qnnweb's JavaScript runtime loads asynchronously: `await qnnweb.init()` "
                       "once (or load models with `await qnnweb.load_async(...)`) before `qnnweb.load(...)`")


class PyodideHost:
    name = "browser"

    @classmethod
    def validate(cls, wasm_bytes):
        return bool(WebAssembly.validate(to_js(wasm_bytes)))

    @classmethod
    def default_threads(cls):
        """min(4, cores) on a cross-origin isolated page, else 1 (the runtime's rule)."""
        return int(runtime().defaultThreads())

    @classmethod
    def available_threads(cls, requested, variant):
        support = runtime().threadSupport(requested)
        note = support.note  # a str, or JavaScript's null (pyodide.ffi.jsnull): None here
        return int(support.threads), note if isinstance(note, str) else None

    def __init__(self, wasm_bytes, threads=1):
        # The runtime starts the workers; they join as they start (asynchronously, when this
        # thread returns to its event loop): runs before that use fewer threads, with the same results.
        self._exports = runtime().instantiateKernelsFromBytes(to_js(wasm_bytes), threads)
        self._memory = self._exports.memory
        self.threads = int(self._exports.threads)

    def close(self):
        self._exports.close()
        self.threads = 1

    def call(self, name, *args):
        return getattr(self._exports, name)(*args)

    def _view(self, address, size):
        # A new view each time: growing memory detaches the old ArrayBuffer.
        return Uint8Array.new(self._memory.buffer, address, size)

    def write(self, address, data):
        if hasattr(data, "to_memoryview"):  # a JavaScript typed array (model.run's input): copied in JavaScript
            self._view(address, int(data.byteLength)).set(Uint8Array.new(data.buffer, data.byteOffset, data.byteLength))
            return
        self._view(address, len(data)).assign(data)

    def memory_bytes(self):
        return int(self._memory.buffer.byteLength)

    def read(self, address, size):
        return self._view(address, size).to_bytes()
