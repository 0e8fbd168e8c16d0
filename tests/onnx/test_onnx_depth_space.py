"""ONNX DepthToSpace (DCR and CRD) and SpaceToDepth, as onnxruntime's quantize_static leaves them (in
float between DequantizeLinear and QuantizeLinear, in every mode), between convolutions and as the
model's last op (a super-resolution model's PixelShuffle): within one quantum of onnxruntime in every
variant, and the moved values bit-exact with it (one transpose, and a requantization where the
quantizer gave the output other parameters)."""

import numpy as np
import onnx
import pytest
import qnnweb
from onnx import helper
from qnnweb_dev.onnx_quantized import float_model, output_quantum, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]
RNG = np.random.default_rng(21)


def model(op, mode, last):
    """Conv (3 -> 8 channels) -> op (blocksize 2) [-> Conv (-> 4 channels)]."""
    d2s = op != "SpaceToDepth"
    channels, (h, w) = 8, (4, 6)
    moved_shape = [1, 2, h * 2, w * 2] if d2s else [1, 32, h // 2, w // 2]
    attrs = {"blocksize": 2} | ({"mode": mode} if d2s else {})
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node(op if d2s else "SpaceToDepth", ["c"], ["m" if not last else "y"], **attrs)]
    init = {"w1": RNG.normal(0, 0.5, (channels, 3, 3, 3)).astype(np.float32)}
    if not last:
        nodes.append(helper.make_node("Conv", ["m", "w2"], ["y"]))
        init["w2"] = RNG.normal(0, 0.5, (4, moved_shape[1], 1, 1)).astype(np.float32)
        out_shape = [1, 4, *moved_shape[2:]]
    else:
        out_shape = moved_shape
    return float_model(nodes, [("x", [1, 3, h, w])], [("y", out_shape)], init)


CASES = [("DepthToSpace", "DCR"), ("DepthToSpace", "CRD"), ("SpaceToDepth", None)]


@pytest.mark.parametrize("last", [False, True], ids=["between-convs", "last-op"])
@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize(("op", "mode"), CASES, ids=["d2s-DCR", "d2s-CRD", "s2d"])
def test_matches_onnxruntime(op, mode, quant, last):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, 4, 6)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(op, mode, last), feeds, quant_format=quant[0], activation=quant[1])
    x = RNG.uniform(-1, 1, (1, 3, 4, 6)).astype(np.float32)
    (theirs,) = ReferenceSession(data).run({"x": x})
    for variant in qnnweb.VARIANTS:
        loaded = qnnweb.load(data, variant=variant)
        assert any(o.type in ("DEPTH_TO_SPACE", "SPACE_TO_DEPTH") for o in loaded._graph.ops)
        quantum = output_quantum(loaded._graph)
        (ours,) = loaded.run(x)
        assert ours.shape == theirs.shape
        steps = np.abs(np.round((ours - theirs) / quantum))
        assert steps.max() <= 1, f"{variant}: up to {steps.max()} quanta off onnxruntime"
        if last:  # the moved values are onnxruntime's exactly
            np.testing.assert_array_equal(ours, theirs, err_msg=variant)


def test_bad_block_sizes_are_named():
    """A DepthToSpace whose channels do not divide by blocksize^2 (the file edited after quantization:
    onnxruntime refuses to calibrate such a model)."""
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, 4, 6)).astype(np.float32)} for _ in range(4)]
    quantized_model = onnx.load_from_string(quantized(model("DepthToSpace", "DCR", True), feeds, activation="QInt8"))
    node = next(n for n in quantized_model.graph.node if n.op_type == "DepthToSpace")
    next(a for a in node.attribute if a.name == "blocksize").i = 3
    with pytest.raises(qnnweb.UnsupportedModelError, match="8 channels are not a multiple of blocksize"):
        qnnweb.load(quantized_model.SerializeToString())
