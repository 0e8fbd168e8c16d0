"""Model: a graph lowered to one execution plan inside one kernel module instance."""

import array
import time

from . import kernels
from .errors import KernelError, ModelError, UnsupportedModelError
from .graph import DTYPE_SIZES, tensor_info
from .host import host_class
from .ops import lower
from .passes import fold_pads
from .planner import plan_memory
from .records import CONSTANT_FIELDS, RECORDS, TENSOR_FIELDS, pack_record, record_words

try:
    import numpy
except ImportError:  # Pyodide without numpy: outputs are array.array
    numpy = None

ARRAY_CODES = {"float32": "f", "int8": "b", "uint8": "B", "int32": "i"}
NUMPY_DTYPES = {"float32": "float32", "int8": "int8", "uint8": "uint8", "int32": "int32"}


class TensorInfo:
    def __init__(self, tensor, offset):
        self.name, self.shape, self.dtype = tensor.name, tuple(tensor.shape), tensor.dtype
        info = tensor_info(tensor)
        self.scale, self.zero_point = info["scale"], info["zero_point"]
        self.size, self.nbytes, self.offset = tensor.size, tensor.nbytes, offset

    def __repr__(self):
        q = f", scale={self.scale}, zero_point={self.zero_point}" if self.scale is not None else ""
        return f"TensorInfo({self.name!r}, shape={self.shape}, dtype={self.dtype}{q})"


