"""Resource variables (VAR_HANDLE, READ_VARIABLE, ASSIGN_VARIABLE, CALL_ONCE): the state a streaming
model (microWakeWord's streaming convolutions) carries from one run to the next.

TFLite names a variable by the VAR_HANDLE that makes its resource tensor; a CALL_ONCE op runs another
subgraph the first time the model runs, which gives the variables their first values. Here each
variable becomes one tensor of the main graph, whose memory nothing else uses (the planner keeps it for
the whole run: ``Graph.variables``): READ_VARIABLE copies it into the op's output, ASSIGN_VARIABLE copies
a value into it (``Op("ASSIGN_VARIABLE", [value], [variable])``), as TFLite's kernels copy. The CALL_ONCE
subgraph is taken as the variables' initial bytes, written before the first run and by
``Model.reset()``: qnnweb runs initialisation subgraphs made of VAR_HANDLE and ASSIGN_VARIABLE of
constants (what TensorFlow's converter writes for zero-initialised states) and refuses any other.
"""

import dataclasses

from ...errors import UnsupportedModelError
from ...graph import Tensor

VARIABLE_OPS = ("VAR_HANDLE", "READ_VARIABLE", "ASSIGN_VARIABLE", "CALL_ONCE")


def resource_variables(tensors, ops, subgraphs, read_subgraph):
    """(ops, {variable tensor index: initial bytes}): the main subgraph's ``ops`` with the variable ops
    rewritten on variable tensors appended to ``tensors``; CALL_ONCE's subgraphs (``subgraphs``, read by
    ``read_subgraph``) give the initial values. Nothing changes for a model without variables."""
    if not any(op.type in VARIABLE_OPS for op in ops):
        return ops, {}
    problems, initial, handles = [], {}, {}
    for op in ops:
        if op.type == "CALL_ONCE":
            index = op.options.get("init_subgraph", -1)
            if not 0 < index < len(subgraphs):
                problems.append((op.index, op.type, f"it runs subgraph {index}; the model has {len(subgraphs)}"))
                continue
            _, init_tensors, init_ops = read_subgraph(subgraphs[index])
            initial.update(_initial_values(index, init_tensors, init_ops, problems))
        elif op.type == "VAR_HANDLE":
            handles[op.outputs[0]] = op.options["variable"]
    variables, kept = {}, []
    for name, value in initial.items():
        variable = Tensor(len(tensors), name, tuple(value.shape), value.dtype, value.scale, value.zero_point,
                          value.quantized_dimension)
        tensors.append(variable)
        variables[name] = variable.index
    for op in ops:
        if op.type in ("CALL_ONCE", "VAR_HANDLE"):
            continue
        if op.type in ("READ_VARIABLE", "ASSIGN_VARIABLE"):
            handle = op.inputs[0] if op.inputs else -1
            name = handles.get(handle)
            if name is None or name not in variables:
                problems.append((op.index, op.type, f"resource tensor {handle} is not a variable a CALL_ONCE "
                                 "subgraph gives an initial value; qnnweb runs only such variables"))
                continue
            if op.type == "READ_VARIABLE":
                op = dataclasses.replace(op, inputs=[variables[name]])
            else:
                op = dataclasses.replace(op, inputs=op.inputs[1:], outputs=[variables[name]])
        kept.append(op)
    if problems:
        raise UnsupportedModelError(problems)
    return kept, {variables[name]: bytes(value.data) for name, value in initial.items()}


def _initial_values(index, tensors, ops, problems):
    """{variable name: its constant initial tensor} from a CALL_ONCE subgraph; what qnnweb does not run
    there goes to ``problems``."""
    handles, values = {}, {}
    where = f"(in CALL_ONCE subgraph {index})"
    for op in ops:
        if op.type == "VAR_HANDLE" and len(op.outputs) == 1:
            handles[op.outputs[0]] = op.options["variable"]
        elif op.type == "ASSIGN_VARIABLE" and len(op.inputs) == 2 and op.inputs[0] in handles \
                and tensors[op.inputs[1]].data is not None:
            values[handles[op.inputs[0]]] = tensors[op.inputs[1]]
        else:
            problems.append((op.index, f"{op.type} {where}", "qnnweb runs initialisation subgraphs that assign "
                             "constants to variables (VAR_HANDLE, ASSIGN_VARIABLE of a constant) only"))
    return values
