"""CPython host: the same .wasm modules, run by wasmtime with SIMD and relaxed SIMD enabled."""

import functools

import wasmtime


@functools.lru_cache(maxsize=None)
def _engine():
    config = wasmtime.Config()
    config.wasm_simd = True
    config.wasm_relaxed_simd = True
    config.wasm_bulk_memory = True
    return wasmtime.Engine(config)


@functools.lru_cache(maxsize=8)
def _module(wasm_bytes):
    return wasmtime.Module(_engine(), wasm_bytes)


class WasmtimeHost:
    name = "wasmtime"

    @classmethod
    def validate(cls, wasm_bytes):
        try:
            wasmtime.Module.validate(_engine(), wasm_bytes)
            return True
        except wasmtime.WasmtimeError:
            return False

    def __init__(self, wasm_bytes):
        self._store = wasmtime.Store(_engine())
        instance = wasmtime.Instance(self._store, _module(bytes(wasm_bytes)), [])
        self._exports = instance.exports(self._store)
        self._memory = self._exports["memory"]

    def call(self, name, *args):
        return self._exports[name](self._store, *args)

    def write(self, address, data):
        self._memory.write(self._store, data if isinstance(data, (bytes, bytearray)) else bytes(data), address)

    def memory_bytes(self):
        return self._memory.data_len(self._store)

    def read(self, address, size):
        return bytes(self._memory.read(self._store, address, address + size))
