"""ELEMENT_F32: one of onnxruntime's float element functions on a float32 tensor (a float op between
float ops, e.g. LayerNormalization -> HardSwish -> QuantizeLinear in a QOperator model), lowered to the
``unary_f32`` record (wasm_kernels/src/operators/unary_f32.c).

The op's options are ``{"function": OP, "options": {...}}``, OP and its options exactly the vocabulary
of qnnweb.numerics.onnxruntime.element_function (FLOAT_REGION aside), whose float32 function the kernel
computes bit for bit. ``unary_f32_fields`` turns them into the record's operation, alpha and beta."""

import math

from ..numerics.float32 import float32
from .registry import Step, Unsupported, lowering

# the record's operations (wasm_kernels/include/qnnweb.h, enum qnn_unary_f32_operation)
OPERATIONS = {name: code for code, name in enumerate((
    "COPY", "ERF", "EXP", "GELU", "GELU_TANH", "SQRT", "SQUARE", "CUBE", "NEGATE", "ABS", "RECIPROCAL",
    "LEAKY_RELU", "ELU", "LOGISTIC", "TANH", "HARD_SWISH", "HARD_SIGMOID", "CLAMP", "MAX", "MIN", "ADD",
    "SUBTRACT", "SUBTRACT_FROM", "MULTIPLY", "DIVIDE", "DIVIDE_INTO", "NONZERO_TO", "ZERO_TO", "SELECT",
    "NAN_TO"))}

# element functions with no constant: the operation of the same meaning
_PLAIN = {"ERF": "ERF", "EXP": "EXP", "SQRT": "SQRT", "NEG": "NEGATE", "ABS": "ABS", "RECIPROCAL": "RECIPROCAL",
          "LOGISTIC": "LOGISTIC", "TANH": "TANH", "HARD_SWISH": "HARD_SWISH"}
# the clamps of the RELU family: (lower, upper), None where there is none
_RELU_BOUNDS = {"RELU": (0.0, None), "RELU6": (0.0, 6.0), "RELU_N1_TO_1": (-1.0, 1.0)}
_POWERS = {1.0: "COPY", 2.0: "SQUARE", 3.0: "CUBE"}
# (operation, operation when the constant is the left operand) of the operations with a constant
_SCALAR = {"ADD_SCALAR": ("ADD", "ADD"), "SUB_SCALAR": ("SUBTRACT", "SUBTRACT_FROM"),
           "MUL_SCALAR": ("MULTIPLY", "MULTIPLY"), "DIV_SCALAR": ("DIVIDE", "DIVIDE_INTO")}
# Where(Cast(x, bool), value, x), Where(Cast(x, bool), x, value), Where(IsNaN(x), value, x): x's nonzero,
# zero or NaN elements replaced by the constant "value" (which may be infinite); SELECT: x != 0 ? value :
# otherwise (a bool tensor held as 0 / 1, and Where on it)
_SELECTS = ("NONZERO_TO", "ZERO_TO", "NAN_TO", "SELECT")
# every element function the kernel computes
FUNCTIONS = sorted([*_PLAIN, "GELU", "POW", "LEAKY_RELU", "ELU", "HARD_SIGMOID", "CLIP", *_RELU_BOUNDS, *_SCALAR,
                    *_SELECTS])


def _float32_option(function, name, value):
    """A float option rounded to float32, as element_function rounds it."""
    try:
        return float32(float(value))
    except (TypeError, ValueError):
        raise Unsupported(f"{function}'s option '{name}' is {value!r}, not a number") from None


def _constant(function, name, value):
    """A float option as the record's float32 field (alpha or beta): finite."""
    rounded = _float32_option(function, name, value)
    if not math.isfinite(rounded):
        raise Unsupported(f"{function}'s option '{name}' = {value!r} is not a finite float32")
    return rounded


def _bound(function, name, value, absent):
    """A clamp's bound as float32, or None where it clamps nothing: None, NaN (Python's max(x, nan) is x,
    as element_function computes it) or the infinity ``absent``."""
    if value is None:
        return None
    rounded = _float32_option(function, name, value)
    if math.isnan(rounded) or rounded == absent:
        return None
    if math.isinf(rounded):
        raise Unsupported(f"{function}'s option '{name}' = {value!r} clamps every value to an infinity")
    return rounded


