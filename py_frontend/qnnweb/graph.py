"""The format-neutral graph every importer produces and every pass and lowering consumes.

Op types use TFLite's builtin names (CONV_2D, DEPTHWISE_CONV_2D, ...); options are already
normalized (explicit padding, activation name), so lowering never looks at the source format.
"""

from dataclasses import dataclass, field

from .errors import UnsupportedModelError

DTYPE_SIZES = {"float32": 4, "int8": 1, "uint8": 1, "int32": 4, "int64": 8,
               # types qnnweb does not compute in, sized so that every op using them is reported by name
               "float16": 2, "bfloat16": 2, "int16": 2, "uint16": 2, "float64": 8, "uint32": 4, "uint64": 8,
               "bool": 1, "complex64": 8, "complex128": 16}

# The integer types a model's inputs may have beside float32 / int8 / uint8: ids and masks (a text encoder's
# input_ids, attention_mask, token_type_ids), read by EMBEDDING_LOOKUP and CAST
INDEX_DTYPES = ("int32", "int64")

# The shape of DYNAMIC_QUANTIZE's second output, an int32 tensor whose 8 bytes hold the scale (float32) and
# zero point (int32) it found for its first output (a Tensor with dynamic set), read by DYNAMIC_MATMUL.
DYNAMIC_PARAMETERS_SHAPE = (2,)


@dataclass
class Tensor:
    index: int
    name: str
    shape: tuple
    dtype: str
    scale: tuple = ()          # one entry per tensor, or one per channel along quantized_dimension
    zero_point: tuple = ()
    quantized_dimension: int = 0
    data: object = None        # bytes-like for constants, None for activations
    # int8 values quantized at run time (DYNAMIC_QUANTIZE's output, no scale or zero point here: the op
    # writes them to its second output for the DYNAMIC_MATMULs that read this tensor)
    dynamic: bool = False

    @property
    def size(self):
        n = 1
        for d in self.shape:
            n *= d
        return n

    @property
    def nbytes(self):
        if self.dtype not in DTYPE_SIZES:
            raise UnsupportedModelError([(-1, f"tensor '{self.name}'", f"data type {self.dtype} is not supported")])
        return self.size * DTYPE_SIZES[self.dtype]

    @property
    def is_constant(self):
        return self.data is not None

    @property
    def quantized(self):
        return len(self.scale) > 0


@dataclass
class Op:
    index: int                 # position in the source model, for error messages
    type: str
    inputs: list
    outputs: list
    options: dict = field(default_factory=dict)


@dataclass
class Graph:
    tensors: list
    ops: list
    inputs: list
    outputs: list
    format: str = "tflite"
    # what the source file says beyond the computation, for the onnxruntime / LiteRT APIs
    # (qnnweb.onnxruntime, qnnweb.litert) and dynamic batches: {"dynamic": {input name: [axes]},
    # ONNX: "dims" {input/output name: [int | dim name | None]}, "metadata" {...};
    # TFLite: "shape_signature" {tensor index: [...]}, "signatures" [{"key", "inputs", "outputs"}]}
    source: dict = field(default_factory=dict)
    # resource variables (TFLite's VAR_HANDLE): {tensor index: initial bytes}. Their memory is theirs
    # alone and keeps its bytes from one run to the next; Model.reset() writes the initial bytes again.
    variables: dict = field(default_factory=dict)

    def consumers(self, tensor_index):
        return [op for op in self.ops if tensor_index in op.inputs]

    def describe(self):
        """A JSON-ready summary: what the server lists and ``Model.info()`` starts from."""
        return {
            "format": self.format,
            "inputs": [tensor_info(self.tensors[i]) for i in self.inputs],
            "outputs": [tensor_info(self.tensors[i]) for i in self.outputs],
            "ops": [{"index": op.index, "type": op.type} for op in self.ops],
        }


def tensor_info(tensor):
    return {
        "name": tensor.name,
        "shape": list(tensor.shape),
        "dtype": tensor.dtype,
        "scale": tensor.scale[0] if len(tensor.scale) == 1 else None,
        "zero_point": tensor.zero_point[0] if len(tensor.zero_point) == 1 else None,
    }


def permuted_bytes(data, shape, perm, width):
    """Row-major bytes of a tensor of ``shape`` transposed by ``perm`` (output dim k = input dim perm[k])."""
    rank = len(shape)
    strides = [width] * rank
    for k in range(rank - 2, -1, -1):
        strides[k] = strides[k + 1] * shape[k + 1]
    out_shape = [shape[p] for p in perm]
    offsets = [0]
    for k in range(rank):  # byte offsets of every output element, built one dimension at a time
        step = strides[perm[k]]
        offsets = [o + i * step for o in offsets for i in range(out_shape[k])]
    data = bytes(data)
    return b"".join(data[o:o + width] for o in offsets)


def window_output_size(size, pad_before, pad_after, kernel, stride, dilation):
    """How many windows of ``kernel`` taps ``dilation`` apart fit, ``stride`` apart, along an axis of ``size``
    padded by ``pad_before`` and ``pad_after`` (convolutions and pools)."""
    return (size + pad_before + pad_after - ((kernel - 1) * dilation + 1)) // stride + 1
