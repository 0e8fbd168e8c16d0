"""onnxruntime's Python API on qnnweb: ``import qnnweb.onnxruntime as ort`` in place of
``import onnxruntime as ort`` runs the same script, in CPython or in Pyodide (where onnxruntime
does not exist), for the int8 models qnnweb supports.

    import qnnweb.onnxruntime as ort
    session = ort.InferenceSession("model.onnx", providers=["CPUExecutionProvider"])
    name = session.get_inputs()[0].name
    (scores,) = session.run(None, {name: x})

What is there: ``InferenceSession`` (``run``, ``get_inputs``, ``get_outputs``, ``get_modelmeta``,
``get_providers``, ``get_session_options``, ``get_provider_options``), ``SessionOptions``,
``RunOptions``, ``GraphOptimizationLevel``, ``ExecutionMode``, ``get_available_providers``,
``get_device``. Not there: IO binding, OrtValue, training, custom op libraries, profiling files.
Outputs are numpy arrays when numpy is importable, else ``array.array`` (flat); inputs are numpy
arrays or any buffer (``array.array``, ``memoryview``, ``bytes``) of the input's dtype and size.
"""

import enum

from . import __version__, load
from .errors import ModelError
from .model import numpy

__all__ = [
    "ExecutionMode",
    "GraphOptimizationLevel",
    "InferenceSession",
    "ModelMetadata",
    "NodeArg",
    "RunOptions",
    "SessionOptions",
    "__version__",
    "get_available_providers",
    "get_device",
]

# qnnweb's WebAssembly kernels stand in for onnxruntime's CPU provider: scripts that ask for it,
# or check for it, work unchanged
PROVIDERS = ["CPUExecutionProvider"]
ONNX_TYPES = {"float32": "tensor(float)", "int8": "tensor(int8)", "uint8": "tensor(uint8)", "int32": "tensor(int32)",
              "int64": "tensor(int64)", "float64": "tensor(double)", "float16": "tensor(float16)"}
NUMPY_TYPES = {onnx_type: dtype for dtype, onnx_type in ONNX_TYPES.items()}


class GraphOptimizationLevel(enum.IntEnum):
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class SessionOptions:
    """onnxruntime's session options. ``intra_op_num_threads`` is honoured (0: qnnweb's default,
    ``min(4, cores)`` on a cross-origin isolated page, else 1); every other field is accepted and
    ignored (qnnweb always runs its whole plan, optimized, sequentially, without profiling)."""

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_profiling = False
        self.profile_file_prefix = "onnxruntime_profile_"
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.optimized_model_filepath = ""
        self.use_deterministic_compute = False
        self._config = {}

    def add_session_config_entry(self, key, value):
        self._config[str(key)] = str(value)

    def get_session_config_entry(self, key):
        if key not in self._config:
            raise RuntimeError(f"SessionOptions does not have configuration with key: {key}")
        return self._config[key]


class RunOptions:
    """Accepted by ``run`` and ignored (qnnweb runs have no tag, log level or termination flag)."""

    def __init__(self):
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.terminate = False
        self.only_execute_path_to_fetches = False


class NodeArg:
    """An input or output as ``get_inputs()`` / ``get_outputs()`` describe it."""

    def __init__(self, name, shape, type):
        self.name, self.shape, self.type = name, shape, type

    def __repr__(self):
        return f"NodeArg(name='{self.name}', type='{self.type}', shape={self.shape})"


class ModelMetadata:
    def __init__(self, metadata):
        self.producer_name = metadata.get("producer_name", "")
        self.graph_name = metadata.get("graph_name", "")
        self.domain = metadata.get("domain", "")
        self.description = metadata.get("description", "")
        self.graph_description = metadata.get("graph_description", "")
        self.version = metadata.get("version", 0)
        self.custom_metadata_map = dict(metadata.get("custom_metadata_map", {}))