def _clamp(function, low, high):
    """(operation, alpha, beta) of min(max(x, low), high)."""
    low, high = _bound(function, "min", low, -math.inf), _bound(function, "max", high, math.inf)
    if low is None and high is None:
        return "COPY", 0.0, 0.0
    if high is None:
        return "MAX", low, 0.0
    if low is None:
        return "MIN", 0.0, high
    if not low <= high:
        raise Unsupported(f"{function}'s bounds [{low}, {high}] are not in order")
    return "CLAMP", low, high


def unary_f32_fields(function, options):
    """The unary_f32 record's (operation code, alpha, beta) of element function ``function`` with its
    ``options``; Unsupported naming what is not in the kernel's vocabulary."""
    o = options or {}
    if function in _PLAIN:
        operation, alpha, beta = _PLAIN[function], 0.0, 0.0
    elif function == "GELU":
        approximate = o.get("approximate", "none")
        if approximate not in ("none", "tanh"):
            raise Unsupported(f"GELU's approximate = {approximate!r}; onnxruntime's Gelu has 'none' and 'tanh'")
        operation, alpha, beta = ("GELU_TANH" if approximate == "tanh" else "GELU"), 0.0, 0.0
    elif function == "POW":
        exponent = _constant(function, "exponent", o.get("exponent"))
        if exponent not in _POWERS:
            raise Unsupported(f"POW with exponent {exponent}: only 1, 2 and 3 have an exact float32 model")
        operation, alpha, beta = _POWERS[exponent], 0.0, 0.0
    elif function == "LEAKY_RELU":
        if "alpha" not in o:
            raise Unsupported("LEAKY_RELU needs the option 'alpha'")
        operation, alpha, beta = "LEAKY_RELU", _constant(function, "alpha", o["alpha"]), 0.0
    elif function == "ELU":
        operation, alpha, beta = "ELU", _constant(function, "alpha", o.get("alpha", 1.0)), 0.0
    elif function == "HARD_SIGMOID":
        operation = "HARD_SIGMOID"
        alpha = _constant(function, "alpha", o.get("alpha", 0.2))
        beta = _constant(function, "beta", o.get("beta", 0.5))
    elif function == "CLIP":
        operation, alpha, beta = _clamp(function, o.get("min"), o.get("max"))
    elif function in _RELU_BOUNDS:
        operation, alpha, beta = _clamp(function, *_RELU_BOUNDS[function])
    elif function in _SCALAR:
        operation = _SCALAR[function][bool(o.get("first", False))]
        alpha, beta = _constant(function, "value", o.get("value")), 0.0
    elif function in _SELECTS:
        alpha = _float32_option(function, "value", o.get("value"))
        beta = _float32_option(function, "otherwise", o.get("otherwise", 0.0))
        if math.isnan(alpha) or math.isnan(beta):
            raise Unsupported(f"{function} with a NaN constant")
        operation = function
    else:
        raise Unsupported(f"ELEMENT_F32 function {function!r}: no float32 kernel computes it (the kernel's "
                          f"functions: {', '.join(FUNCTIONS)})")
    return OPERATIONS[operation], alpha, beta


@lowering("ELEMENT_F32")
def lower_element_f32(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    for tensor, role in ((x, "input"), (y, "output")):
        if tensor.dtype != "float32":
            raise Unsupported(f"ELEMENT_F32's {role} '{tensor.name}' is {tensor.dtype}; expected float32")
    if x.size != y.size:
        raise Unsupported(f"input {list(x.shape)} and output {list(y.shape)} sizes differ")
    function = op.options.get("function")
    operation, alpha, beta = unary_f32_fields(function, op.options.get("options"))
    fields = dict(input=op.inputs[0], output=op.outputs[0], size=x.size, operation=operation, alpha=alpha, beta=beta)
    return [Step("unary_f32", fields)]
