"""ONNX ConvTranspose as onnxruntime's quantize_static writes it (QDQ; int8 and uint8 activations,
weights per tensor and per channel): kernel 4 stride 2 pad 1 (torch's usual upsampler), kernel 3
stride 2 pad 1 with output_padding 1, kernel 2 stride 2, groups (2, and one per channel), dilations 2;
between convolutions and as the last op. Within one quantum of onnxruntime in every variant."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized

RNG = np.random.default_rng(55)
H, W, C = 5, 6, 8
# name -> (ConvTranspose attributes, kernel, output height / width)
CASES = {
    "k4s2p1": ({"strides": [2, 2], "pads": [1, 1, 1, 1]}, 4, (2 * H, 2 * W)),
    "k3s2p1-output-padding": ({"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1]}, 3, (2 * H, 2 * W)),
    "k2s2": ({"strides": [2, 2]}, 2, (2 * H, 2 * W)),
    "k3s1p1": ({"pads": [1, 1, 1, 1]}, 3, (H, W)),
    "k4s2p1-groups-2": ({"strides": [2, 2], "pads": [1, 1, 1, 1], "group": 2}, 4, (2 * H, 2 * W)),
    "k3s2p1-depthwise": ({"strides": [2, 2], "pads": [1, 1, 1, 1], "output_padding": [1, 1], "group": C}, 3,
                         (2 * H, 2 * W)),
    "k3s2p1-dilations-2": ({"strides": [2, 2], "pads": [1, 1, 1, 1], "dilations": [2, 2]}, 3, (2 * H + 1, 2 * W + 1)),
    "k3s1p2-dilations-2-groups-2": ({"pads": [2, 2, 2, 2], "dilations": [2, 2], "group": 2}, 3, (H, W)),
}


def model(case, last, bias=True):
    attrs, k, (oh, ow) = CASES[case]
    group = attrs.get("group", 1)
    out_c = C if group == C else 6
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("ConvTranspose", ["c", "wt"] + (["bt"] if bias else []), ["t" if not last else "y"],
                              **attrs)]
    init = {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32),
            "wt": RNG.normal(0, 0.3, (C, out_c // group, k, k)).astype(np.float32)}
    if bias:
        init["bt"] = RNG.normal(0, 0.2, out_c).astype(np.float32)
    if not last:
        nodes.append(helper.make_node("Conv", ["t", "w2"], ["y"]))
        init["w2"] = RNG.normal(0, 0.4, (4, out_c, 1, 1)).astype(np.float32)
        out_c = 4
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, out_c, oh, ow])], init)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("last", [False, True], ids=["between-convs", "last-op"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_onnxruntime(case, last, activation, per_channel):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    # quantize_static cannot quantize the bias of a grouped ConvTranspose with per-channel weights (its
    # per-channel scales count one group's channels): such models have no bias
    bias = not (per_channel and CASES[case][0].get("group", 1) > 1)
    data = quantized(model(case, last, bias), feeds, activation=activation, per_channel=per_channel)
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), ["TRANSPOSE_CONV"],
                               min_exact=0.99)
