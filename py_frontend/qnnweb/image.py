"""Image pre- and post-processing without numpy (Pyodide has none offline)."""

import array
import math
import struct

from .numerics.tflite import quantize_float32
from .ops.common import round_half_away


def is_nchw(shape):
    """[N, 3, H, W] (ONNX) rather than [N, H, W, 3] (TFLite)."""
    return len(shape) == 4 and shape[1] == 3 and shape[3] != 3


def rgb_to_input(rgb, tensor_info, mean=(0.0, 0.0, 0.0), std=(1.0, 1.0, 1.0)):
    """Turn H*W*3 RGB bytes (already at the model's input size) into the model's input buffer:
    float = (pixel - mean[c]) / std[c] in float32; for an int8 input, that float quantized with the
    input's scale and zero point as LiteRT's QUANTIZE would (a float model's first op: pixels at
    ties, e.g. scale 1 / 127.5 with mean 127.5, round as it rounds them); laid out NHWC or NCHW as the
    input's shape says. One 256-entry table per channel and slice assignments, so this is fast in
    pure Python."""
    rgb = bytes(rgb)
    if len(rgb) != tensor_info.size:
        raise ValueError(f"expected {tensor_info.size // 3} RGB pixels for input {list(tensor_info.shape)}, "
                         f"got {len(rgb) / 3:g}")
    planar = is_nchw(tensor_info.shape)
    plane = len(rgb) // 3

    def place(out, c, values):
        if planar:
            out[c * plane:(c + 1) * plane] = values
        else:
            out[c::3] = values

    tables = [[(p - mean[c]) / std[c] for p in range(256)] for c in range(3)]
    if tensor_info.dtype == "float32":
        out = [0.0] * len(rgb)
        for c in range(3):
            place(out, c, [tables[c][p] for p in rgb[c::3]])
        return array.array("f", out)
    if tensor_info.dtype == "int8":
        scale, zero_point = tensor_info.scale, tensor_info.zero_point
        out = bytearray(len(rgb))
        for c in range(3):
            table = bytes(quantize_float32(v, scale, zero_point) & 0xFF for v in tables[c])
            place(out, c, rgb[c::3].translate(table))
        return out
    raise ValueError(f"images go into float32 or int8 inputs, not {tensor_info.dtype}")


def dequantize(output, tensor_info):
    """Output values as Python floats."""
    data = memoryview(output).cast("B").tobytes() if not isinstance(output, (bytes, bytearray)) else bytes(output)
    if tensor_info.dtype == "float32":
        return list(struct.unpack(f"<{len(data) // 4}f", data))
    if tensor_info.dtype == "int8":
        scale, zero_point = tensor_info.scale, tensor_info.zero_point
        return [(v - zero_point) * scale for v in struct.unpack(f"<{len(data)}b", data)]
    raise ValueError(f"cannot dequantize a {tensor_info.dtype} output")


def output_to_rgb(values, shape, value_range=(0.0, 1.0)):
    """An image-to-image model's output ([1, 3, H, W] or [1, H, W, 3] values, flat) as H*W*3 RGB bytes:
    ``value_range`` maps to 0..255, rounded half away from zero and clipped."""
    nchw = is_nchw(shape)
    h, w = (shape[2], shape[3]) if nchw else (shape[1], shape[2])
    if len(shape) != 4 or shape[0] != 1 or (shape[1] if nchw else shape[3]) != 3 or len(values) != 3 * h * w:
        raise ValueError(f"an RGB image output is [1, 3, H, W] or [1, H, W, 3], not {list(shape)}")
    lo, hi = value_range
    scale = 255.0 / (hi - lo)
    out = bytearray(3 * h * w)
    plane = h * w
    for i in range(plane):
        for c in range(3):
            v = values[c * plane + i] if nchw else values[i * 3 + c]
            out[i * 3 + c] = max(0, min(255, round_half_away((v - lo) * scale)))
    return bytes(out)


def softmax(values):
    top = max(values)
    exps = [math.exp(v - top) for v in values]
    total = sum(exps)
    return [e / total for e in exps]


def top_k(output, tensor_info, k=5, logits=False):
    """The k best classes as (index, score), best first; `logits=True` turns scores into
    probabilities with a softmax first (for models whose output is logits)."""
    scores = dequantize(output, tensor_info)
    if logits:
        scores = softmax(scores)
    order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))
    return [(i, scores[i]) for i in order[:k]]