class Model:
    def __init__(self, graph, variant=None, keep_intermediates=False):
        self._graph = graph
        self._described = graph.describe()
        steps = lower(fold_pads(graph))
        offsets, arena_bytes = plan_memory(steps, graph, keep_all=keep_intermediates)
        if arena_bytes > MAX_ARENA_BYTES:
            raise ModelError(_arena_message(graph, offsets, arena_bytes))
        self._offsets = offsets if keep_intermediates else None
        host = host_class()
        self.variant = kernels.select_variant(host, variant)
        self._host = host(kernels.wasm_bytes(self.variant))
        self._plan = self._build_plan(steps, offsets, arena_bytes)
        self._arena = self._host.call("qnn_plan_arena", self._plan)
        self.inputs = [TensorInfo(graph.tensors[i], offsets[i]) for i in graph.inputs]
        self.outputs = [TensorInfo(graph.tensors[i], offsets[i]) for i in graph.outputs]
        self.arena_bytes = arena_bytes
        self.weight_bytes = self._host.call("qnn_plan_packed_bytes", self._plan)
        self.kernels = {"gemm": self._cstring(self._host.call("qnn_gemm_kernel_name")),
                        "dwconv": self._cstring(self._host.call("qnn_dwconv_kernel_name"))}
        self.last_run_ms = None

    def _build_plan(self, steps, offsets, arena_bytes):
        real = [s for s in steps if not s.alias]
        self._steps = real
        plan = self._host.call("qnn_plan_create", len(real), arena_bytes)
        if plan == 0:
            raise ModelError(f"the model does not fit in WebAssembly memory ({arena_bytes} bytes of activations): "
                             f"{self._kernel_message()}")
        # Records go to the kernels in batches (one host call each: a call costs more than a small op),
        # their constants staged in front of them; a step whose constants exceed the batch has one alone.
        sizes = [sum(_aligned(len(c)) for c in s.constants.values()) for s in real]
        constants_bytes = max(max(sizes, default=0), min(sum(sizes), STAGING_BYTES))
        staging = self._host.call("qnn_alloc", constants_bytes + RECORDS_BYTES)
        if staging == 0:
            raise MemoryError("out of WebAssembly memory for the weight staging buffer")
        batch_constants, batch_records, first = bytearray(), bytearray(), 0
        for i, step in enumerate(real):
            if (len(batch_constants) + sizes[i] > constants_bytes
                    or len(batch_records) + MAX_RECORD_BYTES > RECORDS_BYTES):
                self._add_records(plan, staging, constants_bytes, batch_constants, batch_records, real, first, i)
                batch_constants, batch_records, first = bytearray(), bytearray(), i
            fields = dict(step.fields)
            for name in TENSOR_FIELDS:
                if name in fields:
                    fields[name] = offsets[fields[name]]
            for name in CONSTANT_FIELDS:
                if name in step.constants:
                    data = step.constants[name]
                    fields[name] = staging + len(batch_constants)
                    batch_constants += data
                    batch_constants += bytes(_aligned(len(data)) - len(data))
            batch_records += pack_record(step.kind, fields)
        self._add_records(plan, staging, constants_bytes, batch_constants, batch_records, real, first, len(real))
        return plan

    def _add_records(self, plan, staging, constants_bytes, constants, records, steps, first, end):
        if first == end:
            return
        self._host.write(staging, constants)
        self._host.write(staging + constants_bytes, records)
        added = self._host.call("qnn_plan_add_records", plan, staging + constants_bytes, end - first)
        if added != end - first:
            # The lowering let through a record the kernels' own checks refuse: name the op.
            step = steps[first + added]
            index, op_type = step.op or (-1, step.kind)
            output = self._graph.tensors[step.outputs[0]].name
            raise UnsupportedModelError([(index, op_type, f"the kernels refused its {step.kind} record "
                                                          f"(output '{output}'): {self._kernel_message()}")])

    def _cstring(self, address):
        data = self._host.read(address, 256)
        return data[:data.index(0)].decode() if 0 in data else data.decode()

    def _kernel_message(self):
        return self._cstring(self._host.call("qnn_error_message"))

    def run(self, *inputs):
        """Run one inference. Takes one buffer per model input (numpy arrays, bytes, array.array,
        memoryview...) and returns the list of outputs (numpy arrays if numpy is importable)."""
        if len(inputs) == 1 and isinstance(inputs[0], (list, tuple)) and len(self.inputs) != 1:
            inputs = tuple(inputs[0])
        if len(inputs) != len(self.inputs):
            raise ValueError(f"the model takes {len(self.inputs)} input(s), got {len(inputs)}")
        for info, x in zip(self.inputs, inputs):
            self._host.write(self._arena + info.offset, _input_bytes(info, x))
        start = time.perf_counter()
        status = self._host.call("qnn_run", self._plan)
        self.last_run_ms = (time.perf_counter() - start) * 1000.0
        if status != 0:
            raise KernelError(self._kernel_message())
        return [self._output(info) for info in self.outputs]

    def profile(self, *inputs, repeats=10):
        """Per-op timing: runs each op of the plan `repeats` times (after one full run with these
        inputs) and returns one dict per op: index, kind, output shape, shape details, median ms."""
        self.run(*inputs)
        times = [[] for _ in self._steps]
        for _ in range(repeats):
            for i in range(len(self._steps)):
                start = time.perf_counter()
                status = self._host.call("qnn_run_ops", self._plan, i, 1)
                times[i].append((time.perf_counter() - start) * 1000.0)
                if status != 0:
                    raise KernelError(self._kernel_message())
        rows = []
        for i, (step, t) in enumerate(zip(self._steps, times)):
            f = step.fields
            details = {k: f[k] for k in ("input_channels", "output_channels", "kernel_height", "kernel_width",
                                         "stride_height", "output_height", "output_width") if k in f}
            family, macs = op_family(step)
            rows.append({"index": i, "kind": step.kind, "output": self._graph.tensors[step.outputs[0]].name,
                         "shape": list(self._graph.tensors[step.outputs[0]].shape), "details": details,
                         "family": family, "macs": macs, "ms": sorted(t)[len(t) // 2]})
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
        if self._offsets is None:
            raise RuntimeError("load the model with keep_intermediates=True to read intermediate tensors")
        matches = [t for t in self._graph.tensors if t.name == name and t.index in self._offsets]
        if not matches:
            raise KeyError(f"no activation tensor named {name!r}")
        return self._output(TensorInfo(matches[-1], self._offsets[matches[-1].index]))

    def _output(self, info):
        data = self._host.read(self._arena + info.offset, info.nbytes)
        if numpy is not None:
            return numpy.frombuffer(data, dtype=NUMPY_DTYPES[info.dtype]).reshape(info.shape).copy()
        return array.array(ARRAY_CODES[info.dtype], data)

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
            "kernels": dict(self.kernels),
            "arena_bytes": self.arena_bytes,
            "weight_bytes": self.weight_bytes,
            # the module's whole WebAssembly memory: packed weights, arena, its 1 MiB floor, staging
            "memory_bytes": self._host.memory_bytes(),
        }

    def __repr__(self):
        return f"<qnnweb.Model {len(self._described['ops'])} ops, variant={self.variant}>"


def op_family(step):
    """(family, multiply-accumulates) of a plan step, for per-op-kind profiles: convolutions by window
    and stride (the few-channel first convolution apart), depthwise likewise; MACs for those, else 0."""
    f = step.fields
    if step.kind not in ("conv2d", "dwconv2d"):
        return step.kind, 0
    family = f"{step.kind} {f['kernel_height']}x{f['kernel_width']} s{f['stride_height']}"
    pixels = f["batch"] * f["output_height"] * f["output_width"]
    taps = f["kernel_height"] * f["kernel_width"]
    if step.kind == "dwconv2d":
        return family, pixels * f["output_channels"] * taps
    first = " (first)" if f["input_channels"] <= 4 else ""
    return family + first, pixels * f["output_channels"] * taps * f["input_channels"]  # per-group input channels


# The arena is one allocation in 32-bit WebAssembly memory, next to the weights and the module's own.
MAX_ARENA_BYTES = (1 << 31) - (64 << 20)


def _arena_message(graph, offsets, arena_bytes):
    largest = sorted({t for t in offsets}, key=lambda t: -graph.tensors[t].nbytes)[:3]
    names = ", ".join(f"'{graph.tensors[t].name}' {list(graph.tensors[t].shape)} ({graph.tensors[t].nbytes} bytes)"
                      for t in largest)
    return (f"the model needs {arena_bytes} bytes of activation memory, more than WebAssembly's 32-bit memory "
            f"can give it (largest tensors: {names})")


# Staging for one batch of records: their constants (or one step's, if larger) and the records.
STAGING_BYTES = 1 << 20
RECORDS_BYTES = 1 << 16
MAX_RECORD_BYTES = 4 * max(record_words(kind) for kind in RECORDS)


def _aligned(n):
    return (n + 15) // 16 * 16


FORMATS = {"f": "float32", "b": "int8", "B": "uint8", "i": "int32", "l": "int64", "d": "float64", "e": "float16"}


def _input_bytes(info, x):
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
        # Raw bytes (bytes, bytearray, uint8 buffer): only the byte count can be checked.
        if view.nbytes != info.nbytes:
            raise ValueError(f"input '{info.name}': expected {info.nbytes} bytes ({info.dtype} {list(info.shape)}), "
                             f"got {view.nbytes} bytes")
        return view.tobytes() if not view.c_contiguous else view
    if got_dtype != info.dtype:
        raise ValueError(f"input '{info.name}': expected dtype {info.dtype}, got {got_dtype}")
    shape = tuple(view.shape)
    if shape != info.shape and not (view.ndim == 1 and shape[0] == info.size):
        raise ValueError(f"input '{info.name}': expected shape {list(info.shape)}, got {list(shape)}")
    if DTYPE_SIZES[info.dtype] != view.itemsize:
        raise ValueError(f"input '{info.name}': expected {DTYPE_SIZES[info.dtype]}-byte items, got {view.itemsize}")
    return view.cast("B") if view.c_contiguous else view.tobytes()


