"""The RESHAPE, SQUEEZE and EXPAND_DIMS lowerings: the output shares the input's memory (an aliased
copy record, no kernel runs)."""

from .registry import Step, Unsupported, lowering


@lowering("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def lower_reshape(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.nbytes != y.nbytes or x.dtype != y.dtype:
        raise Unsupported(f"{list(x.shape)} {x.dtype} -> {list(y.shape)} {y.dtype} changes the data")
    return [Step("copy", dict(input=op.inputs[0], output=op.outputs[0], bytes=x.nbytes), alias=True)]
