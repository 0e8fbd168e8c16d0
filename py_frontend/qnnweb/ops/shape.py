"""RESHAPE (shares memory, no kernel), PAD (folded into the next convolution when possible),
CONCATENATION (one copy_slice record per input) and TRANSPOSE."""

from ..graph import DTYPE_SIZES
from . import Step, Unsupported, lowering
from .common import require_int8


def _product(values):
    n = 1
    for v in values:
        n *= v
    return n


@lowering("RESHAPE", "SQUEEZE", "EXPAND_DIMS")
def lower_reshape(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    if x.nbytes != y.nbytes or x.dtype != y.dtype:
        raise Unsupported(f"{list(x.shape)} {x.dtype} -> {list(y.shape)} {y.dtype} changes the data")
    return [Step("copy", dict(input=op.inputs[0], output=op.outputs[0], bytes=x.nbytes), alias=True)]


def pad_amounts(graph, op):
    """[(before, after)] per dimension, from the constant paddings tensor."""
    paddings = graph.tensors[op.inputs[1]]
    if not paddings.is_constant or paddings.dtype not in ("int32", "int64"):
        raise Unsupported("paddings must be a constant int32 tensor")
    width = 4 if paddings.dtype == "int32" else 8
    data = bytes(paddings.data)
    values = [int.from_bytes(data[i:i + width], "little", signed=True) for i in range(0, len(data), width)]
    return [(values[2 * i], values[2 * i + 1]) for i in range(len(values) // 2)]


def pad_value(graph, op):
    """The int8 value PAD / PADV2 pads with: PADV2's constant_values (an int8 scalar in the input's
    quantization), else the output zero point (a real 0)."""
    y = graph.tensors[op.outputs[0]]
    if op.type != "PADV2" or len(op.inputs) < 3 or op.inputs[2] < 0:
        return y.zero_point[0] if y.zero_point else 0
    value = graph.tensors[op.inputs[2]]
    if not value.is_constant or value.dtype != "int8" or value.size != 1 or len(value.data) != 1:
        raise Unsupported("constant_values must be one constant int8 value")
    if value.scale and (value.scale, value.zero_point) != (y.scale, y.zero_point):
        raise Unsupported("constant_values are quantized otherwise than the output")
    return int.from_bytes(bytes(value.data), "little", signed=True)


@lowering("PAD", "PADV2")
def lower_pad(graph, op):
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    x_quantization = require_int8(x, "input")
    if require_int8(y, "output") != x_quantization:
        raise Unsupported("input and output quantization differ (PAD only moves values)")
    amounts = pad_amounts(graph, op)
    if len(x.shape) != 4 or len(amounts) != 4 or amounts[0] != (0, 0) or amounts[3] != (0, 0):
        raise Unsupported("only padding of height and width of NHWC tensors is supported")
    if any(a < 0 for pair in amounts for a in pair):
        raise Unsupported("negative padding")
    n, h, w, c = x.shape
    (top, bottom), (left, right) = amounts[1], amounts[2]
    return [Step("pad", dict(input=op.inputs[0], output=op.outputs[0], batch=n, input_height=h, input_width=w,
                             channels=c, padding_top=top, padding_bottom=bottom, padding_left=left,
                             padding_right=right, pad_value=pad_value(graph, op)))]


@lowering("CONCATENATION")
def lower_concatenation(graph, op):
    """options: axis (of the IR's shape, negative counts from the end), activation NONE. Inputs with
    another quantization than the output's are requantized while copied (fp32, as REQUANTIZE)."""
    y = graph.tensors[op.outputs[0]]
    y_scale, y_zp = require_int8(y, "output")
    if op.options.get("activation", "NONE") != "NONE":
        raise Unsupported(f"fused activation {op.options['activation']} not supported")
    if "axis" not in op.options:
        raise Unsupported("the option 'axis' is missing")
    rank = len(y.shape)
    axis = op.options["axis"]
    if not -rank <= axis < rank:
        raise Unsupported(f"axis {axis} is outside the output's rank {rank}")
    axis %= rank
    outer, inner_output = _product(y.shape[:axis]), _product(y.shape[axis:])
    steps, offset, along = [], 0, 0
    for i, index in enumerate(op.inputs):
        x = graph.tensors[index]
        x_scale, x_zp = require_int8(x, f"input {i}")
        if x.is_constant:
            raise Unsupported(f"input {i} '{x.name}' is a constant (not supported)")
        if len(x.shape) != rank or any(x.shape[k] != y.shape[k] for k in range(rank) if k != axis):
            raise Unsupported(f"input {i} {list(x.shape)} does not fit output {list(y.shape)} along axis {axis}")
        along += x.shape[axis]
        inner_input = _product(x.shape[axis:])
        if inner_input == 0:
            continue
        steps.append(Step("copy_slice", dict(
            input=index, output=op.outputs[0], outer=outer, inner_input=inner_input, inner_output=inner_output,
            output_offset=offset, scale=x_scale / y_scale, input_zero_point=x_zp, output_zero_point=y_zp)))
        offset += inner_input
    if along != y.shape[axis]:
        raise Unsupported(f"the inputs add up to {along} along axis {axis}, the output has {y.shape[axis]}")
    if outer == 0 or not steps:
        raise Unsupported("empty tensors are not supported")
    return steps


def _perm(graph, op):
    if "perm" in op.options:
        return [int(p) for p in op.options["perm"]]
    if len(op.inputs) < 2:
        raise Unsupported("the option 'perm' is missing")
    perm = graph.tensors[op.inputs[1]]
    if not perm.is_constant or perm.dtype not in ("int32", "int64"):
        raise Unsupported("perm must be a constant int32 tensor")
    width = 4 if perm.dtype == "int32" else 8
    data = bytes(perm.data)
    return [int.from_bytes(data[i:i + width], "little", signed=True) for i in range(0, len(data), width)]


@lowering("TRANSPOSE")
def lower_transpose(graph, op):
    """options: perm (output dimension k is input dimension perm[k]), rank <= 4, any element type
    of 1, 2 or 4 bytes (int8, uint8, float32, int32). Quantized tensors keep their quantization."""
    x, y = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]]
    perm = _perm(graph, op)
    rank = len(x.shape)
    if rank > 4:
        raise Unsupported(f"rank {rank}; at most 4 is supported")
    if sorted(perm) != list(range(rank)):
        raise Unsupported(f"perm {perm} is not a permutation of the input's {rank} dimensions")
    _require_moved_values(x, y, op.type)
    if list(y.shape) != [x.shape[p] for p in perm]:
        raise Unsupported(f"output {list(y.shape)} is not input {list(x.shape)} permuted by {perm}")
    if x.size == 0:
        raise Unsupported("empty tensors are not supported")
    # Dimensions of size 1 do not move data: if the others keep their order, no copy is needed.
    moved = [p for p in perm if x.shape[p] != 1]
    if moved == sorted(moved):
        return [Step("copy", dict(input=op.inputs[0], output=op.outputs[0], bytes=x.nbytes), alias=True)]
    return [_transpose_step(op, x, [1] * (4 - rank) + list(x.shape),
                            list(range(4 - rank)) + [p + 4 - rank for p in perm])]


def _require_moved_values(x, y, op_type):
    """An op that only moves values: the same type (of 1, 2 or 4 bytes) and quantization in and out."""
    if x.dtype != y.dtype or DTYPE_SIZES.get(x.dtype) not in (1, 2, 4):
        raise Unsupported(f"{x.dtype} -> {y.dtype}: expected the same type, of 1, 2 or 4 bytes")
    if (x.scale, x.zero_point) != (y.scale, y.zero_point):
        raise Unsupported(f"input and output quantization differ ({op_type} only moves values)")


def _transpose_step(op, x, dims, perm):
    """The transpose record moving ``x`` viewed as the 4-D ``dims`` by ``perm``."""
    fields = dict(input=op.inputs[0], output=op.outputs[0], element_bytes=DTYPE_SIZES[x.dtype])
    for k in range(4):
        fields[f"input_dim{k}"], fields[f"perm{k}"] = dims[k], perm[k]
    return Step("transpose", fields)


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
    _require_moved_values(x, y, op.type)
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
    if x.size == 0:
        raise Unsupported("empty tensors are not supported")
    if b == 1:
        return [Step("copy", dict(input=op.inputs[0], output=op.outputs[0], bytes=x.nbytes), alias=True)]
    return [_transpose_step(op, x, view, (0, 2, 1, 3))]
