"""ONNX Resize as torch's F.interpolate exports it and onnxruntime's quantize_static leaves it (QDQ and
QOperator, int8 and uint8): nearest (every nearest_mode; integer and fractional scales, sizes) and
linear (half_pixel, pytorch_half_pixel, asymmetric, align_corners), between convolutions and as the last
op: bit-exact with onnxruntime in every variant. Linear follows whichever of onnxruntime's three
arithmetics runs the model: float32 on dequantized values (QDQ), the int8 values in float32 truncated
(QOperator in NCHW) or 1/1024 integer weights (QOperator after onnxruntime's NHWC transform: which ops
it reaches is checked here too)."""

import numpy as np
import onnxruntime
import pytest
from onnx import TensorProto, helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb
from qnnweb.exporters import export_tflite
from qnnweb.numerics.float32 import float32
from qnnweb.ops.resize import onnx_nearest_axis

MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]
RNG = np.random.default_rng(66)
H, W, C = 5, 6, 8
# name -> (attributes, scales or None, sizes or None)
CASES = {
    "nearest-x2": ({"mode": "nearest", "coordinate_transformation_mode": "asymmetric", "nearest_mode": "floor"},
                   [1, 1, 2, 2], None),
    "nearest-half-pixel-sizes": ({"mode": "nearest"}, None, [1, C, 7, 13]),
    "nearest-ceil-down": ({"mode": "nearest", "nearest_mode": "ceil"}, None, [1, C, 3, 4]),
    "nearest-prefer-ceil": ({"mode": "nearest", "nearest_mode": "round_prefer_ceil"}, [1, 1, 1.5, 2.5], None),
    "linear-half-pixel": ({"mode": "linear"}, [1, 1, 2, 2], None),
    "linear-pytorch": ({"mode": "linear", "coordinate_transformation_mode": "pytorch_half_pixel"}, None,
                       [1, C, 11, 9]),
    "linear-align-corners": ({"mode": "linear", "coordinate_transformation_mode": "align_corners"}, None,
                             [1, C, 10, 12]),
    "linear-asymmetric": ({"mode": "linear", "coordinate_transformation_mode": "asymmetric"}, [1, 1, 3, 3], None),
}


def model(case, last):
    attrs, scales, sizes = CASES[case]
    out_hw = sizes[2:] if sizes else [int(H * scales[2]), int(W * scales[3])]
    init = {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32), "roi": np.zeros(0, np.float32)}
    inputs = ["c", "roi"]
    if scales:
        init["scales"] = np.array(scales, np.float32)
        inputs.append("scales")
    else:
        init["sizes"] = np.array(sizes, np.int64)
        inputs += ["", "sizes"]
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Resize", inputs, ["r" if not last else "y"], **attrs)]
    out = [1, C, *out_hw]
    if not last:
        nodes.append(helper.make_node("Conv", ["r", "w2"], ["y"]))
        init["w2"] = RNG.normal(0, 0.4, (4, C, 1, 1)).astype(np.float32)
        out = [1, 4, *out_hw]
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", out)], init)


FORMS = [(case, last) for case in sorted(CASES) for last in (False, True)]


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("case, last", FORMS, ids=[f"{c}-{'last-op' if l else 'between-convs'}" for c, l in FORMS])
def test_matches_onnxruntime(case, last, quant):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(case, last), feeds, quant_format=quant[0], activation=quant[1])
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32),
                               ["RESIZE_NEAREST_NEIGHBOR", "RESIZE_BILINEAR"], exact=True)


