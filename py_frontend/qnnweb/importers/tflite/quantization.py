"""What the quantizers leave in a TFLite file around the int8 ops, made runnable or refused with what it
is: other quantization modes (refused: QuantizationModeError), float ops between a DEQUANTIZE and a
QUANTIZE (int8 tables; a float REDUCE_MAX moved before the DEQUANTIZE), the detection post-processing's
quantized inputs (dequantized as TFLite does)."""

import struct

from ...errors import QuantizationModeError
from ...graph import Op, Tensor

# ops whose weights a quantizer's other modes keep int8 while the activations stay float
WEIGHTED_OPS = ("CONV_2D", "DEPTHWISE_CONV_2D", "FULLY_CONNECTED", "TRANSPOSE_CONV", "BATCH_MATMUL")
FULL_INTEGER_HOW = ("qnnweb runs full-integer models (int8 weights and activations): quantize with "
                    "ai-edge-quantizer's static_wi8_ai8 recipe, or TensorFlow's converter with full-integer "
                    "post-training quantization (a representative dataset)")


def require_full_integer(tensors, ops):
    """A model a quantizer made in another mode than full integer is refused with what it is, before the
    per-op problems (each of its convolutions would be one): 16-bit activations (static_wi8_ai16, TensorFlow's
    16x8 mode), int8 weights on float activations (dynamic range: dynamic_wi8_afp32, TensorFlow's default
    optimization without a representative dataset) or int8 weights dequantized to float (weight only)."""
    if any(t.dtype == "int16" and t.quantized and not t.is_constant for t in tensors):
        raise QuantizationModeError("the model has 16-bit activations (ai-edge-quantizer's static_wi8_ai16, "
                                    "TensorFlow's 16x8 quantization): " + FULL_INTEGER_HOW)
    dequantized = {op.outputs[0]: op.inputs[0] for op in ops if op.type == "DEQUANTIZE" and op.inputs and op.outputs}
    for op in ops:
        if op.type not in WEIGHTED_OPS or len(op.inputs) < 2 or op.inputs[0] < 0 or op.inputs[1] < 0:
            continue
        x, w = tensors[op.inputs[0]], tensors[op.inputs[1]]
        if x.dtype != "float32" or x.is_constant:
            continue
        if w.dtype == "int8" and w.is_constant:
            raise QuantizationModeError(
                "the model is dynamic-range quantized (int8 weights, float activations: ai-edge-quantizer's "
                "dynamic_wi8_afp32, TensorFlow's converter with Optimize.DEFAULT and no representative dataset): "
                + FULL_INTEGER_HOW)
        source = dequantized.get(op.inputs[1])
        if source is not None and tensors[source].dtype in ("int8", "int4") and tensors[source].is_constant:
            raise QuantizationModeError(
                "the model is weight-only quantized (int8 weights dequantized to float, float activations: "
                "ai-edge-quantizer's weight_only_wi8_afp32): " + FULL_INTEGER_HOW)


def detection_inputs_in_float(tensors, ops):
    """TFLite's detection post-processing dequantizes uint8 box encodings and class predictions itself:
    here a DEQUANTIZE before the op does it (int8 too, which TFLite's kernel refuses), and quantized
    anchors become float32 constants, (float(q) - zero point) * scale in float32 as that kernel computes them."""
    out = []
    for op in ops:
        if op.type != "DETECTION_POSTPROCESS" or len(op.inputs) != 3 or not all(0 <= i < len(tensors) for i in op.inputs):
            out.append(op)
            continue
        inputs = list(op.inputs)
        for k in (0, 1, 2):
            t = tensors[inputs[k]]
            if t.dtype not in ("uint8", "int8") or len(t.scale) != 1:
                continue
            if k == 0 and t.dtype == "uint8" and tensors[inputs[2]].dtype != "uint8":
                continue  # TFLite reads the anchors as uint8 too then: left for lowering to refuse
            index = len(tensors)
            if k == 2 and t.is_constant:
                scale, zp = struct.unpack("<f", struct.pack("<f", t.scale[0]))[0], t.zero_point[0]
                values = struct.unpack(f"<{len(t.data)}{'B' if t.dtype == 'uint8' else 'b'}", bytes(t.data))
                data = struct.pack(f"<{len(values)}f", *((q - zp) * scale for q in values))
                tensors.append(Tensor(index, t.name + "/float", t.shape, "float32", data=data))
            else:
                tensors.append(Tensor(index, t.name + "/dequantized", t.shape, "float32"))
                out.append(Op(op.index, "DEQUANTIZE", [inputs[k]], [index]))
            inputs[k] = index
        out.append(Op(op.index, op.type, inputs, list(op.outputs), op.options))
    return out


