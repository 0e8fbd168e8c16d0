"""The float element-wise ONNX ops that are one function of one float value, as (IR op type, options)
steps: the unary ops (Relu, Sigmoid, Erf, Gelu, Sqrt ...), Pow with a constant exponent and Add / Sub /
Mul / Div with a constant scalar (either operand order). A run of them between DequantizeLinear and
QuantizeLinear is one table (unary.py); numerics/onnxruntime.py computes each as onnxruntime does."""

from ...numerics.onnxruntime import element_function
from .attributes import attributes
from .quantization import clip_bounds

UNARY_LUT_OPS = {"Relu": "RELU", "Sigmoid": "LOGISTIC", "HardSwish": "HARD_SWISH", "HardSigmoid": "HARD_SIGMOID",
                 "Tanh": "TANH", "LeakyRelu": "LEAKY_RELU", "Clip": "CLIP", "Elu": "ELU"}
# one-input ops only onnxruntime's exact float32 model tabulates (numerics/onnxruntime.py)
FLOAT_FUNCTIONS = {"Erf": "ERF", "Gelu": "GELU", "Sqrt": "SQRT", "Neg": "NEG", "Abs": "ABS", "Reciprocal": "RECIPROCAL",
                   "Exp": "EXP"}
SCALAR_OPERATIONS = {"Add": "ADD_SCALAR", "Sub": "SUB_SCALAR", "Mul": "MUL_SCALAR", "Div": "DIV_SCALAR"}


def unary_options(ctx, node, attrs):
    op_type = UNARY_LUT_OPS[node.op_type]
    if op_type == "LEAKY_RELU":
        return op_type, {"alpha": attrs.get("alpha", 0.01)}
    if op_type == "ELU":
        return op_type, {"alpha": attrs.get("alpha", 1.0)}
    if op_type == "HARD_SIGMOID":
        return op_type, {"alpha": attrs.get("alpha", 0.2), "beta": attrs.get("beta", 0.5)}
    if op_type == "CLIP":
        low, high = clip_bounds(ctx, node)
        return op_type, {"min": low, "max": high}
    return op_type, {}


def scalar_constant(ctx, name):
    """The value of float32 constant `name` when it is one value of rank 0 or 1 (it broadcasts to any
    activation without changing its shape); else None."""
    constant = ctx.constants.get(name)
    if constant is None or constant.dtype != "float32" or len(constant.shape) > 1:
        return None
    values = constant.values()
    return float(values[0]) if len(values) == 1 else None


def element_step(ctx, node, name):
    """(IR op type, options) of `node` as a function of its float input `name` alone, or None: a unary
    op reading `name`, or a binary one whose other operand is a constant scalar (Pow: the exponent; an
    exponent onnxruntime computes with std::pow has no exact model here: None)."""
    if node.op_type in UNARY_LUT_OPS and node.input[0] == name:
        return unary_options(ctx, node, attributes(node))
    if node.op_type in FLOAT_FUNCTIONS and node.input[0] == name and node.domain in ("", "ai.onnx", "com.microsoft"):
        attrs = attributes(node)
        options = {"approximate": attrs.get("approximate", "none")} if node.op_type == "Gelu" else {}
        return FLOAT_FUNCTIONS[node.op_type], options
    if len(node.input) != 2 or name not in node.input:
        return None
    if node.op_type == "Pow" and node.input[0] == name:
        exponent = scalar_constant(ctx, node.input[1])
        if exponent is None or element_function("POW", {"exponent": exponent}) is None:
            return None
        return "POW", {"exponent": exponent}
    if node.op_type in SCALAR_OPERATIONS and node.input[0] != node.input[1]:
        first = node.input[1] == name
        value = scalar_constant(ctx, node.input[0 if first else 1])
        if value is None:
            return None
        return SCALAR_OPERATIONS[node.op_type], {"value": value, "first": first}
    return None