@pytest.mark.parametrize("mode", ["asymmetric", "half_pixel", "pytorch_half_pixel", "align_corners"])
@pytest.mark.parametrize("nearest", ["round_prefer_ceil", "round_prefer_floor", "floor", "ceil"])
def test_nearest_source_pixels_match_onnxruntime(mode, nearest):
    """The source pixel of every output position, for every size pair up to 40 (sizes given, so the scale
    is float32 out/in): near-ties such as 7 -> 4 (2 / 0.5714286 = 3.4999998) are where rules part."""
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest",
                            coordinate_transformation_mode=mode, nearest_mode=nearest)
    graph = helper.make_graph([node], "resize", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, "n"]),
                                                 helper.make_tensor_value_info("sizes", TensorProto.INT64, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, "m"])])
    session = onnxruntime.InferenceSession(
        helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]).SerializeToString(),
        providers=["CPUExecutionProvider"])
    for size_in in range(1, 41):
        iota = np.arange(size_in, dtype=np.float32)[None]
        for size_out in range(1, 41):
            expected = session.run(None, {"x": iota, "sizes": np.array([1, size_out], np.int64)})[0][0]
            scale = float32(float32(size_out) / float32(size_in))
            ours = onnx_nearest_axis(size_in, size_out, scale, mode, nearest)[0::3].tolist()
            assert ours == expected.astype(int).tolist(), (size_in, size_out)


N = helper.make_node
# what feeds the Resize (QOperator form), and whether onnxruntime then runs it in NHWC as the model's last
# op / with a convolution after it (read from the graph onnxruntime 1.32 optimizes, 2026-12-03)
LAYOUT_CASES = {
    "conv": ([N("Conv", ["x", "w1"], ["a"])], (True, True)),
    "conv-maxpool": ([N("Conv", ["x", "w1"], ["c"]), N("MaxPool", ["c"], ["a"], kernel_shape=[2, 2], pads=[0, 0, 1, 1])],
                     (True, True)),
    "conv-globalpool": ([N("Conv", ["x", "w1"], ["c"]), N("GlobalAveragePool", ["c"], ["a"])], (True, True)),
    "conv-mul-conv": ([N("Conv", ["x", "w1"], ["c"]), N("Conv", ["x", "w2"], ["d"]), N("Mul", ["c", "d"], ["a"])],
                      (True, True)),
    "conv-concat-conv": ([N("Conv", ["x", "w1"], ["c"]), N("Conv", ["x", "w2"], ["d"]),
                          N("Concat", ["c", "d"], ["a"], axis=1)], (True, True)),
    "conv-add-input": ([N("Conv", ["x", "w1"], ["c"]), N("Add", ["c", "x"], ["a"])], (False, False)),
    "conv-mul-constant": ([N("Conv", ["x", "w1"], ["c"]), N("Mul", ["k", "c"], ["a"])], (False, True)),
    "conv-add-constant": ([N("Conv", ["x", "w1"], ["c"]), N("Add", ["c", "k"], ["a"])], (False, True)),
    "input-add-input": ([N("Add", ["x", "x"], ["a"])], (False, False)),
    "conv-sigmoid": ([N("Conv", ["x", "w1"], ["c"]), N("Sigmoid", ["c"], ["a"])], (False, True)),
    # Pad: difftest s20261224-c184 (reflect), constant too
    "conv-pad-reflect": ([N("Conv", ["x", "w1"], ["c"]), N("Pad", ["c", "pads"], ["a"], mode="reflect")], (False, True)),
    "conv-pad-constant": ([N("Conv", ["x", "w1"], ["c"]), N("Pad", ["c", "pads"], ["a"])], (False, True)),
    # float ops QOperator leaves between DequantizeLinear and QuantizeLinear (difftest s20261222-c582)
    "conv-hardswish-concat": ([N("Conv", ["x", "w1"], ["c"]), N("HardSwish", ["c"], ["h"]),
                               N("Concat", ["h", "h"], ["a"], axis=1)], (False, True)),
    "conv-averagepool": ([N("Conv", ["x", "w1"], ["c"]),
                          N("AveragePool", ["c"], ["a"], kernel_shape=[2, 2], pads=[0, 0, 1, 1])], (False, True)),
    "conv-nearest": ([N("Conv", ["x", "w1"], ["c"]), N("Resize", ["c", "roi", "", "same"], ["a"], mode="nearest")],
                     (False, True)),
    # a Slice (in float between DequantizeLinear and QuantizeLinear in QOperator form) moves the transpose as a
    # Pad does: where a convolution of the sliced tensor (here one whose result nothing reads) absorbs it,
    # the Resize beside that convolution runs in NHWC too (difftest s20261227-c12)
    "conv-slice-branch": ([N("Conv", ["x", "w1"], ["c"]), N("Slice", ["c", "starts", "ends", "axes"], ["a"]),
                           N("Conv", ["a", "w2"], ["unread"])], (True, True)),
    "conv-elu-concat": ([N("Conv", ["x", "w1"], ["c"]), N("Elu", ["c"], ["h"]),
                         N("Concat", ["h", "h"], ["a"], axis=1)], (False, True)),
    # a Split moves the transpose where one of its outputs leads on to another (difftest s20261244-c313)
    "conv-split-swap": ([N("Conv", ["x", "w1"], ["c"]), N("Split", ["c", "halves"], ["s1", "s2"], axis=1),
                         N("Concat", ["s2", "s1"], ["a"], axis=1)], (False, True)),
}


