"""ONNX PRelu as onnxruntime's quantize_static leaves it (in float between DequantizeLinear and
QuantizeLinear: the quantizer has no PRelu), with one slope per channel or one for all, in every
mode, between convolutions and as the model's last float op (alone, and followed by Tanh: one table):
within one quantum of onnxruntime in every variant; pooled in float (QOperator) bit-exact. Its own table is
onnxruntime's float32 PRelu, checked bit-exact on every input value below."""

import numpy as np
import pytest
import qnnweb
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]
RNG = np.random.default_rng(44)
H, W, C = 6, 8, 12
SLOPES = {"per-channel": RNG.uniform(-0.5, 0.9, (C, 1, 1)).astype(np.float32),
          "one": np.array([0.25], np.float32)}


def model(slope, form="between-convs"):
    """Conv -> PRelu -> Conv; or PRelu (-> Tanh) as the model's last op(s), whose float result is the output."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1])]
    init = {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32), "slope": SLOPES[slope]}
    if form == "between-convs":
        nodes += [helper.make_node("PRelu", ["c", "slope"], ["p"]), helper.make_node("Conv", ["p", "w2"], ["y"])]
        init["w2"] = RNG.normal(0, 0.3, (4, C, 1, 1)).astype(np.float32)
        return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 4, H, W])], init)
    if form == "last":
        nodes.append(helper.make_node("PRelu", ["c", "slope"], ["y"]))
    else:   # "last-then-tanh": two float ops in a row, one table
        nodes += [helper.make_node("PRelu", ["c", "slope"], ["p"]), helper.make_node("Tanh", ["p"], ["y"])]
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, C, H, W])], init)


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("form", ["between-convs", "last", "last-then-tanh"])
@pytest.mark.parametrize("slope", sorted(SLOPES))
def test_matches_onnxruntime(slope, form, quant):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(slope, form), feeds, quant_format=quant[0], activation=quant[1])
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), ["PRELU"])


@pytest.mark.parametrize("slope", sorted(SLOPES))
def test_every_input_value_bit_exact(slope):
    """DequantizeLinear -> PRelu -> QuantizeLinear on an int8 input holding every value in every channel:
    qnnweb's tables give onnxruntime's bytes."""
    from onnx import TensorProto, numpy_helper
    channels = C if slope == "per-channel" else 1
    nodes = [helper.make_node("DequantizeLinear", ["q", "xs", "xz"], ["x"]),
             helper.make_node("PRelu", ["x", "slope"], ["p"]),
             helper.make_node("QuantizeLinear", ["p", "ys", "yz"], ["y"])]
    init = [numpy_helper.from_array(v, k) for k, v in {
        "xs": np.array(0.043, np.float32), "xz": np.array(-7, np.int8), "slope": SLOPES[slope],
        "ys": np.array(0.031, np.float32), "yz": np.array(11, np.int8)}.items()]
    shape = [1, channels, 16, 16]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("q", TensorProto.INT8, shape)],
                              [helper.make_tensor_value_info("y", TensorProto.INT8, shape)], init)
    data = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()
    q = np.stack([np.roll(np.arange(-128, 128, dtype=np.int8), c).reshape(16, 16) for c in range(channels)])[None]
    (theirs,) = ReferenceSession(data).run({"q": q})
    for variant in qnnweb.VARIANTS:
        np.testing.assert_array_equal(qnnweb.load(data, variant=variant).run(q)[0], theirs, err_msg=variant)


def pooled_model(slope):
    """Conv -> PRelu -> GlobalAveragePool -> Conv: the QOperator form leaves the pool in float after the PRelu."""
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("PRelu", ["c", "slope"], ["p"]),
             helper.make_node("GlobalAveragePool", ["p"], ["g"]),
             helper.make_node("Conv", ["g", "w2"], ["y"])]
    init = {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32), "slope": SLOPES[slope],
            "w2": RNG.normal(0, 0.3, (4, C, 1, 1)).astype(np.float32)}
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 4, 1, 1])], init)


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("slope", sorted(SLOPES))
def test_float_global_pool_after_prelu_bit_exact(slope, quant):
    """A PRelu's float result pooled in float (QOperator) is the float pool of a table of its values (one per
    channel with per-channel slopes; MLAS's order, the avgpool record's arithmetic 5), bit-exact; in QDQ form
    the pool is quantized."""
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(pooled_model(slope), feeds, quant_format=quant[0], activation=quant[1])
    for seed in range(3):
        x = np.random.default_rng(seed).uniform(-1, 1, (1, 3, H, W)).astype(np.float32)
        assert_matches_onnxruntime(data, x, ["AVERAGE_POOL_2D"], exact=True)
