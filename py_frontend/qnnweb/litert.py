"""ai-edge-litert's (and tf.lite's) ``Interpreter`` on qnnweb: ``from qnnweb.litert import Interpreter``
in place of ``from ai_edge_litert.interpreter import Interpreter`` runs the same script, in CPython or
in Pyodide (where ai-edge-litert does not exist), for the int8 TFLite models qnnweb supports.

    from qnnweb.litert import Interpreter
    interpreter = Interpreter(model_path="model.tflite")
    interpreter.allocate_tensors()
    inp, out = interpreter.get_input_details()[0], interpreter.get_output_details()[0]
    interpreter.set_tensor(inp["index"], x)
    interpreter.invoke()
    scores = interpreter.get_tensor(out["index"])

What is there: ``allocate_tensors``, ``get_input_details`` / ``get_output_details`` /
``get_tensor_details`` (the same dicts), ``set_tensor``, ``invoke``, ``get_tensor``, ``tensor``
(a writable view of an input: ``interpreter.tensor(i)()[0] = x``), ``resize_tensor_input`` (the
batch), ``get_signature_list``, ``get_signature_runner``. Intermediate tensors are readable with
``experimental_preserve_all_tensors=True``. Delegates and op resolvers are accepted and ignored
(qnnweb's kernels run every op). Without numpy (Pyodide), tensors are ``array.array`` (flat), shapes
lists and dtypes their names.
"""

import array

from . import load
from .graph import DTYPE_SIZES
from .model import ARRAY_CODES, as_array, numpy

__all__ = ["Interpreter", "OpResolverType", "SignatureRunner", "load_delegate"]

LITERT_TYPE_NAMES = {"float32": "FLOAT32", "int8": "INT8", "uint8": "UINT8", "int32": "INT32", "int64": "INT64",
                     "float64": "FLOAT64", "float16": "FLOAT16", "int16": "INT16"}


class OpResolverType:
    AUTO, BUILTIN, BUILTIN_REF, BUILTIN_WITHOUT_DEFAULT_DELEGATES = 0, 1, 2, 3


def load_delegate(library, options=None):
    raise ValueError(f"qnnweb runs its own WebAssembly kernels: the delegate {library!r} cannot be loaded "
                     "(pass no experimental_delegates)")


