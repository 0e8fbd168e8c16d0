"""onnxruntime.quantization.quantize_dynamic's models (transformers.js's "q8" form): float32 in, each MatMul's
input quantized at run time by DynamicQuantizeLinear, MatMulInteger + Cast + Mul + Add (or, in a model
onnxruntime saved optimized, com.microsoft's DynamicQuantizeMatMul / MatMulIntegerToFloat), float32 out:
int8 and uint8 weights, per tensor and per channel, reduce_range, [batch, dim] and [1, seq, dim] inputs, every
variant.

qnnweb sums MatMulInteger exactly, as the operator is defined. onnxruntime does too on VNNI, ARM and
WebAssembly, but on x86 AVX2 without VNNI its uint8 x int8 kernel saturates pairs of products to int16
(onnxruntime_saturates_pairs asks this machine's, once). So every model runs through the numpy reference twice
(qnnweb_dev.reference.dynamic.run_model): qnnweb is bit-exact with its exact sums, and onnxruntime with its sums
as this machine's onnxruntime computes them; where no pair lies beyond int16 (reduce_range's 7-bit weights,
uint8 weights, small inputs) or onnxruntime sums exactly, qnnweb is bit-exact with onnxruntime itself, and
where pairs saturate, onnxruntime differs from qnnweb only by them. The integer parts of the reference (also
what the kernel tests use, tests/kernels/test_dynamic_matmul.py) are checked against onnxruntime's here."""

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import QuantType, quantize_dynamic

import qnnweb
from qnnweb_dev.onnx_quantized import float_model
from qnnweb_dev.reference import dynamic as ref
from qnnweb_dev.reference.dynamic_bar import onnxruntime_saturates_pairs
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession, session_options


