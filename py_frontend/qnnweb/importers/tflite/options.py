"""Each op's builtin options, read by the ``tflite`` package's generated classes into the IR's options
(padding as explicit top / bottom / left / right from TFLite's SAME / VALID)."""

import struct

from tflite.ActivationFunctionType import ActivationFunctionType
from tflite.AddOptions import AddOptions
from tflite.BatchMatMulOptions import BatchMatMulOptions
from tflite.BuiltinOptions import BuiltinOptions
from tflite.CallOnceOptions import CallOnceOptions
from tflite.ConcatenationOptions import ConcatenationOptions
from tflite.Conv2DOptions import Conv2DOptions
from tflite.DepthToSpaceOptions import DepthToSpaceOptions
from tflite.DepthwiseConv2DOptions import DepthwiseConv2DOptions
from tflite.DivOptions import DivOptions
from tflite.FullyConnectedOptions import FullyConnectedOptions
from tflite.GatherOptions import GatherOptions
from tflite.GeluOptions import GeluOptions
from tflite.LeakyReluOptions import LeakyReluOptions
from tflite.MirrorPadMode import MirrorPadMode
from tflite.MirrorPadOptions import MirrorPadOptions
from tflite.MulOptions import MulOptions
from tflite.PackOptions import PackOptions
from tflite.Padding import Padding
from tflite.Pool2DOptions import Pool2DOptions
from tflite.ReducerOptions import ReducerOptions
from tflite.ResizeBilinearOptions import ResizeBilinearOptions
from tflite.ResizeNearestNeighborOptions import ResizeNearestNeighborOptions
from tflite.SoftmaxOptions import SoftmaxOptions
from tflite.SpaceToDepthOptions import SpaceToDepthOptions
from tflite.SplitOptions import SplitOptions
from tflite.SplitVOptions import SplitVOptions
from tflite.StridedSliceOptions import StridedSliceOptions
from tflite.SubOptions import SubOptions
from tflite.TransposeConvOptions import TransposeConvOptions
from tflite.VarHandleOptions import VarHandleOptions

from ..flatbuffer_table import Table

ACTIVATIONS = {v: k for k, v in vars(ActivationFunctionType).items() if not k.startswith("_")}


# A table with no fields: any options class reads the schema's defaults from it (what TFLite uses when
# a field, or the whole options table, is absent). Its vtable: 4 bytes (no field), table: 4 bytes.
EMPTY_TABLE = Table(struct.pack("<HHi", 4, 4, 4), 4)


def options_reader(options_class, table):
    """The op's options table read by ``options_class``; an absent table, or one of another type, reads
    as the schema's defaults, as TFLite's own parser does (``builtin_options_as_X()`` is null -> defaults)."""
    options = options_class()
    options._tab = table or EMPTY_TABLE  # the generated accessors read through it (Offset, Get, Pos)
    return options


def _same_padding(in_size, kernel, stride, dilation):
    effective = (kernel - 1) * dilation + 1
    out = (in_size + stride - 1) // stride
    total = max((out - 1) * stride + effective - in_size, 0)
    return total // 2, total - total // 2


def conv_padding(padding, in_h, in_w, kh, kw, sh, sw, dh, dw):
    if padding == Padding.SAME:
        if min(sh, sw, dh, dw) < 1:
            return [0, 0, 0, 0]  # lowering refuses the stride / dilation with a clear message
        top, bottom = _same_padding(in_h, kh, sh, dh)
        left, right = _same_padding(in_w, kw, sw, dw)
        return [top, bottom, left, right]
    return [0, 0, 0, 0]


def _activation(o):
    return ACTIVATIONS.get(o.FusedActivationFunction(), "UNKNOWN")


def _spatial(tensor):
    return (tensor.shape[1], tensor.shape[2]) if len(tensor.shape) == 4 else (1, 1)


def _conv_options(o, tensors, inputs):
    x = tensors[inputs[0]]
    w = tensors[inputs[1]] if len(inputs) > 1 and inputs[1] >= 0 else None
    kh, kw = (w.shape[1], w.shape[2]) if w is not None and len(w.shape) == 4 else (1, 1)
    sh, sw, dh, dw = o.StrideH(), o.StrideW(), o.DilationHFactor(), o.DilationWFactor()
    return {"stride": (sh, sw), "dilation": (dh, dw), "activation": _activation(o),
            "padding": conv_padding(o.Padding(), *_spatial(x), kh, kw, sh, sw, dh, dw)}


def _pool_options(o, tensors, inputs):
    kh, kw, sh, sw = o.FilterHeight(), o.FilterWidth(), o.StrideH(), o.StrideW()
    return {"kernel": (kh, kw), "stride": (sh, sw), "activation": _activation(o),
            "padding": conv_padding(o.Padding(), *_spatial(tensors[inputs[0]]), kh, kw, sh, sw, 1, 1)}


def _transpose_conv_options(o, tensors, inputs):
    """The padding as TFLite's kernel computes it: a forward convolution's padding from the output
    (output_shape, a constant) back to the input; only top and left place the output."""
    sh, sw = o.StrideH(), o.StrideW()
    options = {"stride": (sh, sw), "activation": _activation(o)}
    w = tensors[inputs[1]] if len(inputs) > 1 and 0 <= inputs[1] < len(tensors) else None
    shape = tensors[inputs[0]] if inputs and 0 <= inputs[0] < len(tensors) else None
    if (w is None or len(w.shape) != 4 or shape is None or shape.data is None or shape.dtype != "int32"
            or len(shape.data) != 16 or min(sh, sw) < 1):
        return options   # lowering reports the missing padding
    _, oh, ow, _ = struct.unpack("<4i", bytes(shape.data))
    options["padding"] = [max(p, 0) for p in conv_padding(o.Padding(), oh, ow, w.shape[1], w.shape[2], sh, sw, 1, 1)]
    return options


