"""ONNX Elu, which both of onnxruntime's quantizer forms leave in float between DequantizeLinear and
QuantizeLinear: a table of onnxruntime's float32 arithmetic (alpha * (Eigen's exp(x) - 1), see
ops/unary.py), bit-exact with onnxruntime on every input value and in quantized models, every variant.

onnxruntime computes the last size % 4 elements of a tensor with glibc's expf instead (one float32 ulp
apart on a few values), so the tensors here hold a multiple of 4 elements."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession
from test_onnx_quantizer_forms import feeds

import qnnweb

RNG = np.random.default_rng(23)
MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]
ALPHAS = [None, 0.4, 2.0]   # None: the attribute left out (ONNX's default, 1.0)


def elu_node(x, y, alpha):
    return helper.make_node("Elu", [x], [y], **({} if alpha is None else {"alpha": alpha}))


def elu_of_every_value(dtype, scale, zero_point, alpha, quantize):
    """q (all 256 values of `dtype`) -> DequantizeLinear -> Elu -> y, QuantizeLinear'd to `dtype` with
    (scale, zero point) `quantize`, or float when it is None."""
    np_dtype, onnx_dtype = (np.int8, TensorProto.INT8) if dtype == "int8" else (np.uint8, TensorProto.UINT8)
    init = [numpy_helper.from_array(np.array(scale, np.float32), "s"),
            numpy_helper.from_array(np.array(zero_point, np_dtype), "z")]
    nodes = [helper.make_node("DequantizeLinear", ["q", "s", "z"], ["f"]),
             elu_node("f", "e" if quantize else "y", alpha)]
    if quantize:
        init += [numpy_helper.from_array(np.array(quantize[0], np.float32), "ys"),
                 numpy_helper.from_array(np.array(quantize[1], np_dtype), "yz")]
        nodes.append(helper.make_node("QuantizeLinear", ["e", "ys", "yz"], ["y"]))
    graph = helper.make_graph(nodes, "elu", [helper.make_tensor_value_info("q", onnx_dtype, [1, 256])],
                              [helper.make_tensor_value_info("y", onnx_dtype if quantize else TensorProto.FLOAT,
                                                             [1, 256])], init)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8).SerializeToString()


# (dtype, input scale, input zero point, output scale / zero point or None for a float output)
VALUE_CASES = [("int8", 0.05, 0, None), ("int8", 0.0713, 37, (0.031, -20)), ("int8", 0.003, 127, (0.0011, 90)),
               ("int8", 0.2, -128, (0.1, -118)), ("uint8", 0.05, 128, None), ("uint8", 0.0137, 200, (0.009, 140)),
               ("uint8", 0.5, 255, (0.06, 255)), ("uint8", 0.0713, 0, (0.04, 30))]


@pytest.mark.parametrize("alpha", ALPHAS, ids=str)
@pytest.mark.parametrize("case", VALUE_CASES, ids=str)
def test_every_input_value_matches_onnxruntime(case, alpha):
    """Each of the 256 int8 / uint8 inputs through DequantizeLinear -> Elu (-> QuantizeLinear): the same
    float32 bits or bytes as onnxruntime."""
    dtype, scale, zero_point, quantize = case
    data = elu_of_every_value(dtype, scale, zero_point, alpha, quantize)
    q = np.arange(256, dtype=np.uint8).view(np.int8 if dtype == "int8" else np.uint8).reshape(1, 256)
    (theirs,) = ReferenceSession(data).run({"q": q})
    for variant in qnnweb.VARIANTS:
        (ours,) = qnnweb.load(data, variant=variant).run(q)
        assert ours.dtype == theirs.dtype
        np.testing.assert_array_equal(ours, theirs, err_msg=variant)


@pytest.mark.parametrize("alpha", ALPHAS, ids=str)
@pytest.mark.parametrize("at_end", [False, True], ids=["between-convolutions", "at-the-end"])
@pytest.mark.parametrize("mode", MODES, ids=["-".join(m) for m in MODES])
def test_elu_in_a_quantized_model(mode, at_end, alpha):
    """Conv -> Elu -> Conv and Conv -> Elu (float output) quantized by quantize_static with per-channel
    weights: bit-exact with onnxruntime, in every variant. Was refused: "op Elu: operator not supported"."""
    w = RNG.normal(0, 0.6, (4, 3, 3, 3)).astype(np.float32)
    init = {"w": w, "b": RNG.normal(-0.3, 0.3, 4).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]),
             elu_node("c", "y" if at_end else "e", alpha)]
    if not at_end:
        init["w2"] = RNG.normal(0, 0.5, (5, 4, 1, 1)).astype(np.float32)
        nodes.append(helper.make_node("Conv", ["e", "w2"], ["y"]))
    model = float_model(nodes, [("x", [1, 3, 5, 6])], [("y", [1, 4 if at_end else 5, 5, 6])], init)
    data = quantized(model, feeds([1, 3, 5, 6]), quant_format=mode[0], activation=mode[1], per_channel=True)
    assert_matches_onnxruntime(data, feeds([1, 3, 5, 6], 1, seed=21)[0]["x"], ["ELU"], exact=True)