def mlp(input_shape, widths, seed=0, activation=None):
    """MatMul + Add layers (torch.onnx's Linear on a 3-D input; also used here on 2-D), ``activation``
    (an ONNX op type) between them, float32."""
    rng = np.random.default_rng(seed)
    nodes, initializers, name = [], {}, "x"
    for i, (k, n) in enumerate(zip(widths, widths[1:])):
        initializers[f"w{i}"] = (rng.standard_normal((k, n)) * 0.3).astype(np.float32)
        initializers[f"b{i}"] = (rng.standard_normal(n) * 0.1).astype(np.float32)
        nodes += [helper.make_node("MatMul", [name, f"w{i}"], [f"m{i}"]),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"])]
        name = f"a{i}"
        if activation and i < len(widths) - 2:
            nodes.append(helper.make_node(activation, [name], [f"r{i}"]))
            name = f"r{i}"
    nodes.append(helper.make_node("Identity", [name], ["y"]))
    return float_model(nodes, [("x", input_shape)], [("y", list(input_shape[:-1]) + [widths[-1]])], initializers)


def dynamic(model, tmp_path, **options):
    onnx.save(model, tmp_path / "float.onnx")
    quantize_dynamic(str(tmp_path / "float.onnx"), str(tmp_path / "dynamic.onnx"),
                     extra_options={"MatMulConstBOnly": True}, **options)
    return (tmp_path / "dynamic.onnx").read_bytes()


def assert_matches(data, inputs):
    """quantize_dynamic's MatMul / Conv models (DYNAMIC_QUANTIZE and its products): qnnweb bit-exact on every variant with the reference's exact sums and, where no pair of products lies
    beyond int16 or onnxruntime sums exactly, with onnxruntime; onnxruntime bit-exact with the reference as it
    computes here (its pairs saturated where it saturates them). Returns whether any input's pairs lay beyond
    int16 (where onnxruntime on x86 AVX2 without VNNI differs from qnnweb)."""
    model = onnx.load_from_string(data)
    session = ReferenceSession(data)
    loaded = {variant: qnnweb.load(data, variant=variant) for variant in qnnweb.VARIANTS}
    assert all({"DYNAMIC_QUANTIZE"} < {o.type for o in m._graph.ops} for m in loaded.values())
    any_beyond = False
    for x in inputs:
        exact, beyond = ref.run_model(model, {"x": x})
        as_onnxruntime = ref.run_model(model, {"x": x}, saturate_pairs=onnxruntime_saturates_pairs())[0]
        theirs = session.run({"x": x})
        for got, want in zip(theirs, as_onnxruntime, strict=True):
            np.testing.assert_array_equal(got, want, err_msg="onnxruntime and the reference")
        for variant, qnnweb_model in loaded.items():
            for ours, want, onnxruntime_output in zip(qnnweb_model.run(x), exact, theirs, strict=True):
                assert ours.dtype == np.float32 and ours.shape == want.shape
                np.testing.assert_array_equal(ours, want, err_msg=variant)
                if not beyond or not onnxruntime_saturates_pairs():
                    np.testing.assert_array_equal(ours, onnxruntime_output, err_msg=f"{variant} and onnxruntime")
        any_beyond |= beyond
    return any_beyond


def inputs_for(shape, seed=1):
    rng = np.random.default_rng(seed)
    scales = [0.01, 1.0, 3.0, 100.0]
    xs = [(rng.standard_normal(shape) * s + offset).astype(np.float32) for s in scales for offset in (0.0, 2.0)]
    return xs + [np.abs(xs[2]), -np.abs(xs[2]), np.zeros(shape, np.float32)]


@pytest.mark.parametrize("weight_type", [QuantType.QInt8, QuantType.QUInt8])
@pytest.mark.parametrize("per_channel", [False, True])
@pytest.mark.parametrize("reduce_range", [False, True])
def test_linear_layers_match_onnxruntime(tmp_path, weight_type, per_channel, reduce_range):
    """reduce_range's 7-bit weights and uint8 weights never make a pair of products beyond int16 (onnxruntime
    computes them exactly on every machine); full-range int8 weights do, on these inputs."""
    data = dynamic(mlp([1, 7, 48], [48, 96, 40, 10]), tmp_path, weight_type=weight_type, per_channel=per_channel,
                   reduce_range=reduce_range)
    beyond = assert_matches(data, inputs_for([1, 7, 48]))
    assert beyond == (weight_type == QuantType.QInt8 and not reduce_range)


@pytest.mark.parametrize("weight_type", [QuantType.QInt8, QuantType.QUInt8])
def test_batch_of_vectors_matches_onnxruntime(tmp_path, weight_type):
    """[batch, dim] input, an odd depth (the last pair of the AVX2 kernel half empty)."""
    data = dynamic(mlp([5, 33], [33, 17, 3], seed=2), tmp_path, weight_type=weight_type, per_channel=True)
    assert_matches(data, inputs_for([5, 33], seed=3))


def test_large_activations_sum_exactly(tmp_path):
    """Weights at +-127 and inputs whose quantized values reach 255: pairs of products beyond int16, which
    qnnweb sums exactly and onnxruntime on x86 AVX2 without VNNI saturates (its outputs then differ from
    qnnweb's; elsewhere they are the same)."""
    w = np.where(np.random.default_rng(4).random((64, 8)) < 0.5, 1.0, -1.0).astype(np.float32)
    model = float_model([helper.make_node("MatMul", ["x", "w"], ["y"])], [("x", [3, 64])], [("y", [3, 8])], {"w": w})
    data = dynamic(model, tmp_path, weight_type=QuantType.QInt8)
    x = np.full((3, 64), 5.0, np.float32)
    x[1, ::3] = -1.0
    x[2] = np.linspace(-2.0, 5.0, 64, dtype=np.float32)
    assert assert_matches(data, [x])
    ours, theirs = qnnweb.load(data).run(x)[0], ReferenceSession(data).run({"x": x})[0]
    if onnxruntime_saturates_pairs():
        assert not np.array_equal(ours, theirs), "onnxruntime saturates pairs here, yet computed the exact result"
    else:
        np.testing.assert_array_equal(ours, theirs)


@pytest.mark.parametrize("weight_type", [QuantType.QInt8, QuantType.QUInt8])
def test_model_saved_optimized_by_onnxruntime(tmp_path, weight_type):
    """onnxruntime's optimizer fuses the nodes into com.microsoft's DynamicQuantizeMatMul and
    MatMulIntegerToFloat: the same ops, the same numbers."""
    data = dynamic(mlp([1, 4, 24], [24, 40, 12], seed=5), tmp_path, weight_type=weight_type, per_channel=True)
    options = session_options()
    options.optimized_model_filepath = str(tmp_path / "optimized.onnx")
    onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])
    optimized = (tmp_path / "optimized.onnx").read_bytes()
    fused = {n.op_type for n in onnx.load_from_string(optimized).graph.node}
    assert fused & {"DynamicQuantizeMatMul", "MatMulIntegerToFloat"}, fused
    assert_matches(optimized, inputs_for([1, 4, 24], seed=6))


