"""The ops that read a model's integer inputs (int64 / int32: a text encoder's input_ids, attention_mask and
token_type_ids): EMBEDDING_LOOKUP, rows of a constant table picked by run-time ids (ONNX Gather of a token
embedding table; the gather record: negative ids count from the end, an id outside the table gives a row of
zeros, as the hosts refuse such model inputs before the run), and CAST of integers to float32 (ONNX Cast of
an attention mask; the convert_f32 record, rounded as C's conversion and onnxruntime's Cast)."""

from ..graph import DTYPE_SIZES, INDEX_DTYPES
from .registry import Step, Unsupported, lowering


@lowering("EMBEDDING_LOOKUP")
def lower_embedding_lookup(graph, op):
    ids, table, y = graph.tensors[op.inputs[0]], graph.tensors[op.inputs[1]], graph.tensors[op.outputs[0]]
    if ids.dtype not in INDEX_DTYPES or ids.is_constant:
        raise Unsupported(f"the ids '{ids.name}' must be a run-time int32 or int64 tensor, got {ids.dtype}")
    if not table.is_constant or table.dtype != y.dtype or len(table.shape) < 1 or 0 in table.shape:
        raise Unsupported(f"the table '{table.name}' must be a non-empty constant of the output's type")
    if (table.scale, table.zero_point) != (y.scale, y.zero_point):
        raise Unsupported("the output is quantized otherwise than the table (rows are copied as they are)")
    expected = list(ids.shape) + list(table.shape[1:])
    if list(y.shape) != expected or 0 in y.shape:
        raise Unsupported(f"ids {list(ids.shape)} and table {list(table.shape)} give {expected}, not the output's "
                          f"{list(y.shape)}")
    rows = table.shape[0]
    fields = dict(indices=op.inputs[0], output=op.outputs[0], count=ids.size, rows=rows,
                  row_bytes=table.nbytes // rows, index_bytes=DTYPE_SIZES[ids.dtype])
    return [Step("gather", fields, {"table": bytes(table.data)})]


@lowering("CAST")
def lower_cast(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.dtype not in INDEX_DTYPES or y.dtype != "float32" or x.size != y.size or x.size == 0:
        raise Unsupported(f"a Cast of {x.dtype} {list(x.shape)} to {y.dtype} {list(y.shape)}: only int32 and int64 "
                          "to float32 of the same size run")
    return [Step("convert_f32", dict(input=op.inputs[0], output=op.outputs[0], size=x.size,
                                     input_bytes=DTYPE_SIZES[x.dtype]))]