class InferenceSession:
    """A model loaded by qnnweb, driven as an ``onnxruntime.InferenceSession``. ``path_or_bytes``:
    a path or the model's bytes (ONNX; TFLite and ``.qnn`` files load too). ``providers`` is
    accepted (qnnweb's kernels run whatever is asked). A symbolic batch takes the feed's batch."""

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        self._options = sess_options if sess_options is not None else SessionOptions()
        threads = getattr(self._options, "intra_op_num_threads", 0) or None
        try:
            self._model = load(path_or_bytes, threads=threads)
        except (OSError, TypeError) as e:  # onnxruntime: "Load model from x failed: ..."
            raise ValueError(f"Load model from {_label(path_or_bytes)} failed: {e}") from None
        graph = self._model._graph
        source = graph.source if graph is not None else {}
        self._dims = source.get("dims", {})
        self._metadata = source.get("metadata", {})
        self._inputs = [self._node_arg(i) for i in self._model.inputs]
        self._outputs = [self._node_arg(o) for o in self._model.outputs]

    def _node_arg(self, info):
        return NodeArg(info.name, list(self._dims.get(info.name, info.shape)), ONNX_TYPES.get(info.dtype, info.dtype))

    def get_inputs(self):
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_overridable_initializers(self):
        return []

    def get_modelmeta(self):
        return ModelMetadata(self._metadata)

    def get_providers(self):
        return list(PROVIDERS)

    def get_provider_options(self):
        return {p: {} for p in PROVIDERS}

    def get_session_options(self):
        return self._options

    def set_providers(self, providers=None, provider_options=None):
        pass

    def run(self, output_names, input_feed, run_options=None):
        """The outputs named by ``output_names`` (None or []: all of them, in the model's order)
        for ``input_feed`` ({input name: array})."""
        names = [o.name for o in self._outputs]
        wanted = list(output_names) if output_names else names
        for name in wanted:
            if name not in names:
                raise ValueError(f"Invalid output name:{name}; the model's outputs: {', '.join(names)}")
        if not isinstance(input_feed, dict):
            raise ValueError(f"input_feed must be a dict {{input name: array}}, got {type(input_feed).__name__}")  # noqa: TRY004  (every feed problem is a ValueError, as in onnxruntime)
        missing = [i.name for i in self._inputs if i.name not in input_feed]
        if missing:
            raise ValueError(f"Required inputs ({missing}) are missing from input feed ({list(input_feed)}); "
                             f"the model's inputs: {self._describe(self._inputs)}")
        unknown = [name for name in input_feed if name not in {i.name for i in self._inputs}]
        if unknown:
            raise ValueError(f"Invalid input name: {unknown[0]}; the model's inputs: {self._describe(self._inputs)}")
        feeds = {}
        for arg in self._inputs:
            feeds[arg.name] = _checked_feed(arg, input_feed[arg.name])
        try:
            outputs = self._model.run(feeds)
        except ModelError as e:
            raise RuntimeError(f"qnnweb could not run the model: {e}") from None
        return [outputs[names.index(name)] for name in wanted]

    @staticmethod
    def _describe(args):
        return ", ".join(f"{a.name} ({a.type} {a.shape})" for a in args)


def _checked_feed(arg, value):
    """onnxruntime's checks of a feed, in its words: the dtype, then the fixed dimensions."""
    if numpy is not None and not isinstance(value, numpy.ndarray) and isinstance(value, (list, tuple, int, float)):
        value = numpy.asarray(value, dtype=NUMPY_TYPES.get(arg.type))  # as onnxruntime converts a list
    if numpy is not None and isinstance(value, numpy.ndarray):
        got = ONNX_TYPES.get(str(value.dtype), f"tensor({value.dtype})")
        if got != arg.type:
            raise ValueError(f"Unexpected input data type. Actual: ({got}) , expected: ({arg.type}) "
                             f"for input '{arg.name}'")
        if value.ndim != len(arg.shape):
            raise ValueError(f"Invalid rank for input: {arg.name} Got: {value.ndim} Expected: {len(arg.shape)} "
                             "Please fix either the inputs/outputs or the model.")
        wrong = [(k, got_d, want) for k, (got_d, want) in enumerate(zip(value.shape, arg.shape))
                 if isinstance(want, int) and want > 0 and got_d != want]
        if wrong:
            k, got_d, want = wrong[0]
            raise ValueError(f"Got invalid dimensions for input: {arg.name} for the following indices index: {k} "
                             f"Got: {got_d} Expected: {want} Please fix either the inputs/outputs or the model.")
        return numpy.ascontiguousarray(value)
    return value


def _label(source):
    return source if isinstance(source, str) else f"{type(source).__name__} of the model's bytes"


def get_available_providers():
    return list(PROVIDERS)


def get_all_providers():
    return list(PROVIDERS)


def get_device():
    return "CPU"