@pytest.mark.parametrize("activation", ["Relu", "Sigmoid", "Tanh", "Erf"])
def test_float_activation_between_layers(tmp_path, activation):
    """A float op between two quantized layers runs on the float32 data path (ELEMENT_F32, onnxruntime's
    float arithmetic). reduce_range's weights: onnxruntime sums exactly on every machine, so every variant
    equals it bit for bit."""
    data = dynamic(mlp([1, 5, 24], [24, 32, 32, 6], seed=4, activation=activation), tmp_path,
                   weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)
    session = ReferenceSession(data)
    for variant in qnnweb.VARIANTS:
        loaded = qnnweb.load(data, variant=variant)
        assert "ELEMENT_F32" in {o.type for o in loaded._graph.ops}
        for x in inputs_for([1, 5, 24], seed=7):
            for ours, theirs in zip(loaded.run(x), session.run({"x": x}), strict=True):
                np.testing.assert_array_equal(ours, theirs, err_msg=f"{activation} {variant}")


def test_float_op_between_layers_is_named(tmp_path):
    """A float op qnnweb does not run between two quantized layers (Hardmax) is reported by name, not as a
    quantization mode qnnweb refuses."""
    data = dynamic(mlp([1, 3, 16], [16, 16, 4], activation="Hardmax"), tmp_path, weight_type=QuantType.QInt8)
    with pytest.raises(qnnweb.UnsupportedModelError, match="Hardmax") as error:
        qnnweb.load(data)
    assert not isinstance(error.value, qnnweb.QuantizationModeError)


def conv_net(input_shape, layers, seed=0):
    """Conv layers, each (output channels, kernel, group, stride, pads, dilation) with a bias, float32: what
    quantize_dynamic writes as DynamicQuantizeLinear -> ConvInteger -> Cast -> Mul -> Add (its bias reshaped
    to [1, C, 1, 1])."""
    rng = np.random.default_rng(seed)
    nodes, initializers, name, (n, c, h, w) = [], {}, "x", input_shape
    for i, (m, k, group, stride, pads, dilation) in enumerate(layers):
        initializers[f"w{i}"] = (rng.standard_normal((m, c // group, k, k)) * 0.3).astype(np.float32)
        initializers[f"b{i}"] = (rng.standard_normal(m) * 0.1).astype(np.float32)
        nodes.append(helper.make_node("Conv", [name, f"w{i}", f"b{i}"], [f"c{i}"], group=group, strides=[stride] * 2,
                                      pads=pads, dilations=[dilation] * 2))
        h = (h + pads[0] + pads[2] - dilation * (k - 1) - 1) // stride + 1
        w = (w + pads[1] + pads[3] - dilation * (k - 1) - 1) // stride + 1
        name, c = f"c{i}", m
    nodes.append(helper.make_node("Identity", [name], ["y"]))
    return float_model(nodes, [("x", list(input_shape))], [("y", [n, c, h, w])], initializers)


# a stem (4x4 stride 4), depthwise 7x7 (ConvNeXt), a grouped dilated 3x3 with asymmetric padding, a strided 3x3, 1x1
CONV_LAYERS = [(8, 4, 1, 4, [0, 0, 0, 0], 1), (8, 7, 8, 1, [3, 3, 3, 3], 1), (12, 3, 4, 1, [2, 1, 2, 3], 2),
               (6, 3, 1, 2, [1, 1, 1, 1], 1), (5, 1, 1, 1, [0, 0, 0, 0], 1)]


@pytest.mark.parametrize("weight_type", [QuantType.QInt8, QuantType.QUInt8])
@pytest.mark.parametrize("reduce_range", [False, True])
def test_conv_layers_match_onnxruntime(tmp_path, weight_type, reduce_range):
    """ConvInteger with its Cast / Mul / Add: strides, groups (depthwise), dilations, padding (taps in it read the
    input's zero point, as onnxruntime's im2col pads), batches of 2."""
    data = dynamic(conv_net([2, 3, 24, 28], CONV_LAYERS), tmp_path, weight_type=weight_type, reduce_range=reduce_range)
    assert sum(n.op_type == "ConvInteger" for n in onnx.load_from_string(data).graph.node) == len(CONV_LAYERS)
    assert all(o.type != "CONV_2D" for o in qnnweb.load(data)._graph.ops)
    beyond = assert_matches(data, inputs_for([2, 3, 24, 28], seed=14))
    assert not beyond or weight_type == QuantType.QInt8 and not reduce_range


def test_conv_classifier_with_float_ops_matches_onnxruntime(tmp_path):
    """A small CNN as quantize_dynamic leaves it: ConvInteger, a float Relu, a float GlobalAveragePool (MLAS's
    global pooling sums), Flatten, a MatMulInteger layer; bit-exact with onnxruntime as it runs the graph
    (uint8 weights: no pair of products beyond int16 on any machine)."""
    rng = np.random.default_rng(15)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["c"], ["r"]),
             helper.make_node("GlobalAveragePool", ["r"], ["p"]), helper.make_node("Flatten", ["p"], ["f"]),
             helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1)]
    model = float_model(nodes, [("x", [1, 3, 13, 11])], [("y", [1, 5])],
                        {"w": rng.normal(0, 0.5, (6, 3, 3, 3)).astype(np.float32),
                         "b": rng.normal(0, 0.1, 6).astype(np.float32), "fc": rng.normal(0, 0.5, (5, 6)).astype(np.float32)})
    data = dynamic(model, tmp_path, weight_type=QuantType.QUInt8)
    session = ReferenceSession(data)
    for variant in qnnweb.VARIANTS:
        qnnweb_model = qnnweb.load(data, variant=variant)
        assert {"DYNAMIC_CONV_2D", "MEAN"} <= {o.type for o in qnnweb_model._graph.ops}
        for x in inputs_for([1, 3, 13, 11], seed=16):
            np.testing.assert_array_equal(qnnweb_model.run(x)[0], session.run({"x": x})[0], err_msg=variant)


