"""Lowering of graph ops to kernel op records: one module per operator family.

``lower(graph)`` turns every op into ``Step``s (records whose tensor fields still name graph
tensors), or raises ``UnsupportedModelError`` listing every op that cannot run. Adding an operator
means: a C operator (wasm_kernels/src/operators/), its record (qnnweb.h and records.py), and a
``@lowering("OP_TYPE")`` function (registry.py) in its family's module, imported below.
"""

from ..errors import UnsupportedModelError
from ..graph import DTYPE_SIZES, INDEX_DTYPES
from ..records import check_record

# each family module registers its lowerings (registry.LOWERINGS) when imported
from . import (batch_matmul, batch_norm, binary, broadcast, concat, conv, detection, dynamic_quantization,  # noqa: F401
               integer_inputs, layer_norm, pad, pooling, prelu, quantize, reshape, resize, slicing, softmax, transpose, unary, unary_f32,
               variables)
from .registry import LOWERINGS, Step, Unsupported, lowering  # noqa: F401 (the package's names)


# Arity of every lowered op type: (required inputs, most inputs or None, outputs or None: at least 1). Required inputs
# must name a tensor; optional ones (TFLite's bias, RESHAPE's shape) may be -1, "absent". Checked once
# here, so no lowering function (and no pass) indexes op.inputs / op.outputs past their end.
ARITY = {
    "CONV_2D": (2, 3, 1), "DEPTHWISE_CONV_2D": (2, 3, 1), "FULLY_CONNECTED": (2, 3, 1),
    "ADD": (2, 2, 1), "SUB": (2, 2, 1), "DIV": (2, 2, 1), "MUL": (2, 2, 1), "MAXIMUM": (2, 2, 1), "MINIMUM": (2, 2, 1), "QUANTIZE": (1, 1, 1), "DEQUANTIZE": (1, 1, 1),
    "AVERAGE_POOL_2D": (1, 1, 1), "MAX_POOL_2D": (1, 1, 1), "MEAN": (2, 2, 1), "PAD": (2, 3, 1), "PADV2": (3, 3, 1),
    "CONCATENATION": (1, None, 1), "TRANSPOSE": (1, 2, 1), "RESHAPE": (1, 2, 1), "SQUEEZE": (1, 1, 1), "EXPAND_DIMS": (2, 2, 1),
    "SOFTMAX": (1, 1, 1), "LAYER_NORM": (3, 4, 1), "RESIZE_BILINEAR": (2, 2, 1), "RESIZE_NEAREST_NEIGHBOR": (2, 2, 1),
    "TRANSPOSE_CONV": (3, 4, 1), "PRELU": (2, 2, 1), "MIRROR_PAD": (2, 2, 1), "SLICE": (3, 3, 1), "STRIDED_SLICE": (4, 4, 1), "GATHER": (2, 2, 1), "SPLIT": (2, 2, None), "SPLIT_V": (3, 3, None),
    "BATCH_MATMUL": (2, 2, 1), "DETECTION_POSTPROCESS": (3, 3, 4), "READ_VARIABLE": (1, 1, 1), "ASSIGN_VARIABLE": (1, 1, 1),
    "DYNAMIC_QUANTIZE": (1, 1, 2), "DYNAMIC_MATMUL": (3, 4, 1), "DYNAMIC_CONV_2D": (3, 4, 1), "BROADCAST_TO": (2, 2, 1), "SUM": (2, 2, 1), "SQUARED_DIFFERENCE": (2, 2, 1), "REDUCE_MAX": (2, 2, 1),
    "ELEMENT_F32": (1, 1, 1), "EMBEDDING_LOOKUP": (2, 2, 1), "CAST": (1, 1, 1),
}
DEFAULT_ARITY = (1, None, 1)    # the unary ops (LOGISTIC, TANH, ...): they read their first input

# Window options, required by these op types and checked wherever present: (count, smallest value).
WINDOW_OPTIONS = {
    "CONV_2D": ("stride", "dilation", "padding"), "DEPTHWISE_CONV_2D": ("stride", "dilation", "padding"),
    "AVERAGE_POOL_2D": ("kernel", "stride", "padding"), "MAX_POOL_2D": ("kernel", "stride", "padding"),
    "TRANSPOSE_CONV": ("stride", "padding"),
}
OPTION_SHAPES = {"stride": (2, 1), "dilation": (2, 1), "kernel": (2, 1), "padding": (4, 0)}
MAX_WINDOW = 1 << 24            # any stride / dilation / kernel / padding above this is a corrupt file
MAX_TENSOR_BYTES = (1 << 31) - 1  # WebAssembly memory is 32-bit: no tensor can be larger
QUANTIZED_DTYPES = ("int8", "uint8")


