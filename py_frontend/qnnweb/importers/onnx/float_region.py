"""Float regions of one int8 tensor: float element-wise ops between DequantizeLinear and QuantizeLinear
that read the dequantized tensor more than once, GELU written out (x * 0.5 * (1 + erf(x / sqrt 2)), x
read by the Div and by a Mul), SiLU x * sigmoid(x), x * relu6(x + 3) / 6 ... The whole region is still a
function of one int8 value: one table (IR FLOAT_REGION, numerics/onnxruntime.py region_function), each op
computed as onnxruntime runs it. onnxruntime does not fuse such a region (its GeluFusion needs one tensor
for the Div and the Mul, and it gives each consumer of a DequantizeLinear its own copy first), so the ops
run one by one, as here."""

from .element_steps import element_step
from .quantization import float_tail, quantization_ahead
from .registry import arity_problem
from .tabulated import tabulated

TWO_VALUE_OPS = {"Add": "ADD", "Sub": "SUB", "Mul": "MUL", "Div": "DIV"}
MAX_REGION = 64   # nodes


def region_nodes(ctx, source, first):
    """The nodes of the float region that starts at dequantized `source`, in the graph's order from node
    position `first` on (the ones before it are handled already): every element op (element_step) or
    Add / Sub / Mul / Div of two region values that reads only region values and constants, grown until
    none joins."""
    values, nodes = {source}, []
    grown = True
    while grown and len(nodes) < MAX_REGION:
        grown = False
        for name in list(values):
            for c in ctx.consumers.get(name, []):
                position = ctx.node_index[id(c)]
                if c in nodes or position < first or position in ctx.done or arity_problem(c) or len(c.output) != 1:
                    continue
                if c.op_type in TWO_VALUE_OPS and all(i in values for i in c.input[:2]):
                    pass
                elif element_step(ctx, c, name) is None:
                    continue
                nodes.append(c)
                values.add(c.output[0])
                grown = True
    nodes.sort(key=lambda n: ctx.node_index[id(n)])
    return nodes


def quantized_next(ctx, name):
    """Whether float `name` is only quantized next: by QuantizeLinear nodes, after one Relu / Clip (fused into
    the table), or through ops that commute with quantization (quantization_ahead). Where it is read in
    float instead, the ops stay binary.py's float islands."""
    readers = [c for c in ctx.consumers.get(name, []) if c.op_type != "Shape"]
    if len(readers) == 1 and readers[0].op_type in ("Relu", "Clip") and name not in ctx.outputs:
        name = readers[0].output[0]
        readers = [c for c in ctx.consumers.get(name, []) if c.op_type != "Shape"]
    return name not in ctx.outputs and bool(readers) and (all(c.op_type == "QuantizeLinear" for c in readers)
                                                         or quantization_ahead(ctx, name) is not None)


def float_region(ctx, node, source, x):
    """Imports the float region around `node` (reading dequantized `source`, the view of int8 `x`) as one
    table when it reads a value twice and gives one result that only QuantizeLinear reads (or that is the
    model's float output). Whether it did."""
    nodes = region_nodes(ctx, source, ctx.node_index[id(node)])
    if len(nodes) < 2:
        return False   # one op of x and x: binary.py's (DequantizeLinear -> Mul -> QuantizeLinear is QLinearMul)
    if node not in nodes or not any(n.op_type in TWO_VALUE_OPS and all(i not in ctx.constants for i in n.input[:2])
                                    for n in nodes):
        return False
    position = {source: 0}
    program = []
    for n in nodes:
        if n.op_type in TWO_VALUE_OPS and all(i in position for i in n.input[:2]):
            program.append(("binary", TWO_VALUE_OPS[n.op_type], position[n.input[0]], position[n.input[1]]))
        else:
            name = next(i for i in n.input if i in position)
            op_type, options = element_step(ctx, n, name)
            program.append(("step", op_type, options, position[name]))
        position[n.output[0]] = len(program)
    inside = set(map(id, nodes))
    exits = [n.output[0] for n in nodes if n.output[0] in ctx.outputs
             or any(id(c) not in inside for c in ctx.consumers.get(n.output[0], []))]
    if exits != [nodes[-1].output[0]] or not (float_tail(ctx, exits[0]) or quantized_next(ctx, exits[0])):
        return False   # a value read outside the region before its end, several results, or one read in float
    for n in nodes:
        if n is not node:
            ctx.mark_done(n)
    value = ctx.values[x]
    tabulated(ctx, nodes[-1], exits[0], [], "FLOAT_REGION", [value.index], value.nhwc, source=x, program=program)
    return True
