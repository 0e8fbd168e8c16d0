"""The lowering registry: ``@lowering("OP_TYPE")`` functions turn one graph op into ``Step``s. Family
modules import it; ``qnnweb.ops`` imports the families (which registers them) and runs them."""

from dataclasses import dataclass, field

from ..errors import Unsupported  # noqa: F401 (the lowerings' signal: why an op cannot run)
from ..records import INPUT_FIELDS, OUTPUT_FIELDS


@dataclass
class Step:
    kind: str                   # record kind, see qnnweb.records
    fields: dict                # record fields; tensor fields hold graph tensor indices
    constants: dict = field(default_factory=dict)   # constant field name -> bytes-like
    alias: bool = False         # no record: output shares the input's memory (RESHAPE)
    alias_offset: int = 0       # ... from this byte of the input on (a contiguous SLICE / SPLIT)
    op: tuple = None            # (op index, op type) of the graph op it lowers, for error messages

    @property
    def inputs(self):
        return [self.fields[f] for f in INPUT_FIELDS if f in self.fields]

    @property
    def outputs(self):
        """The tensors it writes, the main one first."""
        return [self.fields[f] for f in OUTPUT_FIELDS if f in self.fields]


LOWERINGS = {}


def lowering(*op_types):
    def register(function):
        for op_type in op_types:
            if op_type in LOWERINGS:   # one lowering per op kind: a second would silently replace the first
                raise ValueError(f"{op_type} has two lowerings: {LOWERINGS[op_type].__name__}, {function.__name__}")
            LOWERINGS[op_type] = function
        return function

    return register
