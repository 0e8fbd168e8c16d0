"""ONNX protobuf messages, built from the schema the build writes into the package (onnx-ml.desc,
taken from the pinned onnx wheel) in a private descriptor pool, so that they never clash with an
`onnx` package imported beside qnnweb. Parsing is the `protobuf` library's (pure Python in Pyodide)."""

import functools
import struct
from importlib import resources

from ...errors import ModelError
from .skip import Skip

# TensorProto.DataType -> (qnnweb dtype, bytes per element, struct code)
DATA_TYPES = {
    1: ("float32", 4, "f"), 2: ("uint8", 1, "B"), 3: ("int8", 1, "b"), 4: ("uint16", 2, "H"), 5: ("int16", 2, "h"),
    6: ("int32", 4, "i"), 7: ("int64", 8, "q"), 9: ("bool", 1, "?"), 10: ("float16", 2, "e"), 11: ("float64", 8, "d"),
    12: ("uint32", 4, "I"), 13: ("uint64", 8, "Q"), 16: ("bfloat16", 2, None), 17: ("float8e4m3fn", 1, None),
    18: ("float8e4m3fnuz", 1, None), 19: ("float8e5m2", 1, None), 20: ("float8e5m2fnuz", 1, None),
    21: ("uint4", 1, None), 22: ("int4", 1, None),
}


CODES = {v[0]: v[2] for v in DATA_TYPES.values()}


@functools.lru_cache(maxsize=None)
def messages():
    from google.protobuf import descriptor_pool, message_factory

    path = resources.files("qnnweb") / "importers" / "onnx-ml.desc"
    try:
        schema = path.read_bytes()
    except FileNotFoundError:
        raise FileNotFoundError(f"{path} is missing: build it with ./build.sh build") from None
    pool = descriptor_pool.DescriptorPool()
    pool.AddSerializedFile(schema)
    return {name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"onnx.{name}"))
            for name in ("ModelProto", "TensorProto")}


def parse_model(data):
    from google.protobuf.message import DecodeError

    model = messages()["ModelProto"]()
    try:
        model.ParseFromString(bytes(data))
    except (DecodeError, ValueError, RecursionError) as e:
        raise ModelError(f"corrupt or truncated ONNX protobuf ({e})") from None
    if not model.HasField("graph"):
        raise ModelError("not an ONNX model: no graph")
    _require_text(model)
    return model


def _require_text(model):
    """protobuf hands out a proto2 string field that is not valid UTF-8 as bytes: refuse the file
    here, once, rather than let every name comparison meet bytes."""
    g = model.graph

    def check(value, what):
        if not isinstance(value, str):
            raise ModelError(f"corrupt ONNX protobuf: {what} is not valid UTF-8 text ({bytes(value)[:40]!r})")

    for o in model.opset_import:
        check(o.domain, "an opset domain")
    for i, node in enumerate(g.node):
        for value in (node.op_type, node.domain, node.name, *node.input, *node.output):
            check(value, f"a name or type of node {i}")
        for a in node.attribute:
            check(a.name, f"an attribute name of node {i}")
    for t in g.initializer:
        check(t.name, "an initializer name")
    for group in (g.input, g.output, g.value_info):
        for v in group:
            check(v.name, "a tensor name")
            for d in v.type.tensor_type.shape.dim:
                check(d.dim_param, f"a dimension name of '{v.name}'")


def tensor_dtype(data_type):
    return DATA_TYPES.get(data_type, (f"type{data_type}", 0, None))[0]


def tensor_bytes(tensor):
    """(dtype, shape, little-endian bytes) of a TensorProto."""
    dtype, size, code = DATA_TYPES.get(tensor.data_type, (f"type{tensor.data_type}", 0, None))
    shape = tuple(int(d) for d in tensor.dims)
    if any(d < 0 for d in shape):
        raise ModelError(f"tensor '{tensor.name}' has a negative dimension in {list(shape)}")
    count = 1
    for d in shape:
        count *= d
    if tensor.data_location == 1 or len(tensor.external_data):
        raise ModelError(f"tensor '{tensor.name}' keeps its data in an external file; qnnweb needs it inside the .onnx")
    try:
        data = _typed_data(tensor, dtype, code)
    except struct.error as e:  # a value outside its type's range (e.g. 300 in the int32_data of an int8 tensor)
        raise ModelError(f"tensor '{tensor.name}' has a value that does not fit {dtype} ({e})") from None
    if code is not None and len(data) != count * size:
        raise ModelError(f"tensor '{tensor.name}' has {len(data)} bytes of data for {dtype} {list(shape)}")
    return dtype, shape, data


def _typed_data(tensor, dtype, code):
    if tensor.HasField("raw_data") or code is None:
        data = tensor.raw_data
    elif dtype == "float32":
        data = struct.pack(f"<{len(tensor.float_data)}f", *tensor.float_data)
    elif dtype in ("int32", "int8", "uint8", "int16", "uint16", "bool", "float16"):
        # The schema stores these widened into int32_data (float16 as its bits).
        values = list(tensor.int32_data)
        if dtype == "float16":
            code = "H"
        data = struct.pack(f"<{len(values)}{code}", *values)
    elif dtype == "int64":
        data = struct.pack(f"<{len(tensor.int64_data)}q", *tensor.int64_data)
    elif dtype == "float64":
        data = struct.pack(f"<{len(tensor.double_data)}d", *tensor.double_data)
    elif dtype in ("uint32", "uint64"):
        data = struct.pack(f"<{len(tensor.uint64_data)}{code}", *tensor.uint64_data)
    else:
        data = b""
    return data


def unpack(dtype, data):
    """Python numbers from little-endian bytes (small tensors only: scales, zero points, shapes)."""
    code = CODES.get(dtype)
    if code is None:   # (unpack runs inside a node's handler: that node cannot run)
        raise Skip(f"a constant of type {dtype} is used as numbers (scales, zero points, shapes), which qnnweb "
                   "does not read")
    width = struct.calcsize(code)
    return list(struct.unpack(f"<{len(data) // width}{code}", data))
