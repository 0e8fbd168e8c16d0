"""The handlers of ONNX op types, and the one place a node is dispatched to its handler.

``@onnx_op("Conv", ...)`` registers a function ``handler(ctx, node, attrs)`` (ctx: context.ImportContext,
node: the NodeProto, attrs: its attributes as attributes.attributes() reads them). Before any handler
runs, handle_node checks the node's inputs and outputs against ARITY, so no handler indexes
node.input / node.output past their end.
"""

from .attributes import attributes
from .folding import FOLDABLE, SHAPE_ARITHMETIC, fold
from .skip import Skip

HANDLERS = {}   # ONNX op type -> handler


def onnx_op(*op_types):
    def register(function):
        for op_type in op_types:
            HANDLERS[op_type] = function
        return function

    return register


# Inputs and outputs of the operators the handlers read: (required inputs, most inputs or None,
# required outputs, most outputs). A required input must be named ("" is ONNX's absent optional
# input). Checked once, in the node loop, so no handler indexes node.input / node.output past their end.
ARITY = {
    "Conv": (2, 3, 1, 1), "QLinearConv": (8, 9, 1, 1), "Gemm": (2, 3, 1, 1), "MatMul": (2, 2, 1, 1),
    "QLinearMatMul": (8, 8, 1, 1), "QGemm": (6, 9, 1, 1), "Add": (2, 2, 1, 1), "Mul": (2, 2, 1, 1),
    "QLinearAdd": (7, 8, 1, 1), "QLinearMul": (7, 8, 1, 1), "Clip": (1, 3, 1, 1),
    "QLinearSigmoid": (4, 5, 1, 1), "QLinearLeakyRelu": (4, 5, 1, 1),
    "AveragePool": (1, 1, 1, 1), "GlobalAveragePool": (1, 1, 1, 1), "MaxPool": (1, 1, 1, 2), "ReduceMean": (1, 2, 1, 1),
    "ReduceSum": (1, 2, 1, 1),
    "QLinearAveragePool": (4, 5, 1, 1), "QLinearGlobalAveragePool": (4, 5, 1, 1),
    "QuantizeLinear": (2, 3, 1, 1), "DequantizeLinear": (2, 3, 1, 1),
    "Flatten": (1, 1, 1, 1), "Reshape": (2, 2, 1, 1), "Squeeze": (1, 2, 1, 1), "Unsqueeze": (1, 2, 1, 1),
    "Identity": (1, 1, 1, 1), "Dropout": (1, 3, 1, 2), "Constant": (0, 0, 1, 1),
    "Concat": (1, None, 1, 1), "QLinearConcat": (5, None, 1, 1), "Softmax": (1, 1, 1, 1),
    "Transpose": (1, 1, 1, 1), "DepthToSpace": (1, 1, 1, 1), "SpaceToDepth": (1, 1, 1, 1), "Shape": (1, 1, 1, 1), "Gather": (2, 2, 1, 1), "Cast": (1, 1, 1, 1),
    "ConstantOfShape": (1, 1, 1, 1), "Slice": (1, 5, 1, 1), "Split": (1, 2, 1, None),
    "PRelu": (2, 2, 1, 1), "Pad": (1, 4, 1, 1), "ConvTranspose": (2, 3, 1, 1), "Resize": (1, 4, 1, 1), "Max": (1, None, 1, 1), "Min": (1, None, 1, 1),
    "Sub": (2, 2, 1, 1), "Div": (2, 2, 1, 1),
    "DynamicQuantizeLinear": (1, 1, 3, 3), "MatMulInteger": (2, 4, 1, 1), "MatMulIntegerToFloat": (4, 7, 1, 1),
    "DynamicQuantizeMatMul": (3, 5, 1, 1), "ConvInteger": (2, 4, 1, 1),
    "LayerNormalization": (2, 3, 1, 3), "InstanceNormalization": (3, 3, 1, 1),
    # folded when their inputs are constants (folding.py)
    "Where": (3, 3, 1, 1), "Range": (3, 3, 1, 1), "Expand": (2, 2, 1, 1), "Tile": (2, 2, 1, 1), "Pow": (2, 2, 1, 1),
    "Mod": (2, 2, 1, 1), "Equal": (2, 2, 1, 1), "Less": (2, 2, 1, 1), "Greater": (2, 2, 1, 1), "Sqrt": (1, 1, 1, 1),
    "Neg": (1, 1, 1, 1), "Reciprocal": (1, 1, 1, 1), "Not": (1, 1, 1, 1),
}
DEFAULT_ARITY = (1, None, 1, None)   # every other handler reads its first input and first output
GROUPED_INPUTS = {"QLinearConcat": (2, 3)}   # y_scale, y_zero_point, then (x, scale, zero point) triples


def arity_problem(node):
    """Why the node's inputs or outputs do not fit its operator, or None."""
    required, most, outputs, most_outputs = ARITY.get(node.op_type, DEFAULT_ARITY)
    n = len(node.input)
    if n < required or (most is not None and n > most):
        expected = f"{required}" if most == required else f"{required} to {most}" if most else f"at least {required}"
        return f"expected {expected} inputs, got {n}"
    if node.op_type in GROUPED_INPUTS:
        head, group = GROUPED_INPUTS[node.op_type]
        if (n - head) % group:
            return f"expected {head} inputs and then groups of {group}, got {n} inputs"
    for k in range(required):
        if not node.input[k]:
            return f"input {k} is required, but it is absent (empty name)"
    m = len(node.output)
    if m < outputs or (most_outputs is not None and m > most_outputs):
        return f"expected {outputs if most_outputs == outputs else f'{outputs} to {most_outputs}'} outputs, got {m}"
    for k in range(outputs):
        if not node.output[k]:
            return f"output {k} is required, but it is absent (empty name)"
    return None


def known(node):
    """Whether qnnweb reads `node`'s operator on activations: a handler, or shape arithmetic (what a node after
    one that cannot run is judged by: an op folded only on constants, such as Sqrt or Where, is not known
    there, and so is named too)."""
    return node.domain in ("", "ai.onnx", "com.microsoft") and (node.op_type in HANDLERS
                                                                 or node.op_type in SHAPE_ARITHMETIC)


def handle_node(ctx, node):
    """Import one node into ctx's graph: folded (shape arithmetic on constants), or by its handler.
    Raises Skip when it cannot run."""
    problem = arity_problem(node) if known(node) or node.op_type in FOLDABLE else None
    if problem:
        raise Skip(problem)
    if fold(ctx, node):  # arithmetic on constants and static shapes (folding.py)
        return
    if node.domain not in ("", "ai.onnx", "com.microsoft"):
        raise Skip(f"operator domain {node.domain} not supported")
    handler = HANDLERS.get(node.op_type)
    if handler is None:
        raise Skip("operator not supported")
    ctx.node = node
    handler(ctx, node, attributes(node))