class Interpreter:
    """A TFLite model loaded by qnnweb, driven as ai-edge-litert's ``Interpreter``. ``num_threads``:
    how many threads run the kernels (None or -1: qnnweb's default)."""

    def __init__(self, model_path=None, model_content=None, experimental_delegates=None, num_threads=None,
                 experimental_op_resolver_type=OpResolverType.AUTO, experimental_preserve_all_tensors=False,
                 **ignored):
        if (model_path is None) == (model_content is None):
            raise ValueError("Can't both provide `model_path` and `model_content`" if model_path is not None
                             else "`model_path` or `model_content` must be specified.")
        if num_threads is not None and (not isinstance(num_threads, int) or num_threads < -1):
            raise ValueError("num_threads should >= 1 (or -1: qnnweb's default)")
        self._threads = num_threads if num_threads and num_threads > 0 else None
        self._keep = bool(experimental_preserve_all_tensors)
        self._model = load(model_path if model_path is not None else bytes(model_content),
                           keep_intermediates=self._keep, threads=self._threads)
        graph = self._model._graph
        if graph is None or graph.format != "tflite":
            self._model.close()
            raise ValueError("qnnweb.litert.Interpreter runs TFLite models (use qnnweb.onnxruntime for ONNX, "
                             "qnnweb.load for compiled .qnn files)")
        self._signatures = graph.source.get("signatures", [])
        self._shape_signature = graph.source.get("shape_signature", {})
        self._pending = {}      # input index -> the shape resize_tensor_input asked for
        self._buffers = None    # input index -> its value (made by allocate_tensors)
        self._results = None    # output index -> the last invoke's value

    # ------------------------------------------------------------------ details

    @property
    def _graph(self):
        return self._model._graph

    def _details(self, index):
        t = self._graph.tensors[index]
        shape = list(self._shape(index))
        signature = list(self._shape_signature.get(index, t.shape))
        scales = [float(s) for s in t.scale]
        zero_points = [int(z) for z in t.zero_point]
        per_tensor = (scales[0], zero_points[0]) if len(scales) == 1 else (0.0, 0)
        if numpy is not None:
            shape, signature = numpy.array(shape, numpy.int32), numpy.array(signature, numpy.int32)
            scales, zero_points = numpy.array(scales, numpy.float32), numpy.array(zero_points, numpy.int32)
        return {"name": t.name, "index": index, "shape": shape, "shape_signature": signature,
                "dtype": getattr(numpy, t.dtype, t.dtype) if numpy is not None else t.dtype,
                "quantization": per_tensor,
                "quantization_parameters": {"scales": scales, "zero_points": zero_points,
                                            "quantized_dimension": t.quantized_dimension if len(t.scale) > 1 else 0,
                                            "block_size": 0},
                "sparsity_parameters": {}}

    def _shape(self, index):
        if index in self._pending:
            return tuple(self._pending[index])
        return tuple(self._graph.tensors[index].shape)

    def get_input_details(self):
        return [self._details(i) for i in self._graph.inputs]

    def get_output_details(self):
        return [self._details(i) for i in self._graph.outputs]

    def get_tensor_details(self):
        return [self._details(t.index) for t in self._graph.tensors if t.dtype in DTYPE_SIZES]

    # ------------------------------------------------------------------ running

    def resize_tensor_input(self, input_index, tensor_size, strict=False):
        """A new shape for an input (qnnweb changes a TFLite model's batch only), in effect at the
        next ``allocate_tensors()``. ``strict``: only dimensions whose shape signature is -1."""
        position = self._input_position(input_index)
        current = self._graph.tensors[input_index].shape
        size = [int(d) for d in tensor_size]
        if strict:
            signature = self._shape_signature.get(input_index, current)
            fixed = [k for k, (a, b) in enumerate(zip(size, current)) if a != b and signature[k] != -1]
            if len(size) != len(current) or fixed:
                raise ValueError(f"ResizeInputTensorStrict only allows mutating unknown dimensions identified by -1 "
                                 f"(input {position}, shape signature {list(signature)}, asked {size})")
        self._pending[input_index] = size
        self._buffers = None

    def allocate_tensors(self):
        if self._pending:
            names = {i: self._graph.tensors[i].name for i in self._graph.inputs}
            self._model.reshape({names[i]: shape for i, shape in self._pending.items()})
            self._pending = {}
        self._buffers = {i: _zeros(self._graph.tensors[i]) for i in self._graph.inputs}
        self._results = None

    def _input_position(self, index):
        if index not in self._graph.inputs:
            raise ValueError(f"Tensor {index} is not an input of the model (its inputs: {list(self._graph.inputs)})")
        return self._graph.inputs.index(index)

    def _ready(self):
        if self._buffers is None:
            raise RuntimeError("Invoke called on model that is not ready: call allocate_tensors() first "
                               "(again after resize_tensor_input)")

    def set_tensor(self, tensor_index, value):
        """Copies ``value`` (a numpy array, or a buffer of the input's dtype and size) into the input."""
        position = self._input_position(tensor_index)
        self._ready()
        t = self._graph.tensors[tensor_index]
        if numpy is not None and not isinstance(value, numpy.ndarray) and isinstance(value, (list, tuple, int, float)):
            value = numpy.asarray(value, dtype=t.dtype)
        if numpy is not None and isinstance(value, numpy.ndarray):
            got = LITERT_TYPE_NAMES.get(str(value.dtype), str(value.dtype).upper())
            if str(value.dtype) != t.dtype:
                raise ValueError(f"Cannot set tensor: Got value of type {got} but expected type "
                                 f"{LITERT_TYPE_NAMES.get(t.dtype, t.dtype)} for input {position}, name: {t.name}")
            if value.ndim != len(t.shape):
                raise ValueError(f"Cannot set tensor: Dimension mismatch. Got {value.ndim} but expected "
                                 f"{len(t.shape)} for input {position}.")
            for k, (got_d, want) in enumerate(zip(value.shape, t.shape)):
                if got_d != want:
                    raise ValueError(f"Cannot set tensor: Dimension mismatch. Got {got_d} but expected {want} for "
                                     f"dimension {k} of input {position}.")
            numpy.copyto(self._buffers[tensor_index], value)
            return
        view = memoryview(value).cast("B")
        target = memoryview(self._buffers[tensor_index]).cast("B")
        if view.nbytes != target.nbytes:
            raise ValueError(f"Cannot set tensor: got {view.nbytes} bytes but input {position} ('{t.name}', "
                             f"{t.dtype} {list(t.shape)}) holds {target.nbytes}")
        target[:] = view

    def tensor(self, tensor_index):
        """A function returning a writable view of an input (what ``invoke`` reads), as
        ``Interpreter.tensor`` gives; for other tensors, their value (a copy)."""
        if tensor_index in self._graph.inputs:
            self._ready()
            return lambda: self._buffers[tensor_index]
        return lambda: self.get_tensor(tensor_index)

    def invoke(self):
        self._ready()
        outputs = self._model.run(*(self._buffers[i] for i in self._graph.inputs))
        self._results = dict(zip(self._graph.outputs, outputs))

    def get_tensor(self, tensor_index, subgraph_index=0):
        """A copy of a tensor's value: an input as set, an output of the last ``invoke``, any other
        activation with ``experimental_preserve_all_tensors=True``."""
        if not isinstance(tensor_index, int) or not 0 <= tensor_index < len(self._graph.tensors):
            raise ValueError(f"Tensor with no shape found: {tensor_index} (the model has "
                             f"{len(self._graph.tensors)} tensors)")
        t = self._graph.tensors[tensor_index]
        if tensor_index in self._graph.inputs:
            self._ready()
            return _copy(self._buffers[tensor_index])
        if self._results is None:
            raise ValueError(f"tensor {tensor_index} ('{t.name}') has no value yet: call invoke() first")
        if tensor_index in self._results:
            return _copy(self._results[tensor_index])
        if t.is_constant:
            return as_array(bytes(t.data), t.dtype, t.shape)
        if not self._keep:
            raise ValueError(f"tensor {tensor_index} ('{t.name}') is an intermediate tensor: load with "
                             "experimental_preserve_all_tensors=True to read it")
        if t.name not in self._model._compiled.intermediates:
            raise ValueError(f"tensor {tensor_index} ('{t.name}') is computed inside a fused kernel (or folded at "
                             "load): qnnweb never stores it")
        return self._model.intermediate(t.name)

    def reset_all_variables(self):
        # LiteRT resets the tensors flagged is_variable (old LSTM state), which qnnweb's models have none of;
        # resource variables (VAR_HANDLE) keep their values there as here: Model.reset() starts a new stream
        pass

    def num_subgraphs(self):
        return 1

    # ------------------------------------------------------------------ signatures

    def get_signature_list(self):
        return {s["key"]: {"inputs": list(s["inputs"]), "outputs": list(s["outputs"])} for s in self._signatures}

    def get_signature_runner(self, signature_key=None):
        if signature_key is None:
            if len(self._signatures) != 1:
                raise ValueError(f"SignatureDef signature_key is None and model has {len(self._signatures)} "
                                 "Signatures. None is only allowed when the model has 1 SignatureDef")
            return SignatureRunner(self, self._signatures[0])
        for s in self._signatures:
            if s["key"] == signature_key:
                return SignatureRunner(self, s)
        raise ValueError(f"Invalid signature_key provided: {signature_key!r} (the model has "
                         f"{[s['key'] for s in self._signatures]})")


