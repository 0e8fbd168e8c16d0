"""The relaxed module in Chromium's V8 against CPython's simd128 module (wasmtime) on convolutions that
take every path of the IGEMM's packing and row corrections: 1x1 and 3x3 (with padding taps), the
im2col path of a 3-channel first convolution, output channel counts that pick the 2x16 and the 2x24
tile and leave partial blocks, an odd pixel count (a last tile of one row), a weight zero point (per
tensor), per-channel zero points (the split weights) and a fully connected layer.

In Chromium the relaxed module runs the kernels the engine's probe picks (src/config.c): on x86 with
VNNI the one-dot IGEMM whose weights are packed as w + 128 and corrected by the row sums, whose
full range wasmtime cannot check (tests/kernels/test_relaxed_forms.py bounds it); on other machines
the kernels of their probe outcome. Either way its bytes must be CPython's."""

from __future__ import annotations

import base64

import numpy as np
import pytest
import qnnweb
from onnx import TensorProto, helper, numpy_helper

RUN_JS = """async ([compiled, input]) => {
    const qnnweb = await import("/static/qnnweb.js");
    const decode = (text) => Uint8Array.from(atob(text), (c) => c.charCodeAt(0));
    const model = await qnnweb.load(decode(compiled), { variant: "relaxed" });
    const [out] = model.run(new Float32Array(decode(input).buffer));
    const raw = new Uint8Array(out.buffer, out.byteOffset, out.byteLength);
    let s = "";
    for (const b of raw) s += String.fromCharCode(b);
    return { output: btoa(s), kernels: model.info().kernels };
}"""


def qdq_conv(in_channels, out_channels, kernel, size, weight_zero_points=None, gemm=False):
    """x -> Q/DQ (int8) -> Conv (or Gemm) with int8 / uint8 weights through DQ -> Q/DQ -> y, float edges."""
    rng = np.random.default_rng(0)
    init = [numpy_helper.from_array(np.array(0.05, np.float32), "xs"), numpy_helper.from_array(np.array(3, np.int8), "xz"),
            numpy_helper.from_array(np.array(0.2, np.float32), "ys"), numpy_helper.from_array(np.array(-5, np.int8), "yz")]
    shape = [out_channels, in_channels] if gemm else [out_channels, in_channels, kernel, kernel]
    if weight_zero_points is None:
        w = rng.integers(-128, 128, shape).astype(np.int8)
        init += [numpy_helper.from_array(w, "wq"), numpy_helper.from_array(np.full(out_channels, 0.004, np.float32), "ws"),
                 numpy_helper.from_array(np.zeros(out_channels, np.int8), "wz")]
    else:   # uint8 weights with zero points: one for all, or one per output channel
        w = rng.integers(0, 256, shape).astype(np.uint8)
        zero_points = np.asarray(weight_zero_points, np.uint8)
        scale = np.full(zero_points.shape, 0.004, np.float32)
        init += [numpy_helper.from_array(w, "wq"), numpy_helper.from_array(scale, "ws"),
                 numpy_helper.from_array(zero_points, "wz")]
    pads = [kernel // 2] * 4
    x_shape = [1, in_channels] if gemm else [1, in_channels, size[0], size[1]]
    nodes = [helper.make_node("QuantizeLinear", ["x", "xs", "xz"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "xs", "xz"], ["xd"]),
             helper.make_node("DequantizeLinear", ["wq", "ws", "wz"], ["wd"], axis=0),
             helper.make_node("Gemm", ["xd", "wd"], ["c"], transB=1) if gemm else
             helper.make_node("Conv", ["xd", "wd"], ["c"], pads=pads),
             helper.make_node("QuantizeLinear", ["c", "ys", "yz"], ["cq"]),
             helper.make_node("DequantizeLinear", ["cq", "ys", "yz"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], init)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    return model.SerializeToString(), x_shape


CASES = {
    "1x1-24-channels": dict(in_channels=40, out_channels=24, kernel=1, size=(5, 7)),
    "1x1-16-channels": dict(in_channels=16, out_channels=16, kernel=1, size=(6, 6)),
    "1x1-wide-partial": dict(in_channels=96, out_channels=100, kernel=1, size=(3, 5)),
    "1x1-narrow-partial": dict(in_channels=33, out_channels=75, kernel=1, size=(9, 9)),
    "3x3-padding-taps": dict(in_channels=20, out_channels=48, kernel=3, size=(7, 5)),
    "3x3-im2col-first-conv": dict(in_channels=3, out_channels=32, kernel=3, size=(11, 13)),
    "3x3-weight-zero-point": dict(in_channels=24, out_channels=40, kernel=3, size=(5, 5), weight_zero_points=[131]),
    "1x1-per-channel-zero-points": dict(in_channels=18, out_channels=30, kernel=1, size=(5, 3),
                                        weight_zero_points=list(range(100, 250, 5))),
    "fully-connected": dict(in_channels=320, out_channels=50, kernel=1, size=None, gemm=True),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_relaxed_convolution_in_chromium_equals_cpython(blank_page, case):
    data, x_shape = qdq_conv(**CASES[case])
    x = np.random.default_rng(1).uniform(-6.5, 6.5, x_shape).astype(np.float32)
    expected = qnnweb.load(data, variant="simd128").run(x)[0]
    compiled = base64.b64encode(qnnweb.compile(data)).decode()
    js = blank_page.evaluate(RUN_JS, [compiled, base64.b64encode(x.tobytes()).decode()])
    got = np.frombuffer(base64.b64decode(js["output"]), np.float32).reshape(expected.shape)
    np.testing.assert_array_equal(got, expected, err_msg=f"{case}: {js['kernels']}")
