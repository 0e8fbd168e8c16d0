"""ONNX Slice (steps of either sign, torch's INT64_MAX ends, opset 9 attributes), Split (sizes as an
input, equal parts), Gather (constant indices: a scalar as torch's x[:, 3], 1-D lists with negative
entries) and Pad (reflect, edge, constant) as onnxruntime's quantize_static leaves them, in every mode: between convolutions and as a
model's last ops, and a Relu / Clip after a Slice or Gather. Within one quantum of onnxruntime in every
variant, and bit-exact where the selected values are the model's output (they only move). ShuffleNet's
channel shuffle (Reshape, Transpose, Reshape) between convolutions: one strided copy, bit-exact."""

import numpy as np
import pytest
import qnnweb
from onnx import helper, numpy_helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb.compiled import CompiledModel
from qnnweb.exporters import export_tflite
from qnnweb.importers import import_model
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

MODES = [("QDQ", "QUInt8"), ("QDQ", "QInt8"), ("QOperator", "QUInt8"), ("QOperator", "QInt8")]
RNG = np.random.default_rng(33)
H, W, C = 6, 8, 16
INT64_MAX = (1 << 63) - 1


def ints(values):
    return np.array(values, np.int64)


# name -> (nodes after the first Conv "c" [1,16,6,8], their initializers, the model's outputs with shapes)
CASES = {
    "slice-channels": ([helper.make_node("Slice", ["c", "s0", "e0", "a0"], ["y"])],
                       {"s0": ints([4]), "e0": ints([12]), "a0": ints([1])}, [("y", [1, 8, H, W])]),
    "slice-int64-max-end": ([helper.make_node("Slice", ["c", "s0", "e0", "a0"], ["y"])],
                            {"s0": ints([10]), "e0": ints([INT64_MAX]), "a0": ints([1])}, [("y", [1, 6, H, W])]),
    "slice-reversed-strided": ([helper.make_node("Slice", ["c", "s0", "e0", "a0", "p0"], ["y"])],
                               {"s0": ints([-1, 1]), "e0": ints([-INT64_MAX, 8]), "a0": ints([2, -1]),
                                "p0": ints([-2, 3])}, [("y", [1, C, 3, 3])]),
    "slice-then-conv": ([helper.make_node("Slice", ["c", "s0", "e0", "a0"], ["m"]),
                         helper.make_node("Conv", ["m", "w2"], ["y"])],
                        {"s0": ints([2, 8]), "e0": ints([6, 16]), "a0": ints([2, 1]),
                         "w2": RNG.normal(0, 0.3, (4, 8, 1, 1)).astype(np.float32)}, [("y", [1, 4, 4, W])]),
    "split-sizes": ([helper.make_node("Split", ["c", "sp"], ["y", "z"], axis=1)],
                    {"sp": ints([4, 12])}, [("y", [1, 4, H, W]), ("z", [1, 12, H, W])]),
    "split-equal-then-convs": ([helper.make_node("Split", ["c"], ["a", "b"], axis=1),
                                helper.make_node("Conv", ["a", "w2"], ["y"]),
                                helper.make_node("Conv", ["b", "w3"], ["z"])],
                               {"w2": RNG.normal(0, 0.3, (4, 8, 1, 1)).astype(np.float32),
                                "w3": RNG.normal(0, 0.3, (4, 8, 1, 1)).astype(np.float32)},
                               [("y", [1, 4, H, W]), ("z", [1, 4, H, W])]),
    "pad-reflect": ([helper.make_node("Pad", ["c", "pads"], ["y"], mode="reflect")],
                    {"pads": ints([0, 0, 2, 1, 0, 0, 1, 3])}, [("y", [1, C, H + 3, W + 4])]),
    "pad-edge": ([helper.make_node("Pad", ["c", "pads"], ["y"], mode="edge")],
                 {"pads": ints([0, 2, 1, 1, 0, 1, 0, 2])}, [("y", [1, C + 3, H + 1, W + 3])]),
    "pad-constant-then-conv": ([helper.make_node("Pad", ["c", "pads"], ["m"]),
                                helper.make_node("Conv", ["m", "w2"], ["y"])],
                               {"pads": ints([0, 0, 1, 2, 0, 0, 3, 0]),
                                "w2": RNG.normal(0, 0.3, (4, C, 1, 1)).astype(np.float32)},
                               [("y", [1, 4, H + 4, W + 2])]),
    "gather-scalar": ([helper.make_node("Gather", ["c", "i0"], ["y"], axis=1)], {"i0": np.array(3, np.int64)},
                      [("y", [1, H, W])]),
    "gather-list": ([helper.make_node("Gather", ["c", "i0"], ["m"], axis=1),
                     helper.make_node("Conv", ["m", "w2"], ["y"])],
                    {"i0": ints([5, -1, 2, 2]), "w2": RNG.normal(0, 0.3, (4, 4, 1, 1)).astype(np.float32)},
                    [("y", [1, 4, H, W])]),
}


