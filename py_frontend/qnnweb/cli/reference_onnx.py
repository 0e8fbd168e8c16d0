"""onnxruntime as the ONNX reference, run so that it computes what the ONNX standard says: what
``qnnweb check`` compares an ONNX model with, and the model tests too (tools/qnnweb_dev/reference/
onnxruntime_session.py re-exports it).
Needs onnx and onnxruntime, which qnnweb itself does not.

Two things stand between onnxruntime's CPU kernels and the standard's arithmetic on x86:

1. int8 QDQ models: by default onnxruntime rewrites int8 activations to uint8 (S8->U8), which rounds
   ties differently. ``session.qdqisint8allowed=1`` keeps them int8.
2. uint8 activations (onnxruntime's default "u8s8", and u8 weights): MLAS's u8 paths differ by CPU and
   are not always exact. Where it multiplies u8 x s8 with ``vpmaddubsw`` (AVX2, and AMD EPYC with
   AVX512-VNNI but no AVX-VNNI), pairs of products saturate at int16, so convolutions
   with large inputs are off by up to 99 quanta (onnxruntime documents it: "reduce_range ... on non-VNNI
   machines"); on an AMD EPYC with both AVX-VNNI and AVX512-VNNI no pair saturates (a
   QLinearConv of 255s by 127s, and random u8 x s8 / u8 x u8 QLinearConvs, come out exact), yet 4 of the differential test's 300 uint8 cases came out up
   to 2 quanta off at a Conv or LeakyRelu, where their int8 twins are bit-exact with qnnweb. So every
   model with uint8 tensors runs as its exact int8 twin, on every CPU: each uint8 tensor becomes int8
   with its zero point moved by -128 (q_s8 = q_u8 - 128: the same real values, the same integer
   arithmetic as the standard's), which is exactly what qnnweb does with uint8 activations; the twin's
   outputs are shifted back.
   Two kernels are not domain-free: MLAS's QLinearMul adds the output zero point in float32 before it
   rounds (rint(product * ratio + zc)), and its QLinearAdd adds the values' float32 terms to one made
   of the zero points (fma(x, rx, fma(y, ry, zc - fma(rx, zx, ry * zy)))); those sums round
   differently for 128 + z than for z (a near-tie in MobileNetV3-Small's squeeze-excite Mul moved
   327 of its 1000 logits; the Add of GELU's `erf + 1` rounds 48 of its 256 inputs the other way). qnnweb computes
   them in the model's domain, as onnxruntime does on the uint8 model. With ``uint8_mul_add=True``
   the twin keeps each quantized Mul and Add in uint8, bridged to and from the int8 tensors around it
   by exact integer casts (_keep_uint8): that computes onnxruntime's uint8 Muls and Adds on every
   CPU, but the bridges stop onnxruntime's layout optimizer from moving its NHWC transposes through
   them, which changes the arithmetic of layout-dependent ops (a linear Resize's, a broadcast Add's
   operand order) elsewhere: only for models without those.
"""


import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto, numpy_helper


def session_options(threads=1, spinning=True):
    """``spinning=False``: the intra-op threads sleep as soon as a run ends instead of spinning on (~25 ms of
    a core after each run on a 2-core machine), for a session timed among other engines."""
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    options.add_session_config_entry("session.qdqisint8allowed", "1")
    if not spinning:
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return options


# the quantized ops whose float32 arithmetic depends on the domain, QOperator and QDQ forms
DOMAIN_DEPENDENT = {"QLinearMul": "Mul", "QLinearAdd": "Add"}


def _domain_dependent_ops(graph):
    """The quantized Muls and Adds of a uint8 model: QLinearMul / QLinearAdd nodes (QOperator), and Mul /
    Add nodes whose inputs are DequantizeLinear outputs and whose output only feeds QuantizeLinear nodes
    (QDQ). Returns (node, its DequantizeLinear nodes, its QuantizeLinear nodes) for each."""
    producers = {o: n for n in graph.node for o in n.output}
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node)
    found = []
    for node in graph.node:
        if node.op_type in DOMAIN_DEPENDENT:
            found.append((node, [], []))
        elif node.op_type in DOMAIN_DEPENDENT.values() and len(node.input) == 2:
            dqs = [producers.get(n) for n in node.input]
            qs = consumers.get(node.output[0], [])
            if all(d is not None and d.op_type == "DequantizeLinear" for d in dqs) and qs and \
                    all(q.op_type == "QuantizeLinear" for q in qs):
                found.append((node, dqs, qs))
    return found