# uint8 activations, except through QLinearAdd: qnnweb adds in the uint8 domain as onnxruntime does on the
# uint8 model, while the reference runs the model's int8 twin (tools/qnnweb_dev/reference/onnxruntime_session.py),
# whose QLinearAdd rounds a near-tie the other way now and then (seen: 1 element of 240)
LAYOUT_FORMS = [(case, activation) for case in sorted(LAYOUT_CASES) for activation in ("QUInt8", "QInt8")
                if activation == "QInt8" or "add" not in case]


@pytest.mark.parametrize("conv_after", [False, True], ids=["last-op", "conv-after"])
@pytest.mark.parametrize("case, activation", LAYOUT_FORMS, ids=["-".join(f) for f in LAYOUT_FORMS])
def test_qoperator_linear_in_either_layout(case, conv_after, activation):
    nodes, nhwc = LAYOUT_CASES[case]
    channels = 2 * C if "concat" in case else C
    init = {"w1": RNG.normal(0, 0.4, (C, C, 1, 1)).astype(np.float32),
            "w2": RNG.normal(0, 0.4, (C, C, 1, 1)).astype(np.float32),
            "w3": RNG.normal(0, 0.4, (4, channels, 1, 1)).astype(np.float32),
            "k": RNG.normal(0, 1, (C, 1, 1)).astype(np.float32),
            "roi": np.zeros(0, np.float32), "sizes": np.array([1, channels, 11, 13], np.int64),
            "same": np.array([1, C, H, W], np.int64), "pads": np.array([0, 0, 1, 0, 0, 0, 0, 2], np.int64),
            "starts": np.array([1], np.int64), "ends": np.array([H], np.int64), "axes": np.array([2], np.int64),
            "halves": np.array([C // 2, C // 2], np.int64)}
    nodes = nodes + [N("Resize", ["a", "roi", "", "sizes"], ["r" if conv_after else "y"], mode="linear",
                       coordinate_transformation_mode="asymmetric")]
    if conv_after:
        nodes.append(N("Conv", ["r", "w3"], ["y"]))
    used = {name for node in nodes for name in node.input}
    out = [1, 4 if conv_after else channels, 11, 13]
    fm = float_model(nodes, [("x", [1, C, H, W])], [("y", out)], {k: v for k, v in init.items() if k in used},
                     opset=14 if "hardswish" in case else 13)
    feeds = [{"x": RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(fm, feeds, quant_format="QOperator", activation=activation)
    graph = qnnweb.load(data)._graph
    arithmetic = [op.options["onnx_arithmetic"] for op in graph.ops if op.type == "RESIZE_BILINEAR"]
    assert arithmetic == ["q10" if nhwc[conv_after] else "float_truncate"]
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32), ["RESIZE_BILINEAR"],
                               exact=True)


# what follows Conv -> Mul by a constant -> linear Resize, and whether onnxruntime 1.32 then holds the Mul
# and the Resize in NHWC: only where the transpose vanishes further on, into a convolution or a Transpose
# node (read from the graphs it optimizes, 2026-12-03; difftest s20261208-c1060 and -c1114)
TAILS = {
    "clip-transpose": ([N("Clip", ["r", "lo", "hi"], ["t"]), N("Transpose", ["t"], ["y"], perm=[0, 1, 3, 2])], True),
    "tanh-transpose": ([N("Tanh", ["r"], ["t"]), N("Transpose", ["t"], ["y"], perm=[0, 1, 3, 2])], True),
    "maxpool-transpose": ([N("MaxPool", ["r"], ["t"], kernel_shape=[2, 2]), N("Transpose", ["t"], ["y"], perm=[0, 1, 3, 2])],
                          True),
    "sigmoid-conv": ([N("Sigmoid", ["r"], ["t"]), N("Conv", ["t", "w3"], ["y"])], True),
    "flatten": ([N("Flatten", ["r"], ["y"], axis=1)], False),
    "softmax": ([N("Softmax", ["r"], ["y"], axis=1)], False),
    "globalpool-flatten": ([N("GlobalAveragePool", ["r"], ["t"]), N("Flatten", ["t"], ["y"], axis=1)], False),
    # a path to a convolution through ops onnxruntime has handlers for, even one it then declines to push the
    # transpose through (a float Gather on the channels: difftest s20261242-c5); a Reshape ends the path
    "gather-conv": ([N("Gather", ["r", "channels"], ["t"], axis=1), N("Conv", ["t", "w3"], ["y"])], True),
    "softmax-conv": ([N("Softmax", ["r"], ["t"], axis=1), N("Conv", ["t", "w3"], ["y"])], True),
    "reshape-conv": ([N("Reshape", ["r", "shape"], ["t"]), N("Conv", ["t", "w3"], ["y"])], False),
}


@pytest.mark.parametrize("tail", sorted(TAILS))
def test_qoperator_linear_after_a_constant_mul(tail):
    nodes = [N("Conv", ["x", "w1"], ["c"]), N("Mul", ["c", "k"], ["a"]),
             N("Resize", ["a", "roi", "", "sizes"], ["r"], mode="linear", coordinate_transformation_mode="asymmetric"),
             *TAILS[tail][0]]
    init = {"w1": RNG.normal(0, 0.4, (C, C, 1, 1)).astype(np.float32), "k": RNG.normal(0, 1, (C, 1, 1)).astype(np.float32),
            "roi": np.zeros(0, np.float32), "sizes": np.array([1, C, 11, 13], np.int64),
            "lo": np.float32(-0.5), "hi": np.float32(0.5), "w3": RNG.normal(0, 0.4, (4, C, 1, 1)).astype(np.float32),
            "channels": np.array([-3, 1, -3, 0, 7, 2, 2, 5], np.int64), "shape": np.array([1, C, 11, 13], np.int64)}
    used = {name for node in nodes for name in node.input}
    out = {"clip-transpose": [1, C, 13, 11], "tanh-transpose": [1, C, 13, 11], "maxpool-transpose": [1, C, 12, 10],
           "sigmoid-conv": [1, 4, 11, 13], "flatten": [1, C * 11 * 13], "softmax": [1, C, 11, 13],
           "globalpool-flatten": [1, C], "gather-conv": [1, 4, 11, 13], "softmax-conv": [1, 4, 11, 13],
           "reshape-conv": [1, 4, 11, 13]}[tail]
    fm = float_model(nodes, [("x", [1, C, H, W])], [("y", out)], {k: v for k, v in init.items() if k in used})
    feeds = [{"x": RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(fm, feeds, quant_format="QOperator", activation="QInt8")
    graph = qnnweb.load(data)._graph
    arithmetic = [op.options["onnx_arithmetic"] for op in graph.ops if op.type == "RESIZE_BILINEAR"]
    assert arithmetic == ["q10" if TAILS[tail][1] else "float_truncate"]
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32), ["RESIZE_BILINEAR"],
                               exact=True)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_qoperator_linear_after_a_linear_resize_in_nhwc(activation):
    """onnxruntime moves the transpose through an int8 linear Resize whatever follows (its NHWC kernel is
    the faster one): Conv -> Resize -> Resize -> Softmax as the model's end runs both Resizes in NHWC,
    though nothing after them absorbs the transpose."""
    nodes = [N("Conv", ["x", "w1"], ["c"]),
             N("Resize", ["c", "roi", "", "sizes1"], ["r1"], mode="linear", coordinate_transformation_mode="asymmetric"),
             N("Resize", ["r1", "roi", "", "sizes2"], ["r2"], mode="linear", coordinate_transformation_mode="half_pixel"),
             N("Softmax", ["r2"], ["y"], axis=1)]
    init = {"w1": RNG.normal(0, 0.4, (C, C, 1, 1)).astype(np.float32), "roi": np.zeros(0, np.float32),
            "sizes1": np.array([1, C, 9, 11], np.int64), "sizes2": np.array([1, C, 13, 14], np.int64)}
    fm = float_model(nodes, [("x", [1, C, H, W])], [("y", [1, C, 13, 14])], init)
    feeds = [{"x": RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(fm, feeds, quant_format="QOperator", activation=activation)
    graph = qnnweb.load(data)._graph
    assert [op.options["onnx_arithmetic"] for op in graph.ops if op.type == "RESIZE_BILINEAR"] == ["q10", "q10"]
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32), ["RESIZE_BILINEAR"],
                               exact=True)


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
def test_linear_after_a_float_gather_quantized_anew(quant):
    """QOperator leaves Gather in float, and the Resize after it too: onnxruntime resizes the dequantized
    values and quantizes them with the output's own parameters (difftest s20261205-c462)."""
    nodes = [N("Conv", ["x", "w1"], ["c"]), N("Gather", ["c", "idx"], ["g"], axis=1),
             N("Resize", ["g", "roi", "", "sizes"], ["r"], mode="linear", coordinate_transformation_mode="asymmetric"),
             N("Conv", ["r", "w3"], ["y"])]
    init = {"w1": RNG.normal(0, 0.4, (C, C, 1, 1)).astype(np.float32), "idx": np.array([3, 0, 5, 1, 6], np.int64),
            "roi": np.zeros(0, np.float32), "sizes": np.array([1, 5, 11, 13], np.int64),
            "w3": RNG.normal(0, 0.4, (4, 5, 1, 1)).astype(np.float32)}
    fm = float_model(nodes, [("x", [1, C, H, W])], [("y", [1, 4, 11, 13])], init)
    feeds = [{"x": RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(fm, feeds, quant_format=quant[0], activation=quant[1])
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32), ["RESIZE_BILINEAR"],
                               exact=True)


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("after", ["conv", "sigmoid-last"])
def test_linear_of_the_width_alone(quant, after):
    """Height kept (scales [1, 1, s, 1] once onnxruntime holds the tensor in NHWC, between convolutions):
    onnxruntime's NCHW kernel then takes the NHWC tensor for NCHW, and qnnweb follows it; as the model's
    end (a Sigmoid after it) the tensor stays NCHW (difftest s20261206-c1706)."""
    nodes = [N("Conv", ["x", "w1"], ["c"]),
             N("Resize", ["c", "roi", "", "sizes"], ["r"], mode="linear", coordinate_transformation_mode="asymmetric")]
    init = {"w1": RNG.normal(0, 0.4, (C, C, 1, 1)).astype(np.float32), "roi": np.zeros(0, np.float32),
            "sizes": np.array([1, C, H, 2 * W + 1], np.int64)}
    if after == "conv":
        nodes.append(N("Conv", ["r", "w3"], ["y"]))
        init["w3"] = RNG.normal(0, 0.4, (4, C, 1, 1)).astype(np.float32)
    else:
        nodes.append(N("Sigmoid", ["r"], ["y"]))
    out = [1, 4 if after == "conv" else C, H, 2 * W + 1]
    fm = float_model(nodes, [("x", [1, C, H, W])], [("y", out)], init)
    feeds = [{"x": RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(fm, feeds, quant_format=quant[0], activation=quant[1])
    for _ in range(3):
        assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32), ["RESIZE_BILINEAR"],
                                   exact=True)


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_float_linear_of_the_width_alone_before_a_reshape(activation):
    """QOperator with ForceQuantizeNoInputCheck leaves a Resize before a Reshape in float: its
    DequantizeLinear takes onnxruntime's NHWC transpose only where the path after it leads to another,
    and the Reshape ends that path, so the Resize runs in NCHW on the dequantized values, not with the
    channels taken for the width (difftest s20261241-c8117: one element of 24 one quantum off)."""
    nodes = [N("Conv", ["x", "w1"], ["c"]),
             N("Resize", ["c", "roi", "", "sizes"], ["r"], mode="linear", coordinate_transformation_mode="align_corners"),
             N("Reshape", ["r", "shape"], ["f"]), N("Gemm", ["f", "w2"], ["y"], transB=1)]
    init = {"w1": RNG.normal(0, 0.4, (C, C, 1, 1)).astype(np.float32), "roi": np.zeros(0, np.float32),
            "sizes": np.array([1, C, H, 2 * W - 1], np.int64), "shape": np.array([1, -1], np.int64),
            "w2": RNG.normal(0, 0.1, (5, C * H * (2 * W - 1))).astype(np.float32)}
    fm = float_model(nodes, [("x", [1, C, H, W])], [("y", [1, 5])], init)
    feeds = [{"x": RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(fm, feeds, quant_format="QOperator", activation=activation, ForceQuantizeNoInputCheck=True)
    graph = qnnweb.load(data)._graph
    resizes = [op for op in graph.ops if op.type == "RESIZE_BILINEAR"]
    assert [op.options["onnx_arithmetic"] for op in resizes] == ["float"]
    assert list(graph.tensors[resizes[0].inputs[0]].shape) == [1, H, W, C]   # not [H, W, C, 1]: channels stay channels
    for _ in range(3):
        assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32), ["RESIZE_BILINEAR"],
                                   exact=True)


@pytest.mark.parametrize("tail", ["none", "transpose"])
@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_float_resize_as_the_models_output(activation, tail):
    """Conv -> Slice -> linear Resize as the model's last op (then, at most, a Transpose): QOperator leaves
    the Slice in float, so onnxruntime resizes the dequantized values in float32 and outputs that sum; it
    was quantized with the input's parameters before the output's dequantize (within one quantum, ~96 %
    of the elements not bit-exact). Now the float32 sum is the output (resize arithmetic 4): bit-exact."""
    init = {"w1": RNG.normal(0, 0.4, (C, C, 1, 1)).astype(np.float32), "roi": np.zeros(0, np.float32),
            "sizes": np.array([1, C, 11, 13], np.int64), "starts": np.array([1], np.int64),
            "ends": np.array([H], np.int64), "axes": np.array([2], np.int64)}
    nodes = [N("Conv", ["x", "w1"], ["c"]), N("Slice", ["c", "starts", "ends", "axes"], ["a"]),
             N("Resize", ["a", "roi", "", "sizes"], ["r" if tail == "transpose" else "y"], mode="linear",
               coordinate_transformation_mode="half_pixel")]
    out = [1, C, 11, 13]
    if tail == "transpose":
        nodes.append(N("Transpose", ["r"], ["y"], perm=[0, 2, 3, 1]))
        out = [1, 11, 13, C]
    fm = float_model(nodes, [("x", [1, C, H, W])], [("y", out)], init)
    feeds = [{"x": RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(fm, feeds, quant_format="QOperator", activation=activation)
    graph = qnnweb.load(data)._graph
    (resize,) = [op for op in graph.ops if op.type == "RESIZE_BILINEAR"]
    assert graph.tensors[resize.outputs[0]].dtype == "float32"
    with pytest.raises(qnnweb.ModelError, match="RESIZE_BILINEAR: a float32 result of int8 values"):
        export_tflite(graph)   # TFLite has no such form (its RESIZE keeps the type)
    reference = ReferenceSession(data)
    for _ in range(4):
        x = RNG.uniform(-1, 1, (1, C, H, W)).astype(np.float32)
        (theirs,) = reference.run({"x": x})
        for variant in qnnweb.VARIANTS:
            (ours,) = qnnweb.load(data, variant=variant).run(x)
            np.testing.assert_array_equal(ours, theirs, err_msg=variant)
