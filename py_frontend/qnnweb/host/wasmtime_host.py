"""CPython host: the same .wasm modules, run by wasmtime with SIMD and relaxed SIMD enabled.

Threaded modules (``qnnweb-VARIANT-threads.wasm``) import one shared memory; each extra thread is a
Python thread with its own store and instance of the module on that memory, parked in the module's
``qnn_worker`` (wasmtime releases the GIL while wasm runs, so the threads really run in parallel).
"""

import ctypes
import functools
import threading
import weakref

import wasmtime
from wasmtime import _ffi as ffi

# Each worker's wasm stack (the module's own 64 KiB stack is thread 0's): kernels use little of it,
# but an overflow would silently write into other memory, so it is generous.
WORKER_STACK_BYTES = 256 << 10
# The threaded modules' memory limits (wasm_kernels/build.sh: 1 MiB initial, 2 GiB maximum).
SHARED_MEMORY_PAGES = (16, 32768)
MAX_THREADS = 16  # wasm_kernels/src/threadpool.h QNN_MAX_THREADS


@functools.lru_cache(maxsize=None)
def _engine():
    config = wasmtime.Config()
    config.wasm_simd = True
    config.wasm_relaxed_simd = True
    config.wasm_bulk_memory = True
    config.wasm_threads = True
    config.shared_memory = True
    return wasmtime.Engine(config)


@functools.lru_cache(maxsize=8)
def _module(wasm_bytes):
    return wasmtime.Module(_engine(), wasm_bytes)


def _shared_memory_extern(memory):
    # wasmtime-py 50.0.1's SharedMemory._as_extern wraps its pointer twice
    # (bytecodealliance/wasmtime-py#318); this is the extern it should build.
    union = ffi.wasmtime_extern_union(sharedmemory=memory.ptr())
    return ffi.wasmtime_extern_t(ffi.WASMTIME_EXTERN_SHAREDMEMORY, union)


class _SharedMemory(wasmtime.SharedMemory):
    def _as_extern(self):
        return _shared_memory_extern(self)


def _worker(module, memory, thread, stack_top, errors):
    try:
        store = wasmtime.Store(_engine())
        exports = wasmtime.Instance(store, module, [memory]).exports(store)
        exports["__stack_pointer"].set_value(store, wasmtime.Val.i32(stack_top))
        exports["qnn_worker"](store, thread)
    except Exception as exc:  # a trap in a kernel: reported by close(); thread 0 finishes the work
        errors.append(exc)


def _stop(store, stop_workers, threads):
    stop_workers(store)
    for t in threads:
        t.join()


class WasmtimeHost:
    name = "wasmtime"

    @classmethod
    def validate(cls, wasm_bytes):
        try:
            wasmtime.Module.validate(_engine(), wasm_bytes)
            return True
        except wasmtime.WasmtimeError:
            return False

    @classmethod
    def default_threads(cls):
        """CPython runs one thread unless asked (it is the reference host the tests compare with)."""
        return 1

    @classmethod
    def available_threads(cls, requested, variant):
        """How many of `requested` threads can run here, and why not all (None: all)."""
        if requested > MAX_THREADS:
            return MAX_THREADS, f"{requested} threads asked, the kernels run at most {MAX_THREADS}"
        return requested, None

    def __init__(self, wasm_bytes, threads=1):
        self._store = wasmtime.Store(_engine())
        module = _module(bytes(wasm_bytes))
        self._shared = None
        if any(i.module == "env" and i.name == "memory" for i in module.imports):
            self._shared = _SharedMemory(_engine(), wasmtime.MemoryType(wasmtime.Limits(*SHARED_MEMORY_PAGES), shared=True))
            instance = wasmtime.Instance(self._store, module, [self._shared])
        else:
            instance = wasmtime.Instance(self._store, module, [])
        self._exports = instance.exports(self._store)
        self._memory = self._exports["memory"] if self._shared is None else None
        self.threads = 1
        self._workers = []
        self._worker_errors = []
        if threads > 1:
            self._start_workers(module, threads)

    def _start_workers(self, module, threads):
        if self._shared is None:
            raise ValueError("a single-threaded kernel module runs on one thread")
        if self.call("qnn_set_threads", threads) != 0:
            raise ValueError(f"threads={threads}: the kernels run at most {self.call('qnn_max_threads')} threads")
        for thread in range(1, threads):
            stack = self.call("qnn_alloc", WORKER_STACK_BYTES)
            if stack == 0:
                raise MemoryError("out of WebAssembly memory for a worker's stack")
            t = threading.Thread(target=_worker, name=f"qnnweb-worker-{thread}", daemon=True,
                                 args=(module, self._shared, thread, stack + WORKER_STACK_BYTES, self._worker_errors))
            t.start()
            self._workers.append(t)
        self.threads = threads
        self._finalizer = weakref.finalize(self, _stop, self._store, self._exports["qnn_stop_workers"], self._workers)

    def close(self):
        """Ends the worker threads (the module keeps running on the calling thread)."""
        if self._workers:
            self._finalizer()
            self._workers = []
            self.threads = 1
        if self._worker_errors:
            raise RuntimeError(f"a kernel worker thread failed: {self._worker_errors[0]}")

    def call(self, name, *args):
        return self._exports[name](self._store, *args)

    def write(self, address, data):
        if self._shared is None:
            self._memory.write(self._store, data if isinstance(data, (bytes, bytearray)) else bytes(data), address)
            return
        data = memoryview(data).cast("B")
        self._check(address, len(data))
        base = ctypes.addressof(self._shared.data_ptr().contents)
        ctypes.memmove(base + address, (ctypes.c_char * len(data)).from_buffer_copy(data) if data.readonly
                       else (ctypes.c_char * len(data)).from_buffer(data), len(data))

    def _check(self, address, size):
        if address < 0 or size < 0 or address + size > self._shared.data_len():
            raise IndexError(f"memory access [{address}, {address + size}) outside the module's memory")

    def memory_bytes(self):
        return self._memory.data_len(self._store) if self._shared is None else self._shared.data_len()

    def read(self, address, size):
        if self._shared is None:
            return bytes(self._memory.read(self._store, address, address + size))
        self._check(address, size)
        return ctypes.string_at(ctypes.addressof(self._shared.data_ptr().contents) + address, size)