@pytest.mark.parametrize("axis", [1, 2, -1])
def test_float_softmax_over_any_axis_after_a_conv_layer(tmp_path, axis):
    """A Softmax of a ConvInteger's float result (held NHWC) over the channels, another axis (moved last and back,
    as onnxruntime moves it) or the last: bit-exact (rows shorter than 16 sum alike in its FMA3 and AVX-512
    kernels). At opset 12 a Softmax over a non-last axis is one over the tensor coerced to 2-D, which qnnweb
    refuses by name."""
    w = np.random.default_rng(17).standard_normal((6, 3, 3, 3)).astype(np.float32) * 0.3
    nodes = [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
             helper.make_node("Softmax", ["c"], ["y"], axis=axis)]
    for opset in (13, 12):
        model = float_model(nodes, [("x", [1, 3, 5, 7])], [("y", [1, 6, 5, 7])], {"w": w}, opset=opset)
        data = dynamic(model, tmp_path, weight_type=QuantType.QUInt8)
        if opset == 12 and axis != -1:
            with pytest.raises(qnnweb.UnsupportedModelError, match="opset < 13"):
                qnnweb.load(data)
            continue
        session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
        for x in inputs_for([1, 3, 5, 7], seed=18)[:4]:
            want = session.run(None, {"x": x})[0]
            got = qnnweb.load(data).run(x)[0]
            np.testing.assert_array_equal(got, want, err_msg=f"axis {axis}, opset {opset}")


