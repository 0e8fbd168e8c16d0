"""Hosts run a kernel module: wasmtime in CPython, the browser's WebAssembly in Pyodide.

A host exposes: ``validate(wasm_bytes)`` (class method: would this engine accept the module),
``call(name, *args) -> int``, ``write(address, data)``, ``read(address, size) -> bytes``.
"""

import sys

IN_PYODIDE = "pyodide" in sys.modules or sys.platform == "emscripten"


def host_class():
    if IN_PYODIDE:
        from .pyodide_host import PyodideHost

        return PyodideHost
    from .wasmtime_host import WasmtimeHost

    return WasmtimeHost
