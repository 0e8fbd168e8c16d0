"""ONNX ConvTranspose as onnxruntime's quantize_static writes it (QDQ; int8 and uint8 activations,
weights per tensor and per channel): kernel 4 stride 2 pad 1 (torch's usual upsampler), kernel 3
stride 2 pad 1 with output_padding 1, kernel 2 stride 2; between convolutions and as the last op.
Within one quantum of onnxruntime in every variant."""

import numpy as np
import pytest
from onnx import helper
from onnx_quantized import assert_matches_onnxruntime, float_model, quantized

RNG = np.random.default_rng(55)
H, W, C = 5, 6, 8
# name -> (ConvTranspose attributes, kernel, output height / width)
CASES = {
    "k4s2p1": ({"strides": [2, 2], "pads": [1, 1, 1, 1]}, 4, (2 * H, 2 * W)),
    "k3s2p1-output-padding": ({"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, 3, (2 * H, 2 * W)),
    "k2s2": ({"strides": [2, 2]}, 2, (2 * H, 2 * W)),
    "k3s1p1": ({"pads": [1, 1, 1, 1]}, 3, (H, W)),
}


def model(case, last):
    attrs, k, (oh, ow) = CASES[case]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("ConvTranspose", ["c", "wt", "bt"], ["t" if not last else "y"], **attrs)]
    init = {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32),
            "wt": RNG.normal(0, 0.3, (C, 6, k, k)).astype(np.float32), "bt": RNG.normal(0, 0.2, 6).astype(np.float32)}
    out_c = 6
    if not last:
        nodes.append(helper.make_node("Conv", ["t", "w2"], ["y"]))
        init["w2"] = RNG.normal(0, 0.4, (4, 6, 1, 1)).astype(np.float32)
        out_c = 4
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, out_c, oh, ow])], init)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("last", [False, True], ids=["between-convs", "last-op"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_onnxruntime(case, last, activation, per_channel):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(case, last), feeds, activation=activation, per_channel=per_channel)
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), ["TRANSPOSE_CONV"],
                               min_exact=0.99)
