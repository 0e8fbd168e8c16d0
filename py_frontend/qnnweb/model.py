"""Model: a graph lowered to one execution plan inside one kernel module instance."""

import array
import sys
import time
from typing import Callable, NamedTuple

from . import kernels
from .errors import KernelError, ModelError, UnsupportedModelError
from .compiled import compile_steps
from .graph import DTYPE_SIZES
from .host import host_class
from .ops import lower
from .ops.byte_functions import fuse_byte_functions
from .passes import fold_pads, reductions_over_adjacent_axes, transpose_convs_as_convs, transposed_matmul_operands
from .planner import plan_memory
from .records import ABI_VERSION

try:
    import numpy
except ImportError:  # Pyodide without numpy: outputs are array.array
    numpy = None

ARRAY_CODES = {"float32": "f", "int8": "b", "uint8": "B", "int32": "i", "int64": "q"}


class TensorInfo:
    def __init__(self, entry):
        """``entry``: a compiled model's tensor dict (name, shape, dtype, scale, zero_point, offset)."""
        self.name, self.shape, self.dtype = entry["name"], tuple(entry["shape"]), entry["dtype"]
        self.scale, self.zero_point, self.offset = entry["scale"], entry["zero_point"], entry["offset"]
        # ids of an embedding table: valid in [-index_rows, index_rows) (compiled.compile_steps)
        self.index_rows = entry.get("index_rows")
        self.size = 1
        for d in self.shape:
            self.size *= d
        self.nbytes = self.size * DTYPE_SIZES[self.dtype]

    def __repr__(self):
        q = f", scale={self.scale}, zero_point={self.zero_point}" if self.scale is not None else ""
        return f"TensorInfo({self.name!r}, shape={self.shape}, dtype={self.dtype}{q})"


def compile_graph(graph, keep_intermediates=False, metadata=None):
    """Lower, plan and record a graph: the CompiledModel every Model is loaded from."""
    # each pass returns a new graph, with tensors of its own
    rewritten = transposed_matmul_operands(fold_pads(reductions_over_adjacent_axes(transpose_convs_as_convs(graph))))
    steps = fuse_byte_functions(rewritten, lower(rewritten), keep_intermediates)
    offsets, arena_bytes = plan_memory(steps, rewritten, keep_all=keep_intermediates)
    if arena_bytes > MAX_ARENA_BYTES:
        raise ModelError(_arena_message(rewritten, offsets, arena_bytes))
    return compile_steps(rewritten, steps, offsets, arena_bytes, metadata, keep_intermediates,
                         describe=graph.describe())


class Reloader(NamedTuple):
    """What a model loaded from its source needs to load again for other input shapes (``reshape``,
    a dynamic batch in a feed)."""

    compile: Callable  # {input name: shape} -> (the CompiledModel for those shapes, its graph)
    dynamic: dict      # the input axes that may change: {input name: [axes]}


