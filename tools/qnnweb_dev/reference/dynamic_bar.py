"""The correctness bar for the float outputs of dynamically quantized models (docs/supported-models.md): >= 99.9 %
of the elements within 1e-3 relative (or 1e-5 absolute) of onnxruntime's, cosine >= 0.9999, the same argmax;
onnxruntime's outputs at a graph optimization level; what this machine's onnxruntime computes otherwise than
the ONNX standard (its softmax: MLAS's FMA3 kernel, whose sums qnnweb follows; its uint8 x int8 products on
x86 AVX2 without VNNI, summed in pairs saturated to int16)."""

import functools
from pathlib import Path

import numpy as np
import onnxruntime
from onnx import TensorProto, helper, numpy_helper


def fma3_softmax():
    """Whether this machine's onnxruntime runs MLAS's FMA3 softmax (AVX2 without AVX-512F)."""
    try:
        flags = Path("/proc/cpuinfo").read_text().split()
    except OSError:
        return False
    return "fma" in flags and "avx512f" not in flags


def onnxruntime_outputs(data, inputs, level):
    """onnxruntime's outputs of model ``data`` at graph optimization ``level`` (ORT_ENABLE_BASIC: the graph as
    written, constants folded; ORT_ENABLE_ALL: its default session, fused)."""
    options = onnxruntime.SessionOptions()
    options.graph_optimization_level = level
    return onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"]).run(None, inputs)


def assert_within_bar(got, want, what, share=0.999):
    """``share`` of the elements within the bar, cosine >= 0.9999, the same argmax per token (of a rank-3
    output)."""
    got, want = np.asarray(got, np.float32).reshape(want.shape), want
    close = np.abs(got - want) <= np.maximum(1e-3 * np.abs(want), 1e-5)
    assert close.mean() >= share, f"{what}: {close.mean():.4%} within the bar, worst {np.abs(got - want).max():g}"
    cosine = float((got * want).sum() / (np.linalg.norm(got) * np.linalg.norm(want)))
    assert cosine >= 0.9999, f"{what}: cosine {cosine}"
    if want.ndim == 3:
        np.testing.assert_array_equal(got.argmax(-1), want.argmax(-1), err_msg=f"{what}: argmax per token")


@functools.cache
def onnxruntime_saturates_pairs():
    """Whether this machine's onnxruntime saturates uint8 x int8 product pairs to int16 (x86 AVX2 without VNNI)
    rather than summing them exactly (VNNI, ARM, WebAssembly) as qnnweb does: a pair of 255 x 127."""
    nodes = [helper.make_node("MatMulInteger", ["a", "b"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("a", TensorProto.UINT8, [1, 2])],
                              [helper.make_tensor_value_info("y", TensorProto.INT32, [1, 1])],
                              [numpy_helper.from_array(np.full((2, 1), 127, np.int8), "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    total = int(session.run(None, {"a": np.full((1, 2), 255, np.uint8)})[0][0, 0])
    assert total in (32767, 2 * 255 * 127), f"onnxruntime's MatMulInteger of a pair 255 x 127 gave {total}"
    return total == 32767