def test_integer_reference_matches_onnxruntime():
    """DynamicQuantizeLinear's outputs and MatMulInteger's int32 sums from the numpy reference, against
    onnxruntime on the same inputs: every size parity, both weight types, weight zero points, halves."""
    rng = np.random.default_rng(7)
    for trial in range(60):
        m, k, n = (int(v) for v in rng.integers(1, [9, 70, 20]))
        dtype = (np.int8, np.uint8)[trial % 2]
        info = np.iinfo(dtype)
        x = (rng.standard_normal((m, k)) * rng.choice([0.01, 1.0, 100.0]) + rng.choice([0.0, 3.0])).astype(np.float32)
        if trial % 5 == 0:   # scale 1, zero point 100: halves of both parities
            x = rng.integers(-200, 310, (m, k)).astype(np.float32) / 2
            x[0, 0], x[-1, -1] = -100.0, 155.0
        w = rng.integers(info.min, info.max + 1, (k, n)).astype(dtype)
        w_zp = np.array(rng.integers(info.min, info.max + 1) if trial % 3 else 0, dtype)
        nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
                 helper.make_node("MatMulInteger", ["q", "w", "z", "w_zp"], ["acc"])]
        outputs = [helper.make_tensor_value_info(name, t, None) for name, t in
                   (("q", TensorProto.UINT8), ("s", TensorProto.FLOAT), ("z", TensorProto.UINT8),
                    ("acc", TensorProto.INT32))]
        graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])], outputs,
                                  [numpy_helper.from_array(w, "w"), numpy_helper.from_array(w_zp, "w_zp")])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        session = onnxruntime.InferenceSession(model.SerializeToString(), session_options(),
                                               providers=["CPUExecutionProvider"])
        q, scale, zp, acc = session.run(None, {"x": x})
        want_q, want_scale, want_zp = ref.dynamic_quantize_linear(x)
        np.testing.assert_array_equal(q, want_q)
        assert (scale, int(zp)) == (want_scale, want_zp)
        want_acc = ref.matmul_integer(want_q, want_zp, w, int(w_zp), saturate_pairs=onnxruntime_saturates_pairs())
        np.testing.assert_array_equal(acc, want_acc)


def test_one_quantized_input_read_by_several_layers(tmp_path):
    """Attention's Q, K and V projections of one input: one DynamicQuantizeLinear, three products; a 4-D input."""
    rng = np.random.default_rng(9)
    nodes, initializers = [], {}
    for name in ("q", "k", "v"):
        initializers[f"w_{name}"] = (rng.standard_normal((24, 16)) * 0.2).astype(np.float32)
        initializers[f"b_{name}"] = (rng.standard_normal(16) * 0.1).astype(np.float32)
        nodes += [helper.make_node("MatMul", ["x", f"w_{name}"], [f"m_{name}"]),
                  helper.make_node("Add", [f"m_{name}", f"b_{name}"], [name])]
    model = float_model(nodes, [("x", [1, 2, 5, 24])], [(name, [1, 2, 5, 16]) for name in ("q", "k", "v")],
                        initializers)
    data = dynamic(model, tmp_path, weight_type=QuantType.QInt8, per_channel=True)
    assert sum(n.op_type == "DynamicQuantizeLinear" for n in onnx.load_from_string(data).graph.node) == 1
    assert [o.type for o in qnnweb.load(data)._graph.ops].count("DYNAMIC_QUANTIZE") == 1
    assert_matches(data, inputs_for([1, 2, 5, 24], seed=10))


@pytest.mark.parametrize("dtype", [np.int8, np.uint8])
def test_mat_mul_integer_to_float(dtype):
    """com.microsoft's MatMulIntegerToFloat after a DynamicQuantizeLinear (onnxruntime's fusion of MatMulInteger,
    Cast and Mul), with and without its bias; weights per column, with zero points."""
    rng = np.random.default_rng(12)
    info = np.iinfo(dtype)
    w = rng.integers(info.min, info.max + 1, (40, 6)).astype(dtype)
    w_zp = rng.integers(info.min, info.max + 1, 6).astype(dtype)
    w_scale = rng.uniform(1e-3, 1e-2, 6).astype(np.float32)
    bias = rng.standard_normal(6).astype(np.float32)
    nodes = [helper.make_node("DynamicQuantizeLinear", ["x"], ["q", "s", "z"]),
             helper.make_node("MatMulIntegerToFloat", ["q", "w", "s", "w_scale", "z", "w_zp", "bias"], ["y"],
                              domain="com.microsoft"),
             helper.make_node("MatMulIntegerToFloat", ["q", "w", "s", "w_scale", "z", "w_zp"], ["y2"],
                              domain="com.microsoft")]
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [3, 6]) for name in ("y", "y2")]
    initializers = [numpy_helper.from_array(a, name) for a, name in
                    ((w, "w"), (w_zp, "w_zp"), (w_scale, "w_scale"), (bias, "bias"))]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 40])], outputs,
                              initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.microsoft", 1)])
    assert_matches(model.SerializeToString(), inputs_for([3, 40], seed=13))
