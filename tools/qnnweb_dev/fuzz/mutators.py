"""Mutations of model files for the fuzzer: format-blind byte mutations (flips, runs of 0x00/0xFF,
truncations, insertions, extreme integers in aligned 32-bit words) and structure-aware ones:
TFLite fields found by walking the flatbuffer's tables (shapes, tensor indices, buffer offsets and
sizes, option fields), and ONNX protobuf edits through the `onnx` package's ModelProto (dims,
attribute values and types, initializer dims / data types / raw_data length, node input and output
counts, op types). Every mutation is a pure function of (seed bytes, random.Random)."""

import random
import struct

EXTREME_32 = [0, 1, 2, 3, 4, 7, 8, 255, 256, 0x7FFF, 0x8000, 0xFFFF, 0x10000, 0x7FFFFFFF, 0x80000000,
              0xFFFFFFFF, 0xFFFFFFFE, 0x40000000, 0x3FFFFFFF, 0x01000000]
EXTREME_64 = [0, 1, -1, 2, 3, 4, -2, 255, 256, 1 << 31, (1 << 31) - 1, 1 << 32, (1 << 62), (1 << 63) - 1, -(1 << 63),
              1 << 20, 1 << 24, 65536]
EXTREME_FLOATS = [0.0, -0.0, 1.0, -1.0, float("inf"), float("-inf"), float("nan"), 1e-45, 1e38, 3.5e38, -1e30, 1e-30]


# ------------------------------------------------------------------------------------------ bytes

def flip_bits(data, rng):
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(out))
        out[i] ^= 1 << rng.randrange(8)
    return bytes(out), "flip_bits"


def byte_run(data, rng):
    out = bytearray(data)
    value = rng.choice((0x00, 0xFF))
    n = rng.choice((1, 2, 4, 8, 16, 64, 256))
    i = rng.randrange(len(out))
    out[i:i + n] = bytes([value]) * len(out[i:i + n])
    return bytes(out), f"run_{value:02x}x{n}@{i}"