def _window_problem(op):
    names = WINDOW_OPTIONS.get(op.type, ())
    present = op.options.keys() & OPTION_SHAPES.keys()
    if not names and not present:
        return None
    for name in names + tuple(n for n in OPTION_SHAPES if n not in names and n in present):
        count, smallest = OPTION_SHAPES[name]
        value = op.options.get(name)
        if value is None:
            return f"the option '{name}' is missing"
        if (not isinstance(value, (list, tuple)) or len(value) != count
                or not all(isinstance(v, int) and smallest <= v <= MAX_WINDOW for v in value)):
            return f"option '{name}' is {value!r}; expected {count} integers in [{smallest}, {MAX_WINDOW}]"
    return None


def tensor_problem(tensor, role="tensor"):
    """Why a tensor cannot be planned (unknown dtype, bad or huge shape, scales without zero points),
    or None."""
    if not all(isinstance(d, int) and d >= 0 for d in tensor.shape):
        return f"{role} '{tensor.name}' has shape {list(tensor.shape)}; dimensions must be non-negative integers"
    if tensor.dtype not in DTYPE_SIZES:
        return f"{role} '{tensor.name}' has data type {tensor.dtype}, which qnnweb does not run"
    if tensor.nbytes > MAX_TENSOR_BYTES:
        return (f"{role} '{tensor.name}' of shape {list(tensor.shape)} needs {tensor.nbytes} bytes: more than "
                "WebAssembly's 32-bit memory holds")
    if tensor.dtype in QUANTIZED_DTYPES and not tensor.scale and not tensor.dynamic:
        # qnnweb's int8 arithmetic (padding with the zero point, requantization) needs both; every pass
        # and lowering may read scale[0] and zero_point[0] of an int8 tensor once this check passed.
        return (f"{role} '{tensor.name}' is {tensor.dtype} without quantization parameters (scale and "
                "zero point); qnnweb runs int8 and uint8 tensors as quantized values")
    if len(tensor.zero_point) != len(tensor.scale):   # TFLite's interpreter refuses such a file as well
        return (f"{role} '{tensor.name}' has {len(tensor.scale)} quantization scales but "
                f"{len(tensor.zero_point)} zero points; they come in pairs")
    if not tensor.is_constant and tensor.size == 0:
        return f"{role} '{tensor.name}' of shape {list(tensor.shape)} is empty; empty tensors are not supported"
    return None


def op_problem(graph, op, checked=None):
    """Why ``op`` is malformed for its type (input/output counts, tensor indices, the tensors
    themselves, window options), or None. Checked before any pass or lowering looks at the op.
    ``checked`` ({tensor index: problem}) remembers the tensors already checked."""
    required, most, outputs = ARITY.get(op.type, DEFAULT_ARITY)
    if len(op.inputs) < required or (most is not None and len(op.inputs) > most):
        expected = f"{required}" if most == required else f"{required} to {most}" if most else f"at least {required}"
        return f"expected {expected} inputs, got {len(op.inputs)}"
    if len(op.outputs) != outputs and not (outputs is None and op.outputs):
        return f"expected {outputs or 'at least 1'} output(s), got {len(op.outputs)}"
    count, inputs = len(graph.tensors), len(op.inputs)
    checked = {} if checked is None else checked
    for k, index in enumerate([*op.inputs, *op.outputs]):
        if type(index) is not int or not (-1 if required <= k < inputs else 0) <= index < count:
            return f"{_role(k, inputs)} refers to tensor {index}, the model has {count}"
        if index >= 0:
            problem = checked.get(index, False)
            if problem is False:
                problem = checked[index] = tensor_problem(graph.tensors[index], "tensor")
            if problem:
                return f"{_role(k, inputs)}: {problem}"
    return _window_problem(op)


def _role(k, inputs):
    return f"input {k}" if k < inputs else f"output {k - inputs}"


def lower(graph):
    problems, steps, checked = [], [], {}
    for op in graph.ops:
        function = LOWERINGS.get(op.type)
        if function is None:
            problems.append((op.index, op.type, "operator not supported"))
            continue
        problem = op_problem(graph, op, checked)
        if problem:
            problems.append((op.index, op.type, problem))
            continue
        try:
            lowered = function(graph, op)
            for step in lowered:
                step.op = (op.index, op.type)
                problem = check_record(step.kind, step.fields)
                if problem:
                    raise Unsupported(problem)
            steps.extend(lowered)
        except Unsupported as e:
            problems.append((op.index, op.type, str(e)))
    for i in graph.inputs + graph.outputs:
        t = graph.tensors[i]
        problem = tensor_problem(t, "model input/output")
        # integer inputs: a text encoder's ids and masks (ops/integer_inputs.py)
        types = ("float32", "int8", "uint8") + (INDEX_DTYPES if i in graph.inputs else ())
        if problem:
            problems.append((-1, "model input/output", problem))
        elif t.dtype not in types:
            problems.append((-1, "model input/output",
                             f"tensor '{t.name}' has dtype {t.dtype}; qnnweb takes {', '.join(types)}"))
    if problems:
        raise UnsupportedModelError(problems)
    return steps
