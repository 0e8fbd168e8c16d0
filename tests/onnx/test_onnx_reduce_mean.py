"""ONNX ReduceMean as onnxruntime's quantize_static leaves it: in float between a DequantizeLinear and
the next op's QuantizeLinear (squeeze-excite blocks, pooled heads), over height and width, channels,
channels and height, all axes; keepdims or not; opset 13 (axes an attribute) and 18 (an input); uint8
and int8 activations. Within one quantum of onnxruntime in every variant, and bit-exact on the machines
measured (AMD EPYC, AVX2; the test asks 95 %): qnnweb sums the dequantized taps as onnxruntime's
QLinearAveragePool does, onnxruntime's float ReduceMean sums in its SIMD width's order, so on another CPU a
rounding there could move a tie."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

RNG = np.random.default_rng(77)
N, C, H, W = 1, 6, 5, 7
CASES = {"hw": ([2, 3], 1), "channels": ([1], 1), "channels-height": ([1, 2], 1), "all": ([0, 1, 2, 3], 1),
         "hw-dropped": ([2, 3], 0), "channels-dropped": ([1], 0)}


def model(axes, keep, opset):
    """Conv -> ReduceMean -> Conv (1x1, or a MatMul-free Mul when the spatial axes are gone)."""
    mean = (helper.make_node("ReduceMean", ["c", "axes"], ["m"], keepdims=keep) if opset >= 18
            else helper.make_node("ReduceMean", ["c"], ["m"], axes=axes, keepdims=keep))
    shape = [N, C, H, W]
    reduced = [1 if k in axes else d for k, d in enumerate(shape)] if keep else [d for k, d in enumerate(shape) if k not in axes]
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]), mean,
             helper.make_node("Mul", ["m", "s"], ["y"])]
    init = {"w": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32), "s": np.float32(RNG.uniform(0.5, 2.0, ()))}
    if opset >= 18:
        init["axes"] = np.array(axes, np.int64)
    return float_model(nodes, [("x", [N, 3, H, W])], [("y", reduced)], init, opset=opset)


@pytest.mark.parametrize("opset", [13, 18])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("case", list(CASES))
def test_matches_onnxruntime(case, activation, opset):
    axes, keep = CASES[case]
    feeds = [{"x": RNG.uniform(-1, 1, (N, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(axes, keep, opset), feeds, activation=activation)
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (N, 3, H, W)).astype(np.float32), ["MEAN"], min_exact=0.95)
