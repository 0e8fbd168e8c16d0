"""onnxruntime as the ONNX reference, run so that it computes what the ONNX standard says.

Two things stand between onnxruntime's CPU kernels and the standard's arithmetic on x86:

1. int8 QDQ models: by default onnxruntime rewrites int8 activations to uint8 (S8->U8), which rounds
   ties differently. ``session.qdqisint8allowed=1`` keeps them int8.
2. uint8 activations (onnxruntime's default "u8s8", and u8 weights): MLAS's u8 paths differ by CPU and
   are not always exact. Where it multiplies u8 x s8 with ``vpmaddubsw`` (AVX2, and AMD EPYC with
   AVX512-VNNI but no AVX-VNNI, seen 2026-12-01), pairs of products saturate at int16, so convolutions
   with large inputs are off by up to 99 quanta (onnxruntime documents it: "reduce_range ... on non-VNNI
   machines"); on an AMD EPYC with both AVX-VNNI and AVX512-VNNI (2026-12-02) no pair saturates (a
   QLinearConv of 255s by 127s, and random u8 x s8 / u8 x u8 QLinearConvs, come out exact), yet 4 of the differential test's 300 uint8 cases came out up
   to 2 quanta off at a Conv or LeakyRelu, where their int8 twins are bit-exact with qnnweb. So every
   model with uint8 tensors runs as its exact int8 twin, on every CPU: each uint8 tensor becomes int8
   with its zero point moved by -128 (q_s8 = q_u8 - 128: the same real values, the same integer
   arithmetic as the standard's), which is exactly what qnnweb does with uint8 activations; the twin's
   outputs are shifted back.
"""


import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, numpy_helper


def session_options(threads=1):
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.qdqisint8allowed", "1")
    return options


def int8_twin(model_bytes):
    """The same model with every uint8 tensor made int8 (values and zero points moved by -128)."""
    model = onnx.load_from_string(bytes(model_bytes))
    graph = model.graph
    for i, tensor in enumerate(graph.initializer):
        if tensor.data_type == TensorProto.UINT8:
            shifted = (numpy_helper.to_array(tensor).astype(np.int16) - 128).astype(np.int8)
            graph.initializer[i].CopyFrom(numpy_helper.from_array(shifted, tensor.name))
    for node in graph.node:
        if node.op_type == "Constant":
            for attribute in node.attribute:
                if attribute.name == "value" and attribute.t.data_type == TensorProto.UINT8:
                    shifted = (numpy_helper.to_array(attribute.t).astype(np.int16) - 128).astype(np.int8)
                    attribute.t.CopyFrom(numpy_helper.from_array(shifted, attribute.t.name))
        if node.op_type == "QuantizeLinear" and (len(node.input) < 3 or not node.input[2]):
            # no zero point: uint8 with zero point 0 by default -> int8 -128
            name = f"{node.output[0]}/int8_zero_point"
            graph.initializer.append(numpy_helper.from_array(np.int8(-128), name))
            while len(node.input) < 2:
                node.input.append("")
            if len(node.input) == 2:
                node.input.append(name)
            else:
                node.input[2] = name
        for attribute in node.attribute:
            if attribute.name == "to" and attribute.i == TensorProto.UINT8:
                attribute.i = TensorProto.INT8
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        if value.type.tensor_type.elem_type == TensorProto.UINT8:
            value.type.tensor_type.elem_type = TensorProto.INT8
    return model.SerializeToString()


def uses_uint8(model_bytes):
    model = onnx.load_from_string(bytes(model_bytes))
    return any(t.data_type == TensorProto.UINT8 for t in model.graph.initializer)


class ReferenceSession:
    """An onnxruntime session of the model (bytes or a path), or of its int8 twin when it has uint8
    tensors. ``run(feeds)`` takes and returns the original model's dtypes (uint8 shifted back)."""

    def __init__(self, model, threads=1):
        data = model if isinstance(model, (bytes, bytearray)) else open(model, "rb").read()
        self.twin = uses_uint8(data)
        if self.twin:
            outputs = onnx.load_from_string(bytes(data)).graph.output
            self.uint8_outputs = {o.name for o in outputs if o.type.tensor_type.elem_type == TensorProto.UINT8}
            data = int8_twin(data)
        self.session = onnxruntime.InferenceSession(bytes(data), session_options(threads),
                                                    providers=["CPUExecutionProvider"])

    def run(self, feeds):
        if not self.twin:
            return self.session.run(None, feeds)
        feeds = {k: (v.astype(np.int16) - 128).astype(np.int8) if v.dtype == np.uint8 else v for k, v in feeds.items()}
        outputs = self.session.run(None, feeds)
        return [(o.astype(np.int16) + 128).astype(np.uint8) if meta.name in self.uint8_outputs else o
                for o, meta in zip(outputs, self.session.get_outputs())]