def _variable_options(o, tensors, inputs):
    """A resource variable's name: TFLite keys variables by (container, shared_name)."""
    container, shared = ((name or b"").decode("utf-8", "replace") for name in (o.Container(), o.SharedName()))
    return {"variable": f"{container}/{shared}" if container else shared}


def _resize_options(o, tensors, inputs):
    return {"align_corners": bool(o.AlignCorners()), "half_pixel_centers": bool(o.HalfPixelCenters())}


# op type -> (options class, its BuiltinOptions union type, reader of the IR options)
OPTIONS = {
    "CONV_2D": (Conv2DOptions, BuiltinOptions.Conv2DOptions, _conv_options),
    "DEPTHWISE_CONV_2D": (DepthwiseConv2DOptions, BuiltinOptions.DepthwiseConv2DOptions, _conv_options),
    "AVERAGE_POOL_2D": (Pool2DOptions, BuiltinOptions.Pool2DOptions, _pool_options),
    "MAX_POOL_2D": (Pool2DOptions, BuiltinOptions.Pool2DOptions, _pool_options),
    "FULLY_CONNECTED": (FullyConnectedOptions, BuiltinOptions.FullyConnectedOptions,
                        lambda o, t, i: {"activation": _activation(o), "weights_format": o.WeightsFormat()}),
    "ADD": (AddOptions, BuiltinOptions.AddOptions, lambda o, t, i: {"activation": _activation(o)}),
    "BATCH_MATMUL": (BatchMatMulOptions, BuiltinOptions.BatchMatMulOptions,
                     lambda o, t, i: {"adj_x": bool(o.AdjX()), "adj_y": bool(o.AdjY())}),
    "SUB": (SubOptions, BuiltinOptions.SubOptions, lambda o, t, i: {"activation": _activation(o)}),
    "DEPTH_TO_SPACE": (DepthToSpaceOptions, BuiltinOptions.DepthToSpaceOptions,
                       lambda o, t, i: {"block_size": o.BlockSize()}),
    "SPACE_TO_DEPTH": (SpaceToDepthOptions, BuiltinOptions.SpaceToDepthOptions,
                       lambda o, t, i: {"block_size": o.BlockSize()}),
    "MUL": (MulOptions, BuiltinOptions.MulOptions, lambda o, t, i: {"activation": _activation(o)}),
    "DIV": (DivOptions, BuiltinOptions.DivOptions, lambda o, t, i: {"activation": _activation(o)}),
    "CONCATENATION": (ConcatenationOptions, BuiltinOptions.ConcatenationOptions,
                      lambda o, t, i: {"axis": o.Axis(), "activation": _activation(o)}),
    "SOFTMAX": (SoftmaxOptions, BuiltinOptions.SoftmaxOptions, lambda o, t, i: {"beta": o.Beta()}),
    **{op_type: (ReducerOptions, BuiltinOptions.ReducerOptions, lambda o, t, i: {"keep_dims": bool(o.KeepDims())})
       for op_type in ("MEAN", "SUM", "REDUCE_MAX")},
    "LEAKY_RELU": (LeakyReluOptions, BuiltinOptions.LeakyReluOptions, lambda o, t, i: {"alpha": o.Alpha()}),
    "GELU": (GeluOptions, BuiltinOptions.GeluOptions,
             lambda o, t, i: {"approximate": "tanh" if o.Approximate() else "none"}),
    "STRIDED_SLICE": (StridedSliceOptions, BuiltinOptions.StridedSliceOptions,
                      lambda o, t, i: {"begin_mask": o.BeginMask(), "end_mask": o.EndMask(),
                                       "ellipsis_mask": o.EllipsisMask(), "new_axis_mask": o.NewAxisMask(),
                                       "shrink_axis_mask": o.ShrinkAxisMask(), "offset": bool(o.Offset())}),
    "SPLIT": (SplitOptions, BuiltinOptions.SplitOptions, lambda o, t, i: {"num_splits": o.NumSplits()}),
    "SPLIT_V": (SplitVOptions, BuiltinOptions.SplitVOptions, lambda o, t, i: {"num_splits": o.NumSplits()}),
    "MIRROR_PAD": (MirrorPadOptions, BuiltinOptions.MirrorPadOptions,
                   lambda o, t, i: {"mode": "SYMMETRIC" if o.Mode() == MirrorPadMode.SYMMETRIC else "REFLECT"}),
    "TRANSPOSE_CONV": (TransposeConvOptions, BuiltinOptions.TransposeConvOptions, _transpose_conv_options),
    "PACK": (PackOptions, BuiltinOptions.PackOptions, lambda o, t, i: {"axis": o.Axis()}),
    "GATHER": (GatherOptions, BuiltinOptions.GatherOptions,
               lambda o, t, i: {"axis": o.Axis(), "batch_dims": o.BatchDims()}),
    "RESIZE_BILINEAR": (ResizeBilinearOptions, BuiltinOptions.ResizeBilinearOptions, _resize_options),
    "RESIZE_NEAREST_NEIGHBOR": (ResizeNearestNeighborOptions, BuiltinOptions.ResizeNearestNeighborOptions,
                                _resize_options),
    "VAR_HANDLE": (VarHandleOptions, BuiltinOptions.VarHandleOptions, _variable_options),
    "CALL_ONCE": (CallOnceOptions, BuiltinOptions.CallOnceOptions,
                  lambda o, t, i: {"init_subgraph": o.InitSubgraphIndex()}),
}
