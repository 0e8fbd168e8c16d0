"""The TRANSPOSE, DEPTH_TO_SPACE and SPACE_TO_DEPTH lowerings: values move between layouts as one
strided copy (strided_copy.py: a copy_strided record, or an aliased copy), their quantization stays."""

from .registry import Unsupported, lowering
from .common import constant_ints
from .strided_copy import contiguous_strides, require_moved_values, strided_copy


def _perm(graph, op):
    if "perm" in op.options:
        return [int(p) for p in op.options["perm"]]
    if len(op.inputs) < 2:
        raise Unsupported("the option 'perm' is missing")
    return constant_ints(graph, op.inputs[1], "perm")


@lowering("TRANSPOSE")
def lower_transpose(graph, op):
    """options: perm (output dimension k is input dimension perm[k]), any rank whose moving dimensions
    merge into at most 6, any element type of 1, 2 or 4 bytes (int8, uint8, float32, int32).
    Quantized tensors keep their quantization."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    perm = _perm(graph, op)
    if sorted(perm) != list(range(len(x.shape))):
        raise Unsupported(f"perm {perm} is not a permutation of the input's {len(x.shape)} dimensions")
    require_moved_values(x, y, op.type)
    if list(y.shape) != [x.shape[p] for p in perm]:
        raise Unsupported(f"output {list(y.shape)} is not input {list(x.shape)} permuted by {perm}")
    strides = contiguous_strides(x.shape)
    return [strided_copy(graph, op.inputs[0], op.outputs[0], list(y.shape), [strides[p] for p in perm])]


MAX_BLOCK = 1 << 12  # a larger block size is a corrupt file (no image is 4096 times 4096 pixels per cell)


@lowering("DEPTH_TO_SPACE", "SPACE_TO_DEPTH")
def lower_depth_to_space(graph, op):
    """TFLite's DEPTH_TO_SPACE / SPACE_TO_DEPTH (NHWC; channels ordered block row, block column,
    channel: ONNX's DCR) as one 4-D transpose: depth-to-space moves [N*H, W, b, b*C'] to
    [N*H, b, W, b*C'], space-to-depth the other way. Values move, their quantization stays."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    b = op.options.get("block_size")
    if type(b) is not int or not 1 <= b <= MAX_BLOCK:
        raise Unsupported(f"block_size is {b!r}; expected an integer in [1, {MAX_BLOCK}]")
    if len(x.shape) != 4:
        raise Unsupported(f"input rank {len(x.shape)}; expected an NHWC tensor")
    require_moved_values(x, y, op.type)
    n, h, w, c = x.shape
    if op.type == "DEPTH_TO_SPACE":
        if c % (b * b):
            raise Unsupported(f"{c} channels are not a multiple of block_size^2 = {b * b}")
        expected, view = (n, h * b, w * b, c // (b * b)), (n * h, w, b, c // b)
    else:
        if h % b or w % b:
            raise Unsupported(f"height {h} and width {w} must be multiples of block_size {b}")
        expected, view = (n, h // b, w // b, c * b * b), (n * h // b, b, w // b, b * c)
    if tuple(y.shape) != expected:
        raise Unsupported(f"output {list(y.shape)}; expected {list(expected)}")
    strides = contiguous_strides(view)   # the output is the view with its middle dimensions swapped
    return [strided_copy(graph, op.inputs[0], op.outputs[0], [view[0], view[2], view[1], view[3]],
                         [strides[0], strides[2], strides[1], strides[3]])]