class SignatureRunner:
    """``runner(name=value, ...)`` -> {output name: value}, by the signature's names."""

    def __init__(self, interpreter, signature):
        self._interpreter = interpreter
        self._inputs, self._outputs = signature["inputs"], signature["outputs"]

    def get_input_details(self):
        return {name: self._interpreter._details(i) for name, i in self._inputs.items()}

    def get_output_details(self):
        return {name: self._interpreter._details(i) for name, i in self._outputs.items()}

    def __call__(self, **kwargs):
        missing = [name for name in self._inputs if name not in kwargs]
        unknown = [name for name in kwargs if name not in self._inputs]
        if missing or unknown:
            raise ValueError(f"Invalid number of inputs provided for running a SignatureDef, expected "
                             f"{sorted(self._inputs)} vs provided {sorted(kwargs)}")
        interpreter = self._interpreter
        resized = False
        for name, value in kwargs.items():
            shape = _shape_of(value)
            index = self._inputs[name]
            if shape is not None and shape != tuple(interpreter._graph.tensors[index].shape):
                interpreter.resize_tensor_input(index, shape)
                resized = True
        if resized or interpreter._buffers is None:
            interpreter.allocate_tensors()
        for name, value in kwargs.items():
            interpreter.set_tensor(self._inputs[name], value)
        interpreter.invoke()
        return {name: interpreter.get_tensor(i) for name, i in self._outputs.items()}


def _shape_of(value):
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else None


def _zeros(tensor):
    if numpy is not None:
        return numpy.zeros(tensor.shape, dtype=tensor.dtype)
    return array.array(ARRAY_CODES[tensor.dtype], bytes(tensor.size * DTYPE_SIZES[tensor.dtype]))


def _copy(value):
    return value.copy() if hasattr(value, "copy") else array.array(value.typecode, value)