def model(case):
    nodes, init, outputs = CASES[case]
    init = dict(init, w1=RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32))
    return float_model([helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]), *nodes],
                       [("x", [1, 3, H, W])], outputs, init)


@pytest.mark.parametrize("quant", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("case", sorted(CASES))
def test_matches_onnxruntime(case, quant):
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(8)]
    data = quantized(model(case), feeds, quant_format=quant[0], activation=quant[1])
    last = not any(n.op_type == "Conv" for n in CASES[case][0])   # then the selected values are onnxruntime's
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32),
                               ["STRIDED_SLICE", "SLICE", "GATHER", "PADV2", "MIRROR_PAD"], exact=last)


def test_opset9_slice_attributes():
    nodes = [helper.make_node("Conv", ["x", "w1"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Slice", ["c"], ["y"], starts=[0, 1], ends=[3, 100], axes=[1, 3])]
    float_graph = float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 3, H, W - 1])],
                              {"w1": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32)}, opset=9)
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(4)]
    data = quantized(float_graph, feeds, quant_format="QOperator", activation="QInt8")
    x = RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)
    np.testing.assert_array_equal(qnnweb.load(data).run(x)[0], ReferenceSession(data).run({"x": x})[0])


def test_gather_index_outside_is_named():
    import onnx
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(4)]
    m = onnx.load_from_string(quantized(model("gather-scalar"), feeds, activation="QInt8"))
    index = next(i for i in m.graph.initializer if i.name == "i0")
    index.CopyFrom(onnx.numpy_helper.from_array(np.array(C, np.int64), "i0"))
    with pytest.raises(qnnweb.UnsupportedModelError, match="outside axis 1"):
        qnnweb.load(m.SerializeToString())


def moved_then_activated(op, activation):
    """Conv -> Slice / Gather of channels, or a Transpose (H and W swapped; "PRelu-Transpose": after a PRelu
    with float slopes) -> Relu / Clip(0, 6) -> Conv: the quantizer's QOperator form leaves the Relu / Clip
    in float between DequantizeLinear and QuantizeLinear after the int8 move."""
    init = {"w": RNG.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32)}
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1])]
    channels, out_hw = 5, [H, W]
    if op == "Gather":
        init["i"] = ints([3, 1, 5, 12, 9])
        nodes.append(helper.make_node("Gather", ["c", "i"], ["m"], axis=1))
    elif op == "Slice":
        init.update(s=ints([2]), e=ints([7]), a=ints([1]))
        nodes.append(helper.make_node("Slice", ["c", "s", "e", "a"], ["m"]))
    else:
        channels, out_hw, source = C, [W, H], "c"
        if op == "PRelu-Transpose":
            init["slope"] = RNG.normal(0, 0.5, (C, 1, 1)).astype(np.float32)
            nodes.append(helper.make_node("PRelu", ["c", "slope"], ["p"]))
            source = "p"
        nodes.append(helper.make_node("Transpose", [source], ["m"], perm=[0, 1, 3, 2]))
    if activation == "Relu":
        nodes.append(helper.make_node("Relu", ["m"], ["r"]))
    else:
        init.update(lo=np.array(0.0, np.float32), hi=np.array(6.0, np.float32))
        nodes.append(helper.make_node("Clip", ["m", "lo", "hi"], ["r"]))
    init["w2"] = RNG.normal(0, 0.5, (4, channels, 1, 1)).astype(np.float32)
    nodes.append(helper.make_node("Conv", ["r", "w2"], ["y"]))
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 4, *out_hw])], init)


