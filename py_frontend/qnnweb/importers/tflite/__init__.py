"""TFLite flatbuffers -> Graph, with the generated schema readers of PyPI ``tflite`` (no numpy).

Only the structure is read here; whether each op can run is decided in ``qnnweb.ops`` so that all
problems of a model are reported together. reader.py reads the tables, options.py the op options,
folding.py folds shape arithmetic, quantization.py handles what the quantizers leave around the int8 ops,
constant_inputs.py makes a CONCATENATION's constant input an activation.
"""

import struct

import flatbuffers
from tflite.BuiltinOperator import BuiltinOperator

from ...errors import ModelError
from ...graph import Graph, Op
from ..flatbuffer_table import Table, field_offsets, scalars_at, table_at
from .constant_inputs import constant_concat_inputs
from .folding import fold_shape_arithmetic
from .options import OPTIONS, options_reader
from .quantization import (detection_inputs_in_float, max_before_dequantize, quantized_float_islands,
                           require_full_integer)
from .reader import (MODEL_BUFFERS, MODEL_OPERATOR_CODES, MODEL_SUBGRAPHS, OPERATOR_FIELDS, SUBGRAPH_INPUTS,
                     SUBGRAPH_OPERATORS, SUBGRAPH_OUTPUTS, SUBGRAPH_TENSORS, builtin_code, custom_op, model_source,
                     read_tensor, set_batch)
from .variables import resource_variables

_U8 = struct.Struct("<B").unpack_from
_U32 = struct.Struct("<I").unpack_from
OP_NAMES = {v: k for k, v in vars(BuiltinOperator).items() if not k.startswith("_")}


def import_tflite(data, input_shapes=None):
    if len(data) < 16:
        raise ModelError(f"truncated TFLite file: {len(data)} bytes")
    try:
        return _read(data, input_shapes or {})
    except ModelError:
        raise
    except (IndexError, ValueError, TypeError, KeyError, OverflowError, struct.error, UnicodeDecodeError,
            flatbuffers.builder.OffsetArithmeticError) as e:
        raise ModelError(f"corrupt or truncated TFLite flatbuffer ({type(e).__name__}: {e})") from None


def _read(data, input_shapes):
    buf = bytes(data) if not isinstance(data, (bytes, bytearray)) else data
    model = Table.root(buf)
    subgraphs = model.tables(MODEL_SUBGRAPHS, "subgraph")
    if not subgraphs:
        raise ModelError("TFLite model has no subgraph")
    subgraph = subgraphs[0]
    codes = model.tables(MODEL_OPERATOR_CODES, "operator code")
    opcodes = [builtin_code(code) for code in codes]
    buffers = model.tables(MODEL_BUFFERS, "buffer")

    def read_subgraph(table):
        return _read_subgraph(buf, table, codes, opcodes, buffers)

    tensor_positions, tensors, ops = read_subgraph(subgraph)
    graph_inputs = list(subgraph.scalars(SUBGRAPH_INPUTS, "i", "input"))
    graph_outputs = list(subgraph.scalars(SUBGRAPH_OUTPUTS, "i", "output"))
    for t in graph_inputs + graph_outputs:
        if not 0 <= t < len(tensors):
            raise ModelError(f"corrupt TFLite flatbuffer: graph input/output refers to tensor {t}")
    source = model_source(model, tensor_positions, tensors, graph_inputs, graph_outputs, input_shapes)
    if input_shapes:
        set_batch(tensors, graph_inputs, input_shapes)
    if ops and not any(t.quantized and t.dtype in ("int8", "uint8") for t in tensors):
        raise ModelError("the model is not quantized (it computes in float): qnnweb runs int8 models. Quantize it "
                         "first: TensorFlow's converter with full-integer post-training quantization, or "
                         "ai-edge-quantizer (recipe static_wi8_ai8) for files from litert-torch or MediaPipe")
    require_full_integer(tensors, ops)
    ops, variables = resource_variables(tensors, ops, subgraphs, read_subgraph)
    ops = quantized_float_islands(tensors, max_before_dequantize(tensors, fold_shape_arithmetic(tensors, ops)),
                                  graph_outputs)
    ops = constant_concat_inputs(tensors, detection_inputs_in_float(tensors, ops))
    return Graph(tensors, ops, graph_inputs, graph_outputs, "tflite", source, variables)


def _read_subgraph(buf, subgraph, codes, opcodes, buffers):
    """A subgraph's tensor table positions, its tensors and its ops (options read)."""
    tensor_positions = subgraph.table_positions(SUBGRAPH_TENSORS, "tensor")
    tensors = [read_tensor(buf, pos, i, buffers) for i, pos in enumerate(tensor_positions)]
    ops = []
    n_tensors = len(tensors)
    for i, pos in enumerate(subgraph.table_positions(SUBGRAPH_OPERATORS, "operator")):
        code_at, inputs_at, outputs_at, options_type_at, options_at = field_offsets(buf, pos, OPERATOR_FIELDS)
        code_index = _U32(buf, pos + code_at)[0] if code_at else 0
        if code_index >= len(opcodes):
            raise ModelError(f"corrupt TFLite flatbuffer: op {i} has opcode index {code_index}")
        op_type = OP_NAMES.get(opcodes[code_index], f"BUILTIN_{opcodes[code_index]}")
        options = {}
        if op_type == "CUSTOM":
            op_type, options = custom_op(i, codes[code_index], Table(buf, pos))
        inputs = list(scalars_at(buf, pos + inputs_at, "i", "op input")) if inputs_at else []
        outputs = list(scalars_at(buf, pos + outputs_at, "i", "op output")) if outputs_at else []
        for t in inputs + outputs:
            if t >= n_tensors or t < -1:
                raise ModelError(f"corrupt TFLite flatbuffer: op {i} refers to tensor {t}")
        if op_type in OPTIONS:
            options_class, options_type, read = OPTIONS[op_type]
            stored_type = _U8(buf, pos + options_type_at)[0] if options_type_at else 0
            table = Table(buf, table_at(buf, pos + options_at)) if options_at and stored_type == options_type else None
            options = read(options_reader(options_class, table), tensors, inputs)
        ops.append(Op(i, op_type, inputs, outputs, options))
    return tensor_positions, tensors, ops
