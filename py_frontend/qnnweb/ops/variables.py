"""READ_VARIABLE and ASSIGN_VARIABLE: byte copies between a resource variable's memory and an
activation (importers/tflite/variables.py rewrites them on the variable's tensor), as TFLite's
kernels copy: a value read stays what it was when read, whatever is assigned afterwards."""

from .registry import Step, Unsupported, lowering


@lowering("READ_VARIABLE", "ASSIGN_VARIABLE")
def copy_variable(graph, op):
    source, target = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    variable, other = (source, target) if op.type == "READ_VARIABLE" else (target, source)
    if (variable.dtype, variable.nbytes) != (other.dtype, other.nbytes):
        role = "output" if op.type == "READ_VARIABLE" else "value"
        raise Unsupported(f"the variable '{variable.name}' holds {variable.dtype} {list(variable.shape)}, the op's "
                          f"{role} is {other.dtype} {list(other.shape)}: a variable keeps its type and size")
    return [Step("copy", dict(input=op.inputs[0], output=op.outputs[0], bytes=target.nbytes))]