FLOAT_UNARY = ("RELU", "RELU6", "RELU_N1_TO_1", "LEAKY_RELU", "LOGISTIC", "TANH", "HARD_SWISH", "EXP")


def max_before_dequantize(tensors, ops):
    """ai-edge-quantizer leaves the REDUCE_MAX of a written-out softmax in float: DEQUANTIZE(int8 x) ->
    REDUCE_MAX (float) -> QUANTIZE. Dequantizing keeps the values' order, so the max of the dequantized values
    is the dequantized max of the int8 ones: REDUCE_MAX of x (into a new tensor of x's quantization), then
    DEQUANTIZE; the DEQUANTIZE of x goes once nothing else reads it (quantized_float_islands)."""
    producer = {o: op for op in ops for o in op.outputs}
    out = []
    for op in ops:
        source = producer.get(op.inputs[0]) if op.type == "REDUCE_MAX" and op.inputs and len(op.outputs) == 1 else None
        if (source is None or source.type != "DEQUANTIZE" or not source.inputs
                or tensors[source.inputs[0]].dtype != "int8" or tensors[op.outputs[0]].dtype != "float32"):
            out.append(op)
            continue
        x, y = tensors[source.inputs[0]], tensors[op.outputs[0]]
        index = len(tensors)
        tensors.append(Tensor(index, y.name + "/int8", y.shape, "int8", x.scale, x.zero_point))
        out += [Op(op.index, "REDUCE_MAX", [source.inputs[0], *op.inputs[1:]], [index], op.options),
                Op(op.index, "DEQUANTIZE", [index], list(op.outputs))]
    return out


def quantized_float_islands(tensors, ops, graph_outputs):
    """ai-edge-quantizer leaves some activations in float between int8 ops: DEQUANTIZE(int8 x) -> RELU6
    (float) -> QUANTIZE(int8 y), and PRELU with its float slopes (MediaPipe's Face Mesh). Each such op
    becomes the int8 op x -> y (a 256-entry table, per slope for PRELU: the same function of the same 256
    input values); the QUANTIZE goes, and the DEQUANTIZE too once nothing else reads it."""
    producer = {o: op for op in ops for o in op.outputs}
    readers = {}
    for op in ops:
        for i in op.inputs:
            readers.setdefault(i, []).append(op)
    replaced, dropped = {}, set()
    for op in ops:
        prelu = (op.type == "PRELU" and len(op.inputs) == 2 and 0 <= op.inputs[1] < len(tensors)
                 and tensors[op.inputs[1]].is_constant and tensors[op.inputs[1]].dtype == "float32")
        if (op.type not in FLOAT_UNARY and not prelu) or not op.inputs or len(op.outputs) != 1:
            continue
        source = producer.get(op.inputs[0])
        quantizers = readers.get(op.outputs[0], [])
        if (source is None or source.type != "DEQUANTIZE" or not source.inputs or op.outputs[0] in graph_outputs
                or tensors[source.inputs[0]].dtype != "int8" or len(quantizers) != 1
                or quantizers[0].type != "QUANTIZE" or tensors[quantizers[0].outputs[0]].dtype != "int8"):
            continue
        # float_island: LiteRT computes it in float (its int8 kernel's fixed point does not apply)
        replaced[id(op)] = Op(op.index, op.type, [source.inputs[0], *op.inputs[1:]], list(quantizers[0].outputs),
                              dict(op.options, float_island=True))
        dropped.add(id(quantizers[0]))
    kept = [replaced.get(id(op), op) for op in ops if id(op) not in dropped]
    still_read = {i for op in kept for i in op.inputs} | set(graph_outputs)
    return [op for op in kept if not (op.type == "DEQUANTIZE" and op.outputs and op.outputs[0] not in still_read
                                      and id(op) not in replaced)]
