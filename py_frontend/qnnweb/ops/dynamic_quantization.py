"""Dynamic-range int8 (onnxruntime.quantization.quantize_dynamic's models): DYNAMIC_QUANTIZE quantizes a
float32 tensor to uint8 with a scale and zero point it finds at run time (onnxruntime's
DynamicQuantizeLinear), held as qnnweb's int8 twin, and writes them to a second, 8-byte tensor;
DYNAMIC_MATMUL multiplies such a tensor by constant 8-bit weights (int8 or uint8, quantized per tensor or
per output column) into float32, reading that tensor (onnxruntime's MatMulInteger + Cast + Mul + Add, or
MatMulIntegerToFloat / DynamicQuantizeMatMul); DYNAMIC_CONV_2D convolves one (ConvInteger + Cast + Mul + Add).
Records dynamic_quantize, dynamic_matmul and dynamic_conv2d (qnnweb.h)."""

import struct

from ..graph import DYNAMIC_PARAMETERS_SHAPE, permuted_bytes, window_output_size
from ..numerics.float32 import float32_bytes
from .quantize import XOR_0x80_TABLE
from .registry import Step, Unsupported, lowering


@lowering("DYNAMIC_QUANTIZE")
def lower_dynamic_quantize(graph, op):
    x, q, parameters = graph.tensors[op.inputs[0]], graph.tensors[op.outputs[0]], graph.tensors[op.outputs[1]]
    if x.dtype != "float32" or q.dtype != "int8" or not q.dynamic or x.size != q.size:
        raise Unsupported(f"'{x.name}' ({x.dtype}) must be float32, quantized to a dynamic int8 tensor of its size")
    if parameters.dtype != "int32" or tuple(parameters.shape) != DYNAMIC_PARAMETERS_SHAPE:
        raise Unsupported(f"the quantization parameters '{parameters.name}' must be int32 "
                          f"{list(DYNAMIC_PARAMETERS_SHAPE)}")
    return [Step("dynamic_quantize", dict(input=op.inputs[0], output=op.outputs[0], size=x.size,
                                          output_parameters=op.outputs[1]))]


def _per_column(values, columns, role):
    if len(values) not in (1, columns):
        raise Unsupported(f"the weights have {len(values)} {role}s for {columns} columns")
    return list(values) * columns if len(values) == 1 else list(values)


def _weight_constants(w, values, columns, bias):
    """The constants of a dynamic_matmul / dynamic_conv2d record: ``values`` (the bytes of ``w`` as
    [depth][columns]) as int8, the zero points and scales per column, the bias."""
    if len(w.scale) > 1 and w.quantized_dimension != (1 if len(w.shape) == 2 else 0):
        raise Unsupported(f"weights '{w.name}' quantized along axis {w.quantized_dimension}: only per tensor or "
                          "per output channel is supported")
    scales = _per_column(w.scale, columns, "scale")
    zero_points = _per_column(w.zero_point, columns, "zero point")
    shift = 128 if w.dtype == "uint8" else 0   # uint8 weights as their int8 twin: w - 128 is w XOR 0x80
    values = values.translate(XOR_0x80_TABLE) if shift else values
    zero_points = [z - shift for z in zero_points]
    if any(not -128 <= z <= 127 for z in zero_points) or any(not 0 < s < float("inf") for s in scales):
        raise Unsupported(f"weights '{w.name}' have an invalid scale or zero point")
    constants = {"weights": values, "weights_zero_points": struct.pack(f"<{columns}i", *zero_points),
                 "scales": float32_bytes(scales)}
    if bias is not None:
        if not bias.is_constant or bias.dtype != "float32" or bias.size != columns:
            raise Unsupported(f"bias '{bias.name}' must be a constant float32 vector of {columns} values")
        constants["bias"] = bytes(bias.data)
    return constants


def _operands(graph, op):
    """(x, parameters, w, bias or None, y) of a DYNAMIC_MATMUL / DYNAMIC_CONV_2D, checked but for shapes."""
    x, parameters, w = (graph.tensors[i] for i in op.inputs[:3])
    bias = graph.tensors[op.inputs[3]] if len(op.inputs) > 3 and op.inputs[3] >= 0 else None
    y = graph.tensors[op.outputs[0]]
    if x.dtype != "int8" or not x.dynamic or parameters.dtype != "int32" or y.dtype != "float32":
        raise Unsupported("a dynamically quantized int8 input and a float32 output are required")
    if not w.is_constant or w.dtype not in ("int8", "uint8") or len(bytes(w.data)) != w.size:
        raise Unsupported(f"weights '{w.name}' must be constant int8 / uint8 data of shape {list(w.shape)}")
    return x, parameters, w, bias, y


@lowering("DYNAMIC_MATMUL")
def lower_dynamic_matmul(graph, op):
    x, _, w, bias, y = _operands(graph, op)
    if len(w.shape) != 2:
        raise Unsupported(f"weights '{w.name}' must be a matrix [K, N]")
    depth, columns = w.shape
    if not x.shape or x.shape[-1] != depth or list(y.shape) != list(x.shape[:-1]) + [columns]:
        raise Unsupported(f"shapes {list(x.shape)} x {list(w.shape)} -> {list(y.shape)} do not fit a matrix product")
    fields = dict(input=op.inputs[0], output=op.outputs[0], input_parameters=op.inputs[1], rows=x.size // depth,
                  depth=depth, columns=columns, weights=0, weights_zero_points=0, scales=0, bias=0)
    return [Step("dynamic_matmul", fields, _weight_constants(w, bytes(w.data), columns, bias))]


@lowering("DYNAMIC_CONV_2D")
def lower_dynamic_conv_2d(graph, op):
    """Weights in ONNX's layout [O, I / groups, KH, KW], rearranged to the record's [KH][KW][I / groups][O]."""
    x, _, w, bias, y = _operands(graph, op)
    if len(w.shape) != 4 or len(x.shape) != 4 or len(y.shape) != 4:
        raise Unsupported(f"a 2-D convolution of NHWC tensors is required (weights {list(w.shape)})")
    batch, height, width, channels = x.shape
    out_channels, group_channels, kh, kw = w.shape
    groups = op.options.get("groups", 1)
    sh, sw = op.options["stride"]
    dh, dw = op.options["dilation"]
    top, bottom, left, right = op.options["padding"]
    out_h = window_output_size(height, top, bottom, kh, sh, dh)
    out_w = window_output_size(width, left, right, kw, sw, dw)
    if group_channels * groups != channels or out_channels % groups or tuple(y.shape) != (batch, out_h, out_w,
                                                                                          out_channels):
        raise Unsupported(f"input {list(x.shape)}, weights {list(w.shape)} and groups {groups} do not give output "
                          f"{list(y.shape)}")
    hwio = permuted_bytes(w.data, w.shape, (2, 3, 1, 0), 1)
    fields = dict(input=op.inputs[0], output=op.outputs[0], input_parameters=op.inputs[1], batch=batch,
                  input_height=height, input_width=width, input_channels=group_channels, output_height=out_h,
                  output_width=out_w, output_channels=out_channels, kernel_height=kh, kernel_width=kw,
                  stride_height=sh, stride_width=sw, dilation_height=dh, dilation_width=dw, groups=groups,
                  padding_top=top, padding_left=left, weights=0, weights_zero_points=0, scales=0, bias=0)
    return [Step("dynamic_conv2d", fields, _weight_constants(w, hwio, out_channels, bias))]
