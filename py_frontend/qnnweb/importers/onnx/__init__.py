"""ONNX (quantized) -> Graph.

Both forms onnxruntime's quantizer writes are read into the same int8 IR:
- QDQ: float ops wrapped in DequantizeLinear / QuantizeLinear. A float op whose activation inputs are
  dequantized int8 tensors, whose weights are dequantized int8 constants and whose output is
  quantized again is fused into one int8 op, so the model runs int8 end to end.
- QOperator: QLinearConv, QLinearMatMul, QGemm, QLinearAdd, ... map to the same int8 ops directly.

uint8 activations (onnxruntime's default "u8s8") are exactly int8 activations with the zero point
moved by 128 (q_s8 = q_u8 - 128): they become int8 here and only the model's own uint8 inputs or
outputs are converted, at the edges. 4-D activations are NCHW in ONNX and NHWC in the IR: the
importer transposes at the edges and wherever a layout-sensitive op (Reshape of a feature map) needs
it; weights keep their ONNX layout and are repacked by the kernels in C.

Every op that cannot run is collected and reported together (UnsupportedModelError).

How it is built: importer.import_graph runs the node loop over one context.ImportContext (the graph
being built, the ONNX names it knows, their quantization and layout, the problems). Each ONNX op type
has a handler, ``handler(ctx, node, attrs)``, registered with ``@onnx_op("OpType")`` in the module of
its family (conv, elementwise, norm, pooling, qdq, resize, shape, slicing, unary: as qnnweb.ops groups the
lowerings). Handlers share plain functions of ctx: layout.py (NCHW <-> NHWC), attributes.py,
constants.py, quantization.py (quantization parameters, QDQ fusion, the int8 outputs), float32_path.py (float
results read in float kept as float32 tensors), weights.py.
Nothing here is a method called across files: a module imports what it uses.

Adding an ONNX op:
1. its handler, ``@onnx_op("OpType") def import_op_type(ctx, node, attrs)``, in its family's module: it
   raises Skip(reason) when the node cannot run, and adds IR ops with ``ctx.add_op`` (a module for a new
   family is added to the imports below, which register the handlers);
2. its inputs and outputs in registry.ARITY (required inputs, most inputs, required outputs, most
   outputs), checked before the handler runs, so it may index node.input / node.output up to those;
3. the lowering of the IR op it adds, if that is a new one (qnnweb.ops, ``@lowering``).
"""

# each family module registers its handlers (registry.HANDLERS) when imported
from . import batch_norm, binary, booleans, conv, dynamic, norm, pooling, qdq, resize, shape, slicing, unary  # noqa: F401
from .importer import import_graph
from .proto import parse_model


def import_onnx(data, input_shapes=None):
    return import_graph(parse_model(data), input_shapes or {})