def truncate(data, rng):
    n = rng.choice((rng.randrange(len(data)), rng.randrange(max(1, len(data) // 16)) + len(data) * 15 // 16))
    return data[:n], f"truncate@{n}"


def insert(data, rng):
    i = rng.randrange(len(data) + 1)
    n = rng.choice((1, 3, 4, 8, 17, 64))
    junk = bytes(rng.choice((0, 0xFF, rng.randrange(256))) for _ in range(n))
    return data[:i] + junk + data[i:], f"insert{n}@{i}"


def aligned_word(data, rng):
    out = bytearray(data)
    i = rng.randrange(max(1, len(out) // 4)) * 4
    value = rng.choice(EXTREME_32 + [len(data), len(data) - 4, len(data) + 4, rng.randrange(1 << 32)])
    out[i:i + 4] = struct.pack("<I", value & 0xFFFFFFFF)[:len(out[i:i + 4])]
    return bytes(out), f"word@{i}={value:#x}"


BYTE_MUTATIONS = [flip_bits, byte_run, truncate, insert, aligned_word]


# ----------------------------------------------------------------------------------------- TFLite

def _u32(buf, pos):
    return struct.unpack_from("<I", buf, pos)[0]


def _table_fields(buf, table):
    """[(absolute position, field size guess)] of every field present in the table at `table`."""
    vtable = table - struct.unpack_from("<i", buf, table)[0]
    vsize = struct.unpack_from("<H", buf, vtable)[0]
    out = []
    for slot in range(4, vsize, 2):
        o = struct.unpack_from("<H", buf, vtable + slot)[0]
        if o:
            out.append(table + o)
    return out


def _vector(buf, field_pos):
    start = field_pos + _u32(buf, field_pos)
    return start + 4, _u32(buf, start)


def tflite_positions(data):
    """Positions of 32-bit words worth mutating: every field of every table the walk reaches (tensor
    shapes, types, buffer indices, op inputs/outputs, opcode indices, option fields, buffer
    offsets/sizes) and every element of the int vectors among them."""
    from tflite.Model import Model

    buf = bytes(data)
    words = []
    model = Model.GetRootAs(buf, 0)

    def table(tab):
        if tab is None:
            return
        try:
            for pos in _table_fields(buf, tab.Pos):
                words.append(pos)
        except struct.error:
            pass

    def int_vector(tab, slot):
        o = tab.Offset(slot)
        if o:
            start = tab.Vector(o)
            for j in range(min(tab.VectorLen(o), 64)):
                words.append(start + 4 * j)
            words.append(start - 4)  # the length

    table(model._tab)
    for i in range(min(model.OperatorCodesLength(), 64)):
        table(model.OperatorCodes(i)._tab)
    for i in range(min(model.BuffersLength(), 256)):
        table(model.Buffers(i)._tab)
    for s in range(min(model.SubgraphsLength(), 2)):
        sg = model.Subgraphs(s)
        table(sg._tab)
        int_vector(sg._tab, 6)
        int_vector(sg._tab, 8)
        for i in range(min(sg.TensorsLength(), 512)):
            t = sg.Tensors(i)
            table(t._tab)
            int_vector(t._tab, 4)   # shape
            q = t.Quantization()
            if q is not None:
                table(q._tab)
        for i in range(min(sg.OperatorsLength(), 512)):
            op = sg.Operators(i)
            table(op._tab)
            int_vector(op._tab, 6)  # inputs
            int_vector(op._tab, 8)  # outputs
            o = op._tab.Offset(12)  # builtin_options
            if o:
                table(type("T", (), {"Pos": op._tab.Indirect(o + op._tab.Pos)})())
    return [w for w in words if 0 <= w <= len(buf) - 4]


def tflite_field(data, rng):
    try:
        positions = tflite_positions(data)
    except Exception:  # noqa: BLE001  (an already corrupt seed: fall back to a blind word)
        positions = []
    if not positions:
        return aligned_word(data, rng)
    out = bytearray(data)
    pos = rng.choice(positions)
    width = rng.choice((4, 4, 4, 1, 2))
    value = rng.choice(EXTREME_32 + [0xFFFFFFFF, 0xFFFFFFFF, 0, 0, rng.randrange(1 << 16), _u32(out, pos) + 1,
                                     (_u32(out, pos) - 1) & 0xFFFFFFFF])
    out[pos:pos + width] = struct.pack("<I", value & 0xFFFFFFFF)[:width]
    return bytes(out), f"tflite_field@{pos}:{width}={value:#x}"


# ------------------------------------------------------------------------------------------- ONNX

def _onnx_model(data):
    import onnx

    m = onnx.ModelProto()
    m.ParseFromString(bytes(data))
    return m


def _pick(rng, items):
    return rng.choice(items) if len(items) else None


def onnx_dims(model, rng):
    g = model.graph
    choices = [("input", v) for v in g.input] + [("output", v) for v in g.output] + [("init", t) for t in g.initializer]
    kind, item = rng.choice(choices)
    if kind == "init":
        dims = list(item.dims)
        op = rng.randrange(4)
        if op == 0 and dims:
            dims[rng.randrange(len(dims))] = rng.choice(EXTREME_64)
        elif op == 1:
            dims.insert(rng.randrange(len(dims) + 1), rng.choice((1, 2, 1 << 31, 0)))
        elif op == 2 and dims:
            dims.pop(rng.randrange(len(dims)))
        else:
            dims = [1 << 31, 1 << 31] + dims
        del item.dims[:]
        item.dims.extend(dims)
        return f"init_dims {item.name}={dims}"
    shape = item.type.tensor_type.shape
    if not len(shape.dim) or rng.random() < 0.2:
        d = shape.dim.add()
        d.dim_value = rng.choice((1, 2, 1 << 31))
        return f"{kind}_dim_added {item.name}"
    d = shape.dim[rng.randrange(len(shape.dim))]
    if rng.random() < 0.25:
        d.dim_param = rng.choice(("N", "batch", ""))
        return f"{kind}_dim_param {item.name}"
    d.dim_value = rng.choice(EXTREME_64)
    return f"{kind}_dim {item.name}={d.dim_value}"


def onnx_attribute(model, rng):
    from onnx import AttributeProto

    nodes = [n for n in model.graph.node if len(n.attribute)]
    if not nodes or rng.random() < 0.15:
        node = _pick(rng, model.graph.node)
        if node is None:
            return "no nodes"
        a = node.attribute.add()
        a.name = rng.choice(("strides", "dilations", "pads", "group", "axis", "kernel_shape", "perm", "alpha",
                             "auto_pad", "transB", "min", "max", "axes", "ceil_mode", "count_include_pad", "value"))
        a.type = AttributeProto.INT
        a.i = rng.choice(EXTREME_64)
        return f"attr_added {node.op_type}.{a.name}"
    node = rng.choice(nodes)
    a = node.attribute[rng.randrange(len(node.attribute))]
    op = rng.randrange(6)
    if op == 0:  # another type, with a value of that type
        new_type = rng.choice((AttributeProto.INT, AttributeProto.FLOAT, AttributeProto.STRING, AttributeProto.INTS,
                               AttributeProto.FLOATS, AttributeProto.TENSOR, AttributeProto.GRAPH, AttributeProto.STRINGS,
                               99))
        a.type = new_type
        if new_type == AttributeProto.INT:
            a.i = rng.choice(EXTREME_64)
        elif new_type == AttributeProto.FLOAT:
            a.f = rng.choice(EXTREME_FLOATS)
        elif new_type == AttributeProto.STRING:
            a.s = rng.choice((b"", b"SAME_UPPER", b"\xff\xfe", b"VALID"))
        elif new_type == AttributeProto.INTS:
            a.ints.extend([rng.choice(EXTREME_64)])
        elif new_type == AttributeProto.FLOATS:
            a.floats.extend([rng.choice(EXTREME_FLOATS)])
        return f"attr_type {node.op_type}.{a.name}={new_type}"
    if op == 1 and a.ints:
        a.ints[rng.randrange(len(a.ints))] = rng.choice(EXTREME_64)
        return f"attr_ints {node.op_type}.{a.name}={list(a.ints)}"
    if op == 2:
        a.i = rng.choice(EXTREME_64)
        if rng.random() < 0.5:
            a.type = AttributeProto.INT
        return f"attr_i {node.op_type}.{a.name}={a.i}"
    if op == 3:
        a.f = rng.choice(EXTREME_FLOATS)
        return f"attr_f {node.op_type}.{a.name}={a.f}"
    if op == 4:  # list length
        values = list(a.ints)
        values = values[:rng.randrange(len(values) + 1)] if values and rng.random() < 0.5 else values + [rng.choice((0, 1, 2))]
        del a.ints[:]
        a.ints.extend(values)
        return f"attr_ints_len {node.op_type}.{a.name}={values}"
    node.attribute.remove(a)
    return f"attr_removed {node.op_type}.{a.name}"


def onnx_initializer(model, rng):
    inits = model.graph.initializer
    if not len(inits):
        return "no initializers"
    t = inits[rng.randrange(len(inits))]
    op = rng.randrange(5)
    if op == 0 and t.raw_data:
        n = rng.choice((0, len(t.raw_data) // 2, len(t.raw_data) - 1, len(t.raw_data) + 1))
        t.raw_data = (t.raw_data + b"\x00" * 8)[:n]
        return f"raw_data_len {t.name}={n}"
    if op == 1:
        t.data_type = rng.choice((0, 1, 2, 3, 4, 5, 6, 7, 9, 10, 11, 12, 13, 16, 17, 21, 22, 99, -1 & 0x7FFFFFFF))
        return f"data_type {t.name}={t.data_type}"
    if op == 2 and t.raw_data:  # typed fields instead of raw_data
        data = t.raw_data
        t.ClearField("raw_data")
        t.int32_data.extend(list(data[:16]))
        return f"raw_to_int32 {t.name}"
    if op == 3:
        t.data_location = 1
        return f"external {t.name}"
    if t.raw_data:
        raw = bytearray(t.raw_data)
        i = rng.randrange(len(raw))
        raw[i:i + 4] = struct.pack("<f", rng.choice(EXTREME_FLOATS))[:len(raw[i:i + 4])]
        t.raw_data = bytes(raw)
        return f"raw_value {t.name}@{i}"
    return "initializer unchanged"


def onnx_node(model, rng):
    g = model.graph
    if not len(g.node):
        return "no nodes"
    i = rng.randrange(len(g.node))
    node = g.node[i]
    names = [n for nd in g.node for n in nd.output] + [t.name for t in g.initializer] + [v.name for v in g.input]
    op = rng.randrange(9)
    if op == 0 and len(node.input):
        del node.input[rng.randrange(len(node.input))]
        return f"input_removed {node.op_type}#{i}"
    if op == 1:
        node.input.append(rng.choice(names + ["", "missing"]))
        return f"input_added {node.op_type}#{i}"
    if op == 2 and len(node.input):
        node.input[rng.randrange(len(node.input))] = rng.choice(names + ["", "missing"])
        return f"input_replaced {node.op_type}#{i}"
    if op == 3 and len(node.output):
        if rng.random() < 0.5:
            del node.output[rng.randrange(len(node.output))]
            return f"output_removed {node.op_type}#{i}"
        node.output.append(rng.choice(names + [""]))
        return f"output_added {node.op_type}#{i}"
    if op == 4:
        node.op_type = rng.choice(("Conv", "QLinearConv", "Add", "QLinearAdd", "Mul", "Gemm", "MatMul", "QLinearMatMul",
                                   "QGemm", "MaxPool", "AveragePool", "GlobalAveragePool", "QLinearAveragePool",
                                   "QLinearGlobalAveragePool", "Concat", "QLinearConcat", "Reshape", "Flatten",
                                   "Squeeze", "Transpose", "Softmax", "Relu", "Clip", "LeakyRelu", "Sigmoid", "Tanh",
                                   "HardSwish", "QuantizeLinear", "DequantizeLinear", "Identity", "Constant",
                                   "QLinearSigmoid", "QLinearLeakyRelu", "Dropout"))
        if node.op_type.startswith("QLinear") and rng.random() < 0.5:
            node.domain = "com.microsoft"
        return f"op_type #{i}={node.op_type}"
    if op == 5:
        del g.node[i]
        return f"node_removed #{i}"
    if op == 6:
        g.node.add().CopyFrom(node)
        return f"node_duplicated #{i}"
    if op == 7 and len(g.node) > 1:
        j = rng.randrange(len(g.node))
        a, b = type(node)(), type(node)()
        a.CopyFrom(g.node[i])
        b.CopyFrom(g.node[j])
        g.node[i].CopyFrom(b)
        g.node[j].CopyFrom(a)
        return f"nodes_swapped #{i}<->#{j}"
    if len(g.output):
        g.output[0].name = rng.choice(names + ["missing"])
        return "graph_output_renamed"
    return "node unchanged"


def onnx_opset(model, rng):
    if len(model.opset_import):
        model.opset_import[0].version = rng.choice((1, 6, 10, 11, 12, 13, 19, 21, 1 << 40))
        return f"opset={model.opset_import[0].version}"
    return "no opset"


ONNX_MUTATIONS = [onnx_dims, onnx_attribute, onnx_attribute, onnx_initializer, onnx_node, onnx_node, onnx_opset]


def onnx_structured(data, rng):
    model = _onnx_model(data)
    what = []
    for _ in range(rng.choice((1, 1, 1, 2, 3))):
        what.append(rng.choice(ONNX_MUTATIONS)(model, rng))
    return model.SerializeToString(), "; ".join(what)


# ------------------------------------------------------------------------------------------- API

def mutate(data, fmt, rng):
    """(mutant bytes, description). About half the mutants are structure-aware."""
    r = rng.random()
    if fmt == "onnx" and r < 0.6:
        try:
            return onnx_structured(data, rng)
        except Exception as e:  # noqa: BLE001  (a seed `onnx` cannot re-serialize: mutate blind)
            data, what = rng.choice(BYTE_MUTATIONS)(data, rng)
            return data, f"{what} (onnx edit failed: {type(e).__name__})"
    if fmt == "tflite" and r < 0.5:
        return tflite_field(data, rng)
    return rng.choice(BYTE_MUTATIONS)(data, rng)


def mutants(seeds, count, seed):
    """Yields (case number, seed name, description, mutant bytes): `count` mutants round-robin over
    `seeds` ({name: (format, bytes)}), each with its own Random derived from (seed, case number)."""
    names = sorted(seeds)
    for case in range(count):
        rng = random.Random(f"{seed}:{case}")
        name = names[case % len(names)]
        fmt, data = seeds[name]
        out, what = mutate(data, fmt, rng)
        if rng.random() < 0.15:  # a second, blind mutation on top
            out, more = rng.choice(BYTE_MUTATIONS)(out, rng) if out else (out, "")
            what = f"{what}; {more}"
        yield case, name, what, out