class Model:
    """One compiled model in one kernel module instance. ``graph`` (the imported source) is kept
    for tests and debugging when the model was loaded from its source rather than a .qnn file.

    ``host``: the host class that runs the kernels (default: this Python's, ``host.host_class()``);
    ``kernel_bytes``: ``(variant, threaded) -> the module's bytes`` (default ``kernels.wasm_bytes``),
    e.g. a candidate build a tool or test runs instead of the shipped modules; ``reloader``: how to
    load the model again for other input shapes (None: its shapes are fixed)."""

    def __init__(self, compiled, variant=None, graph=None, threads=None, *, host=None, kernel_bytes=None,
                 reloader=None):
        self._host_class = host_class() if host is None else host
        self._kernel_bytes = kernels.wasm_bytes if kernel_bytes is None else kernel_bytes
        self._reloader = reloader
        self.variant = kernels.select_variant(self._host_class, variant, self._kernel_bytes)
        requested = self._host_class.default_threads() if threads is None else _thread_count(threads)
        count, self.threads_note = self._host_class.available_threads(requested, self.variant)
        self._load(compiled, graph, count)

    @classmethod
    def from_graph(cls, graph, variant=None, keep_intermediates=False, threads=None, **options):
        """Compile an imported graph and load it (what ``qnnweb.load`` does with a model file);
        ``options``: ``Model``'s keywords (host, kernel_bytes, reloader)."""
        return cls(compile_graph(graph, keep_intermediates), variant, graph=graph, threads=threads, **options)

    def _load(self, compiled, graph, threads):
        """Instantiate the kernels on ``threads`` threads and build ``compiled``'s plan in them; from
        then on the model runs that (an instance it ran before is the caller's to close). If this
        fails the model is as it was, and the new instance leaves no worker threads behind."""
        host = self._host_class(self._kernel_bytes(self.variant, threads > 1), threads=threads)
        try:
            plan = self._build_plan(host, compiled, graph)
            arena = host.call("qnn_plan_arena", plan)
            weight_bytes = host.call("qnn_plan_packed_bytes", plan)
            kernel_names = {"gemm": _cstring(host, host.call("qnn_gemm_kernel_name")),
                            "dwconv": _cstring(host, host.call("qnn_dwconv_kernel_name"))}
        except BaseException:
            host.close()  # a model that did not load leaves no worker threads behind
            raise
        self._host, self._plan, self._arena = host, plan, arena
        self._graph, self._compiled, self._steps = graph, compiled, compiled.steps
        self._described, self.metadata = compiled.describe, compiled.metadata
        self.threads = host.threads
        self.inputs = [TensorInfo(t) for t in compiled.inputs]
        self.outputs = [TensorInfo(t) for t in compiled.outputs]
        self.arena_bytes = compiled.arena_bytes
        self.weight_bytes = weight_bytes
        self.kernels = kernel_names
        self.last_run_ms = None
        self.reset()

    def reset(self):
        """Starts a new stream: a model with state (a streaming TFLite model's resource variables)
        forgets what earlier runs left in it, as if just loaded. Nothing to do for other models."""
        for state in self._compiled.state:
            self._host.write(self._arena + state.offset, state.initial)

    def close(self):
        """Ends the model's worker threads and lets its kernel module and memory go (a closed model
        no longer runs: its methods raise ValueError). Closing twice is fine."""
        if not isinstance(self._host, ClosedHost):
            host, self._host = self._host, ClosedHost()
            self.threads = 1
            host.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @staticmethod
    def _build_plan(host, compiled, graph):
        """The plan of ``compiled`` built in ``host``'s kernel module. ``graph`` None: the model came
        from a .qnn file, whose constants' addresses the kernels trust (see ``_call_kernels``)."""
        if host.call("qnn_abi_version") != ABI_VERSION:
            raise ModelError(f"the kernel module implements ABI version {host.call('qnn_abi_version')}, "
                             f"this frontend writes version {ABI_VERSION}: rebuild with ./build.sh build")
        plan = host.call("qnn_plan_create", len(compiled.steps), compiled.arena_bytes)
        if plan == 0:
            raise ModelError(f"the model does not fit in WebAssembly memory ({compiled.arena_bytes} bytes of "
                             f"activations): {_kernel_message(host)}")
        constants_bytes, records_bytes = compiled.staging
        staging = host.call("qnn_alloc", constants_bytes + records_bytes)
        if staging == 0:
            raise ModelError(f"the model does not fit in WebAssembly memory ({compiled.arena_bytes} bytes of "
                             f"activations, {constants_bytes + records_bytes} bytes of weight staging)")
        added_before = 0
        for constants, records, count, relocations in compiled.batches:
            words = array.array("i", records)
            if sys.byteorder != "little":
                words.byteswap()
            for w in relocations:
                words[w] += staging   # constant fields hold offsets into the batch's constants
            if sys.byteorder != "little":
                words.byteswap()
            host.write(staging, constants)
            host.write(staging + constants_bytes, words.tobytes())
            added = _call_kernels(host, graph is None, "qnn_plan_add_records", plan, staging + constants_bytes, count)
            if added != count:
                # The lowering let through a record the kernels' own checks refuse: name the op.
                step = compiled.steps[added_before + added]
                error = UnsupportedModelError([(step.op_index, step.op_type,
                                                f"the kernels refused its {step.kind} record "
                                                f"(output '{step.output}' {list(step.output_shape)}): "
                                                f"{_kernel_message(host)}")])
                # what the plan had asked for by then (arena, packed weights, indirection buffers of the
                # ops before): planned memory, not a leak (the fuzzer, tools/qnnweb_dev/fuzz, judges peak memory against it)
                error.planned_bytes = compiled.arena_bytes + host.call("qnn_plan_packed_bytes", plan)
                raise error
            added_before += count
        return plan

    def run(self, *inputs, **feeds):
        """Run one inference. Takes one buffer per model input (numpy arrays, bytes, array.array,
        memoryview...), in the model's order, or by name: ``run({"input": x})`` or ``run(input=x)``.
        Returns the list of outputs (numpy arrays if numpy is importable). A shaped input (a numpy
        array, a multi-dimensional memoryview) whose size differs from the model's in a dynamic
        dimension (an ONNX model's symbolic batch, a TFLite ``shape_signature`` of -1) reloads the
        model for that shape first (``model.inputs`` then says the new shapes)."""
        inputs = self._ordered(inputs, feeds)
        self._reshape_for(inputs)
        for info, x in zip(self.inputs, inputs):
            data = _input_bytes(info, x)
            _check_ids(info, data)
            self._host.write(self._arena + info.offset, data)
        start = time.perf_counter()
        status = self._host.call("qnn_run", self._plan)
        self.last_run_ms = (time.perf_counter() - start) * 1000.0
        if status != 0:
            raise KernelError(_kernel_message(self._host))
        return [self._output(info) for info in self.outputs]

    def _ordered(self, inputs, feeds):
        """The inputs in the model's order, from positional buffers, one dict or keywords."""
        if len(inputs) == 1 and isinstance(inputs[0], dict) and not feeds:
            feeds, inputs = inputs[0], ()
        if feeds:
            if inputs:
                raise ValueError("give the inputs either in order or by name, not both")
            names = [info.name for info in self.inputs]
            unknown = [name for name in feeds if name not in names]
            missing = [name for name in names if name not in feeds]
            if unknown or missing:
                problem = (f"no input named {', '.join(map(repr, unknown))}" if unknown
                           else f"missing input {', '.join(map(repr, missing))}")
                raise ValueError(f"{problem}; the model's inputs: {self._input_list()}")
            return [feeds[name] for name in names]
        if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)) and len(self.inputs) != 1:
            inputs = tuple(inputs[0])
        if len(inputs) != len(self.inputs):
            raise ValueError(f"the model takes {len(self.inputs)} input(s) ({self._input_list()}), got {len(inputs)}")
        return list(inputs)

    def _input_list(self):
        return ", ".join(f"'{i.name}' ({i.dtype} {list(i.shape)})" for i in self.inputs)

    def _reshape_for(self, inputs):
        """Reload for the feeds' shapes where they differ in dynamic dimensions only."""
        dynamic = {} if self._reloader is None else self._reloader.dynamic
        if not dynamic:
            return
        shapes = {}
        for info, x in zip(self.inputs, inputs):
            axes = dynamic.get(info.name)
            shape = _shape_of(x)
            if not axes or shape is None or shape == info.shape or len(shape) != len(info.shape):
                continue
            if all(a == b or k in axes for k, (a, b) in enumerate(zip(shape, info.shape))):
                shapes[info.name] = list(shape)
        if shapes:
            self.reshape({**{i.name: list(i.shape) for i in self.inputs if i.name in dynamic}, **shapes})

    def reshape(self, input_shapes):
        """Loads the model again for other input shapes ({input name: shape}; a TFLite model changes
        only its batch, an ONNX model its symbolic dimensions), in place: the same variant and thread
        count. Only a model loaded from its source (not a .qnn) can."""
        if self._reloader is None:
            raise ValueError("a compiled (.qnn) model's input shapes are fixed when it is compiled: "
                             "pass input_shapes to qnnweb.compile")
        compiled, graph = self._reloader.compile(input_shapes)
        old = self._host
        self._load(compiled, graph, self.threads)
        old.close()

    def profile(self, *inputs, repeats=10):
        """Per-op timing: `repeats` inferences on these inputs, each op timed on its own call, in plan
        order; returns one dict per op: index, kind, output shape, shape details, median ms. (Each
        repeat writes the inputs again and runs the ops in order, so every op reads what a real
        inference gives it: an op repeated alone can read what later ops left in the arena, e.g.
        float inputs overwritten by int8 bytes that read as denormals and run 3x slower.)"""
        self.run(*inputs)
        staged = [_input_bytes(info, x) for info, x in zip(self.inputs, self._ordered(inputs, {}))]
        times = [[] for _ in self._steps]
        for _ in range(repeats):
            for info, data in zip(self.inputs, staged):
                self._host.write(self._arena + info.offset, data)
            for i in range(len(self._steps)):
                start = time.perf_counter()
                status = self._host.call("qnn_run_ops", self._plan, i, 1)
                times[i].append((time.perf_counter() - start) * 1000.0)
                if status != 0:
                    raise KernelError(_kernel_message(self._host))
        rows = []
        for i, (step, t) in enumerate(zip(self._steps, times)):
            rows.append({"index": i, "kind": step.kind, "output": step.output, "shape": list(step.output_shape),
                         "details": step.details, "family": step.family, "macs": step.macs,
                         "ms": sorted(t)[len(t) // 2]})
        return rows

    def profile_by_family(self, *inputs, repeats=10):
        """``profile`` summed per op family: {family: {"ms", "ops", "gmac_per_s"}}, slowest first."""
        families = {}
        for row in self.profile(*inputs, repeats=repeats):
            f = families.setdefault(row["family"], {"ms": 0.0, "ops": 0, "macs": 0})
            f["ms"] += row["ms"]
            f["ops"] += 1
            f["macs"] += row["macs"]
        for f in families.values():
            macs = f.pop("macs")
            f["gmac_per_s"] = macs / f["ms"] / 1e6 if macs and f["ms"] > 0 else None
        return dict(sorted(families.items(), key=lambda kv: -kv[1]["ms"]))

    def intermediate(self, name):
        """The last run's value of any tensor, by name (needs ``keep_intermediates=True``)."""
        if self._compiled.intermediates is None:
            raise RuntimeError("load the model with keep_intermediates=True to read intermediate tensors")
        if name not in self._compiled.intermediates:
            raise KeyError(f"no activation tensor named {name!r}")
        return self._output(TensorInfo(self._compiled.intermediates[name]))

    def _output(self, info):
        return as_array(self._host.read(self._arena + info.offset, info.nbytes), info.dtype, info.shape)

    def info(self):
        def entry(t):
            return {"name": t.name, "shape": list(t.shape), "dtype": t.dtype, "scale": t.scale, "zero_point": t.zero_point}

        return {
            "format": self._described["format"],
            "inputs": [entry(t) for t in self.inputs],
            "outputs": [entry(t) for t in self.outputs],
            "ops": self._described["ops"],
            "variant": self.variant,
            "host": self._host.name,
            "threads": self.threads,
            # why fewer threads run than were asked for (None when all of them run)
            "threads_note": self.threads_note,
            "kernels": dict(self.kernels),
            "arena_bytes": self.arena_bytes,
            "weight_bytes": self.weight_bytes,
            # the module's whole WebAssembly memory: packed weights, arena, its 1 MiB floor, staging
            "memory_bytes": self._host.memory_bytes(),
        }

    def __repr__(self):
        return f"<qnnweb.Model {len(self._described['ops'])} ops, variant={self.variant}>"


# The arena is one allocation in the kernels' WebAssembly memory (at most 2 GiB: wasm_kernels/build.sh's
# --max-memory), next to the weights and the module's own.
MAX_ARENA_BYTES = (1 << 31) - (64 << 20)


def _arena_message(graph, offsets, arena_bytes):
    largest = sorted({t for t in offsets}, key=lambda t: -graph.tensors[t].nbytes)[:3]
    names = ", ".join(f"'{graph.tensors[t].name}' {list(graph.tensors[t].shape)} ({graph.tensors[t].nbytes} bytes)"
                      for t in largest)
    return (f"the model needs {arena_bytes} bytes of activation memory, more than WebAssembly's 32-bit memory "
            f"can give it (largest tensors: {names})")


def _call_kernels(host, from_file, name, *args):
    """A call that reads constants at addresses a .qnn file gave (``from_file``): a file crafted to
    point outside memory makes the module trap, which is reported as a corrupt model."""
    try:
        return host.call(name, *args)
    except Exception as exc:
        if from_file and type(exc).__name__ in ("Trap", "WasmtimeError", "JsException"):
            raise ModelError(f"compiled model corrupt: the kernels trapped while loading it ({exc})") from None
        raise


def _cstring(host, address):
    data = host.read(address, 256)
    return data[:data.index(0)].decode() if 0 in data else data.decode()


def _kernel_message(host):
    return _cstring(host, host.call("qnn_error_message"))


def _thread_count(threads):
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads must be a positive integer, got {threads!r}")
    return threads


FORMATS = {"f": "float32", "b": "int8", "B": "uint8", "i": "int32", "l": "int64", "d": "float64", "e": "float16"}


def as_array(data, dtype, shape):
    """Bytes of a tensor as qnnweb hands tensors out: a numpy array of its dtype and shape when numpy
    is importable, else a flat array.array."""
    if numpy is not None:
        return numpy.frombuffer(data, dtype=dtype).reshape(shape).copy()
    return array.array(ARRAY_CODES[dtype], data)


def _shape_of(x):
    """The shape a buffer declares (a numpy array's, a memoryview's), or None for flat buffers."""
    try:
        view = memoryview(x)
    except TypeError:
        return None
    return tuple(view.shape) if view.ndim > 1 else None


class ClosedHost:
    """What a closed model's host is: every use says the model is closed."""

    name = "closed"
    threads = 1

    def close(self):
        pass

    def __getattr__(self, name):
        raise ValueError("the model is closed (model.close()): load it again to run it")


# JavaScript typed arrays a page hands to Python in Pyodide (JsProxy objects): their element type
TYPED_ARRAYS = {"Float32Array": "float32", "Int8Array": "int8", "Uint8Array": "uint8", "Uint8ClampedArray": "uint8",
                "Int32Array": "int32", "BigInt64Array": "int64", "Float64Array": "float64", "Int16Array": "int16",
                "Uint16Array": "uint16", "Uint32Array": "uint32"}


def _check_raw_bytes(info, nbytes):
    """Raw bytes (bytes, bytearray, a uint8 buffer or Uint8Array) for an input of another dtype: only
    their count can be checked."""
    if nbytes != info.nbytes:
        raise ValueError(f"input '{info.name}': expected {info.nbytes} bytes ({info.dtype} {list(info.shape)}), "
                         f"got {nbytes} bytes")


def _typed_array(info, x):
    """``x`` itself where it is a JavaScript typed array of ``info``'s dtype and size (Pyodide: the
    host copies it into the kernels' memory in JavaScript, without a Python copy), else None. A
    Uint8Array also passes as the raw bytes of any dtype, as Python bytes do."""
    if not (hasattr(x, "to_memoryview") and hasattr(x, "BYTES_PER_ELEMENT")):  # pyodide.ffi.JsBuffer
        return None
    kind = TYPED_ARRAYS.get(str(x.constructor.name))
    if kind == "uint8" and info.dtype != "uint8":
        _check_raw_bytes(info, int(x.byteLength))
        return x
    if kind != info.dtype:
        raise ValueError(f"input '{info.name}': expected dtype {info.dtype}, got {kind or x.constructor.name} "
                         f"(a {x.constructor.name})")
    if int(x.length) != info.size:
        raise ValueError(f"input '{info.name}': expected {info.size} elements ({list(info.shape)}), got {int(x.length)}")
    return x


def _check_ids(info, data):
    """An input of ids (info.index_rows set): every id within the table, as onnxruntime's Gather requires."""
    if info.index_rows is None:
        return
    view = memoryview(data.to_memoryview() if hasattr(data, "to_memoryview") else data).cast("B")
    ids = view.cast("q" if info.dtype == "int64" else "i")
    low, high = (min(ids), max(ids)) if len(ids) else (0, 0)
    if low < -info.index_rows or high >= info.index_rows:
        bad = low if low < -info.index_rows else high
        raise ValueError(f"input '{info.name}': id {bad} is outside the embedding table's {info.index_rows} rows "
                         f"(ids lie in [{-info.index_rows}, {info.index_rows}))")


def _input_bytes(info, x):
    typed = _typed_array(info, x)
    if typed is not None:
        return typed
    try:
        view = memoryview(x)
    except TypeError:
        raise ValueError(f"input '{info.name}': expected a buffer ({info.dtype} {list(info.shape)}), "
                         f"got {type(x).__name__}") from None
    fmt = view.format.lstrip("<=@")
    if fmt == "c":
        fmt = "B"
    if fmt in ("l", "q") and view.itemsize == 4:
        fmt = "i"
    got_dtype = FORMATS.get(fmt, fmt)
    raw = fmt == "B" and view.ndim == 1 and info.dtype != "uint8"
    if raw:
        _check_raw_bytes(info, view.nbytes)
        return view.tobytes() if not view.c_contiguous else view
    if got_dtype != info.dtype:
        raise ValueError(f"input '{info.name}': expected dtype {info.dtype}, got {got_dtype}")
    shape = tuple(view.shape)
    if shape != info.shape and not (view.ndim == 1 and shape[0] == info.size):
        raise ValueError(f"input '{info.name}': expected shape {list(info.shape)}, got {list(shape)}")
    if DTYPE_SIZES[info.dtype] != view.itemsize:
        raise ValueError(f"input '{info.name}': expected {DTYPE_SIZES[info.dtype]}-byte items, got {view.itemsize}")
    return view.cast("B") if view.c_contiguous else view.tobytes()


