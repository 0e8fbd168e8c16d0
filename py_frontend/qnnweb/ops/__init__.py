"""Lowering of graph ops to kernel op records: one module per operator family.

``lower(graph)`` turns every op into ``Step``s (records whose tensor fields still name graph
tensors), or raises ``UnsupportedModelError`` listing every op that cannot run. Adding an operator
means: a C operator (wasm_kernels/src/operators/), its record (qnnweb.h and records.py), and a
``@lowering("OP_TYPE")`` function here.
"""

from dataclasses import dataclass, field

from ..errors import UnsupportedModelError


class Unsupported(Exception):
    """Raised by a lowering function: the reason this op cannot run."""


@dataclass
class Step:
    kind: str                   # record kind, see qnnweb.records
    fields: dict                # record fields; tensor fields hold graph tensor indices
    constants: dict = field(default_factory=dict)   # constant field name -> bytes-like
    alias: bool = False         # no record: output shares the input's memory (RESHAPE)

    @property
    def inputs(self):
        return [self.fields[f] for f in ("input", "input_a", "input_b") if f in self.fields]

    @property
    def outputs(self):
        return [self.fields["output"]]


LOWERINGS = {}


def lowering(*op_types):
    def register(function):
        for op_type in op_types:
            LOWERINGS[op_type] = function
        return function

    return register


def lower(graph):
    from . import conv, elementwise, pooling, shape, softmax, unary  # noqa: F401  (registers lowerings)

    problems, steps = [], []
    for op in graph.ops:
        function = LOWERINGS.get(op.type)
        if function is None:
            problems.append((op.index, op.type, "operator not supported"))
            continue
        try:
            steps.extend(function(graph, op))
        except Unsupported as e:
            problems.append((op.index, op.type, str(e)))
    for i in graph.inputs + graph.outputs:
        t = graph.tensors[i]
        if t.dtype not in ("float32", "int8", "uint8"):
            problems.append((-1, "model input/output",
                             f"tensor '{t.name}' has dtype {t.dtype}; qnnweb takes float32, int8 or uint8"))
    if problems:
        raise UnsupportedModelError(problems)
    return steps
