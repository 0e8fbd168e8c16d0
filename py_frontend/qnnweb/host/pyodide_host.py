"""Pyodide host: the browser's own WebAssembly engine, reached through Pyodide's JS FFI."""

from js import Object, Uint8Array, WebAssembly  # only imported in Pyodide (see host_class)
from pyodide.ffi import to_js


class PyodideHost:
    name = "browser"

    @classmethod
    def validate(cls, wasm_bytes):
        return bool(WebAssembly.validate(to_js(wasm_bytes)))

    def __init__(self, wasm_bytes):
        # Synchronous compile is allowed on the main thread for modules this small (< 8 MB).
        module = WebAssembly.Module.new(to_js(wasm_bytes))
        self._instance = WebAssembly.Instance.new(module, Object.new())
        self._exports = self._instance.exports
        self._memory = self._exports.memory

    def call(self, name, *args):
        return getattr(self._exports, name)(*args)

    def _view(self, address, size):
        # A new view each time: growing memory detaches the old ArrayBuffer.
        return Uint8Array.new(self._memory.buffer, address, size)

    def write(self, address, data):
        self._view(address, len(data)).assign(data)

    def memory_bytes(self):
        return int(self._memory.buffer.byteLength)

    def read(self, address, size):
        return self._view(address, size).to_bytes()