@pytest.mark.parametrize("symmetric", [False, True], ids=["asymmetric", "symmetric"])
@pytest.mark.parametrize("mode", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("activation", ["Relu", "Clip"])
@pytest.mark.parametrize("op", ["Gather", "Slice", "Transpose", "PRelu-Transpose"])
def test_a_relu_or_clip_after_the_move(op, activation, mode, symmetric):
    """Was refused ("a RELU after Gather is not supported", 3 of 2,000 difftest cases): the float Relu /
    Clip now joins the requantizing table after the int8 move (max / min in float32, as onnxruntime),
    bit-exact in every variant; TFLite export refuses the requantization with an activation. After a
    Transpose of a value the quantizer left in float (a PRelu's result: its float slopes stay float) the
    Relu / Clip was dropped, so negative values passed (difftest s20261226-c744: up to 39 quanta); and a
    QDQ Transpose quantized again with the Relu's parameters was refused."""
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(6)]
    # symmetric activations: the Relu / Clip's output quantization holds negative values, so a clamp left
    # out shows (with [0, max] ranges the QuantizeLinear's own saturation hides it); asymmetric: the QDQ
    # Transpose's output is quantized again with the Relu / Clip's range
    data = quantized(moved_then_activated(op, activation), feeds, quant_format=mode[0], activation=mode[1],
                     ActivationSymmetric=symmetric)
    x = RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)
    (theirs,) = ReferenceSession(data).run({"x": x})
    for variant in qnnweb.VARIANTS:
        (ours,) = qnnweb.load(data, variant=variant).run(x)
        np.testing.assert_array_equal(ours, theirs, err_msg=variant)
    if mode[0] == "QOperator" and op in ("Gather", "Slice"):   # the form whose Relu / Clip joins the requantization
        with pytest.raises(qnnweb.ModelError, match=r"QUANTIZE: a requantization with a RELU6? has no TFLite form"):
            export_tflite(import_model(data))


def channel_shuffle(groups, per_group):
    """Conv -> ShuffleNet's channel shuffle as torch exports it (Reshape [1, g, C/g, H, W], Transpose
    (0, 2, 1, 3, 4), Reshape [1, -1, H, W], the shapes Constant nodes) -> Conv."""
    channels = groups * per_group

    def shape(name, values):
        return helper.make_node("Constant", [], [name], value=numpy_helper.from_array(ints(values), name))

    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             shape("split", [1, groups, per_group, H, W]), helper.make_node("Reshape", ["c", "split"], ["s"]),
             helper.make_node("Transpose", ["s"], ["t"], perm=[0, 2, 1, 3, 4]),
             shape("merged", [1, -1, H, W]), helper.make_node("Reshape", ["t", "merged"], ["m"]),
             helper.make_node("Conv", ["m", "w2"], ["y"])]
    init = {"w": RNG.normal(0, 0.5, (channels, 3, 3, 3)).astype(np.float32),
            "w2": RNG.normal(0, 0.5, (4, channels, 1, 1)).astype(np.float32)}
    return float_model(nodes, [("x", [1, 3, H, W])], [("y", [1, 4, H, W])], init)


@pytest.mark.parametrize("mode", MODES, ids=["-".join(m) for m in MODES])
@pytest.mark.parametrize("groups, per_group", [(2, 4), (3, 4), (4, 3), (3, 5)])
def test_channel_shuffle_is_one_strided_copy(groups, per_group, mode):
    """As TFLite's (test_tflite_slicing.py): on the NHWC tensor between the convolutions the shuffle
    permutes the channels, one strided copy (it took three: to NCHW, the 5-D transpose, back to NHWC);
    C/g odd (3, 5) included. Bit-exact with onnxruntime in every variant."""
    feeds = [{"x": RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32)} for _ in range(6)]
    data = quantized(channel_shuffle(groups, per_group), feeds, quant_format=mode[0], activation=mode[1])
    kinds = [step[0] for step in CompiledModel.from_bytes(qnnweb.compile(data)).steps]
    first, second = [i for i, kind in enumerate(kinds) if kind == "conv2d"]
    assert kinds[first + 1:second] == ["copy_strided"], kinds
    assert_matches_onnxruntime(data, RNG.uniform(-1, 1, (1, 3, H, W)).astype(np.float32), ["TRANSPOSE"], exact=True)
