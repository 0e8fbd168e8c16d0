"""BatchNormalization that no convolution absorbed (MobileNetV4-hybrid, EfficientFormerV2, RepViT-style
blocks): onnxruntime runs it in float between DequantizeLinear and QuantizeLinear (quantize_static
quantizes its scale as int8 and its bias as int32 in the QDQ form, leaves it float in QOperator). A
function of one int8 value per channel: one table per channel of onnxruntime's float32 arithmetic
(batch_norm.h: 1 / sqrt(var + epsilon), times scale; bias - mean * that; x * scale + bias), bit-exact on
every input value and in quantized models, every variant. Was refused: "op BatchNormalization: operator
not supported"."""

import numpy as np
import pytest
from onnx import helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession
from test_onnx_gelu import run_of_every_value
from test_onnx_quantizer_forms import feeds

import qnnweb

RNG = np.random.default_rng(41)
MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8")]


def parameters(channels, seed):
    rng = np.random.default_rng(seed)
    return {"sc": rng.uniform(-2, 2, channels).astype(np.float32), "bi": rng.normal(0, 1, channels).astype(np.float32),
            "mu": rng.normal(0, 1, channels).astype(np.float32),
            "var": rng.uniform(0.01, 3, channels).astype(np.float32)}


def batch_norm_of_every_value(dtype, scale, zero_point, quantize, channels, epsilon, after=None):
    """q [1, channels, 256] (every value in each channel) -> DequantizeLinear -> BatchNormalization (->
    `after` op) -> QuantizeLinear with `quantize` (or float when None)."""
    nodes = [helper.make_node("BatchNormalization", ["f", "sc", "bi", "mu", "var"], ["b" if after else "e"],
                              epsilon=epsilon)]
    if after:
        nodes.append(helper.make_node(after, ["b"], ["e"]))
    return run_of_every_value(dtype, scale, zero_point, nodes, parameters(channels, channels), quantize, opset=15,
                              shape=(1, channels, 256))


# (dtype, input scale, zero point, output scale / zero point or None for a float output)
VALUE_CASES = [("int8", 0.05, 0, (0.03, -20)), ("int8", 0.0213, 37, (0.11, 3)), ("int8", 0.2, -128, None),
               ("uint8", 0.0137, 200, (0.02, 140)), ("uint8", 0.04, 128, None)]


@pytest.mark.parametrize("after", [None, "Relu", "Erf"], ids=str)
@pytest.mark.parametrize("epsilon", [1e-5, 1e-3], ids=str)
@pytest.mark.parametrize("case", VALUE_CASES, ids=str)
def test_every_input_value_matches_onnxruntime(case, epsilon, after):
    """Each of the 256 inputs in each of 5 channels through DequantizeLinear -> BatchNormalization (-> a
    float op) (-> QuantizeLinear), the [N, C, L] form: the same bytes, or float32 bits, as onnxruntime."""
    dtype, scale, zero_point, quantize = case
    data = batch_norm_of_every_value(dtype, scale, zero_point, quantize, 5, epsilon, after)
    q = np.tile(np.arange(256, dtype=np.uint8), (1, 5, 1)).view(np.int8 if dtype == "int8" else np.uint8)
    (theirs,) = ReferenceSession(data).run({"q": q})
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(data, variant=variant)
        assert "BATCH_NORM" in {o.type for o in model._graph.ops}
        (ours,) = model.run(q)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs, err_msg=variant)


def feature_map_model(after_pool):
    """Conv -> MaxPool -> BatchNormalization -> Relu -> Conv: a BatchNormalization no Conv absorbs."""
    init = {"w": RNG.normal(0, 0.6, (6, 3, 1, 1)).astype(np.float32), "w2": RNG.normal(0, 0.4, (4, 6, 1, 1)).astype(np.float32),
            **parameters(6, 3)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[2, 2]),
             helper.make_node("BatchNormalization", ["p", "sc", "bi", "mu", "var"], ["b"], epsilon=1e-5),
             helper.make_node("Relu", ["b"], ["r"])]
    if after_pool:
        nodes.append(helper.make_node("Conv", ["r", "w2"], ["y"]))
        return float_model(nodes, [("x", [1, 3, 8, 9])], [("y", [1, 4, 7, 8])], init)
    nodes[-1] = helper.make_node("Relu", ["b"], ["y"])
    return float_model(nodes, [("x", [1, 3, 8, 9])], [("y", [1, 6, 7, 8])], init)


@pytest.mark.parametrize("at_end", [False, True], ids=["between-convolutions", "at-the-end"])
@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("mode", MODES, ids=["-".join(m) for m in MODES])
def test_feature_map_batch_norm_in_a_quantized_model(mode, per_channel, at_end):
    """quantize_static's forms of a 4-D BatchNormalization (QDQ: int8 scale per tensor or per channel, int32
    bias; QOperator: all float, a float output at the end): bit-exact with onnxruntime, every variant."""
    data = quantized(feature_map_model(not at_end), feeds([1, 3, 8, 9]), quant_format=mode[0], activation=mode[1],
                     per_channel=per_channel)
    assert_matches_onnxruntime(data, feeds([1, 3, 8, 9], 1, seed=4)[0]["x"] * 2, ["BATCH_NORM"], exact=True)


@pytest.mark.parametrize("per_channel", [False, True], ids=["per-tensor", "per-channel"])
@pytest.mark.parametrize("mode", MODES[:2], ids=["-".join(m) for m in MODES[:2]])
def test_token_batch_norm_in_a_quantized_model(mode, per_channel):
    """[N, C, L] BatchNormalization after a token MatMul and a Transpose (BatchNorm1d over tokens)."""
    init = {"wm": RNG.normal(0, 0.5, (6, 6)).astype(np.float32), **parameters(6, 5)}
    nodes = [helper.make_node("MatMul", ["x", "wm"], ["m"]), helper.make_node("Transpose", ["m"], ["t"], perm=[0, 2, 1]),
             helper.make_node("BatchNormalization", ["t", "sc", "bi", "mu", "var"], ["y"], epsilon=1e-5)]
    model = float_model(nodes, [("x", [1, 10, 6])], [("y", [1, 6, 10])], init)
    data = quantized(model, feeds([1, 10, 6]), quant_format=mode[0], activation=mode[1], per_channel=per_channel)
    assert_matches_onnxruntime(data, feeds([1, 10, 6], 1, seed=8)[0]["x"] * 2, ["BATCH_NORM"], exact=True)