class _Uint8Island:
    """Rewires nodes of the int8 twin to run on uint8 again: zero points and constant operands from
    the model's own uint8 initializers, activations cast up from the twin's int8 (x + 128) before them
    and back down (x - 128) after them, exactly, in int32."""

    SHIFT = "qnnweb_twin/128"

    def __init__(self, graph, originals):
        self.graph, self.originals, self.made = graph, originals, set()
        self.uint8_of = {}   # twin's int8 activation -> the uint8 tensor a kept node wrote it from
        self.before, self.after = {}, {}
        graph.initializer.append(numpy_helper.from_array(np.int32(128), self.SHIFT))

    def operand(self, name, node, activation):
        """The uint8 form of input ``name`` of ``node``: a constant's original, or (``activation``) the
        int8 activation cast up just before ``node``."""
        if name.endswith("/int8_zero_point"):   # int8_twin's stand-in for an absent uint8 zero point
            self.originals.setdefault(name, np.uint8(0))
        if name in self.originals:
            copy = f"{name}/uint8"
            if copy not in self.made:
                self.graph.initializer.append(numpy_helper.from_array(self.originals[name], copy))
                self.made.add(copy)
            return copy
        if not activation:
            return name
        if name in self.uint8_of:
            return self.uint8_of[name]
        up = f"{name}/as_uint8"
        if up not in self.made:
            self.before.setdefault(id(node), []).extend(self._cast(name, up, "Add", TensorProto.UINT8))
            self.made.add(up)
        return up

    def output(self, node):
        """``node`` writes uint8 under a new name; the twin's int8 tensor is cast down from it."""
        name = node.output[0]
        node.output[0] = self.uint8_of[name] = f"{name}/uint8"
        self.after[id(node)] = self._cast(node.output[0], name, "Sub", TensorProto.INT8)

    def _cast(self, source, target, op_type, to):
        wide, moved = f"{target}/int32", f"{target}/shifted"
        return [onnx.helper.make_node("Cast", [source], [wide], to=TensorProto.INT32),
                onnx.helper.make_node(op_type, [wide, self.SHIFT], [moved]),
                onnx.helper.make_node("Cast", [moved], [target], to=to)]

    def finish(self):
        ordered = []
        for node in self.graph.node:
            ordered += self.before.get(id(node), []) + [node] + self.after.get(id(node), [])
        del self.graph.node[:]
        self.graph.node.extend(ordered)


def _keep_uint8(graph, kept, originals):
    island = _Uint8Island(graph, originals)
    for op, dqs, qs in kept:
        if op.op_type in DOMAIN_DEPENDENT:   # A, A_scale, A_zp, B, B_scale, B_zp, C_scale, C_zp
            for k, name in enumerate(op.input):
                if name:
                    op.input[k] = island.operand(name, op, activation=k in (0, 3))
            island.output(op)
            continue
        for k, dq in enumerate(dqs):   # the op's own copy of each DequantizeLinear, in uint8
            copy = onnx.helper.make_node("DequantizeLinear", [island.operand(n, op, activation=j == 0)
                                                               for j, n in enumerate(dq.input)],
                                         [f"{dq.output[0]}/uint8/{op.output[0]}"], **{
                                             a.name: onnx.helper.get_attribute_value(a) for a in dq.attribute})
            island.before.setdefault(id(op), []).append(copy)
            op.input[k] = copy.output[0]
        for q in qs:
            for j, name in enumerate(q.input):
                if j > 0 and name:
                    q.input[j] = island.operand(name, q, activation=False)
            island.output(q)
    island.finish()


def int8_twin(model_bytes, uint8_mul_add=False):
    """The same model with every uint8 tensor made int8 (values and zero points moved by -128), but
    (``uint8_mul_add``) for its quantized Muls and Adds, which stay uint8."""
    model = onnx.load_from_string(bytes(model_bytes))
    graph = model.graph
    originals = {t.name: numpy_helper.to_array(t) for t in graph.initializer if t.data_type == TensorProto.UINT8}
    kept = _domain_dependent_ops(graph) if uint8_mul_add else []
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
    if kept:
        _keep_uint8(graph, kept, originals)
    return model.SerializeToString()


def uses_uint8(model_bytes):
    """Whether the model has uint8 constants of its own quantization: not a dynamically quantized model's (its
    DynamicQuantizeLinear makes uint8 whatever the constants are; an int8 twin of its uint8 weights would move
    onnxruntime from its exact uint8 x uint8 kernel to its uint8 x int8 one, which saturates on AVX2)."""
    model = onnx.load_from_string(bytes(model_bytes))
    if any(n.op_type in ("DynamicQuantizeLinear", "DynamicQuantizeMatMul") for n in model.graph.node):
        return False
    return any(t.data_type == TensorProto.UINT8 for t in model.graph.initializer)


class ReferenceSession:
    """An onnxruntime session of the model (bytes or a path), or of its int8 twin when it has uint8
    tensors (``uint8_mul_add``: see int8_twin). ``run(feeds)`` takes and returns the original model's dtypes
    (uint8 shifted back)."""

    def __init__(self, model, threads=1, uint8_mul_add=False, spinning=True):
        data = model if isinstance(model, (bytes, bytearray)) else open(model, "rb").read()
        self.twin = uses_uint8(data)
        if self.twin:
            outputs = onnx.load_from_string(bytes(data)).graph.output
            self.uint8_outputs = {o.name for o in outputs if o.type.tensor_type.elem_type == TensorProto.UINT8}
            data = int8_twin(data, uint8_mul_add)
        self.session = onnxruntime.InferenceSession(bytes(data), session_options(threads, spinning),
                                                    providers=["CPUExecutionProvider"])

    def run(self, feeds):
        if not self.twin:
            return self.session.run(None, feeds)
        feeds = {k: (v.astype(np.int16) - 128).astype(np.int8) if v.dtype == np.uint8 else v for k, v in feeds.items()}
        outputs = self.session.run(None, feeds)
        return [(o.astype(np.int16) + 128).astype(np.uint8) if meta.name in self.uint8_outputs else o
                for o, meta in zip(outputs, self.session.get_outputs())]
