"""A LayerNorm written out as float ops (ReduceMean -> Sub -> Pow -> ReduceMean -> Add -> Sqrt -> Div -> Mul ->
Add: torch.onnx before opset 17, timm's channels-first LayerNorm2d) in the forms quantize_static writes (QDQ u8s8
and s8s8, QOperator u8, a DequantizeLinear per reader, the chain left whole in float): onnxruntime's reference
session never runs it as its LayerNormalization kernel but op by op, and so does qnnweb
(importers/onnx/float_reduce.py): float32 MEAN / SUB / POW, then the int8 ops quantize_static made. The forms:
over the last axis of tokens, over the channels of an NHWC-permuted feature map (LayerNorm2d at opset < 17), over
axis 1 of an NCHW feature map (ConvNeXt's channels_first LayerNorm: its means summed row after row), without beta,
with the duplicated Sub of older torch exports, with a Cast before the Pow; opsets 11 to 18."""

import functools
import os
import tempfile

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper
from qnnweb_dev.onnx_quantized import assert_matches_onnxruntime, float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession, int8_twin, session_options, uses_uint8

import qnnweb

RNG = np.random.default_rng(2029)
MODES = {"qdq-u8s8": dict(quant_format="QDQ", activation="QUInt8"),
         "qdq-s8s8": dict(quant_format="QDQ", activation="QInt8"),
         "qoperator-u8": dict(quant_format="QOperator", activation="QUInt8"),
         # each reader of the chain's input with its own DequantizeLinear, as onnxruntime rewrites it
         "qdq-dequantize-per-reader": dict(quant_format="QDQ", activation="QInt8"),
         # Add and Mul not quantized: the whole chain in float between a DequantizeLinear and a QuantizeLinear
         "qdq-float-chain": dict(quant_format="QDQ", activation="QInt8", op_types=["Conv", "MatMul", "Transpose"])}
# name -> (input shape, axes of the ReduceMeans, options of chain())
FORMS = {"tokens": ([1, 5, 16], [-1], {}), "layer-norm-2d": ([1, 8, 4, 5], [-1], {}),
         "channels-first": ([1, 8, 4, 5], [1], {}), "without-beta": ([1, 5, 16], [-1], dict(beta=False)),
         "duplicated-sub": ([1, 5, 16], [-1], dict(duplicated_sub=True)),
         "cast-before-pow": ([1, 5, 16], [-1], dict(cast=True))}


def chain(x, y, axes, channels, feature_map, opset, beta=True, duplicated_sub=False, cast=False):
    """The nodes and constants of torch.onnx's decomposed layer_norm from `x` to `y`: gamma / beta of shape
    [C] over the last axis, [C, 1, 1] over axis 1 of a feature map."""
    node = helper.make_node
    shape = [channels, 1, 1] if feature_map and axes == [1] else [channels]
    init = {"two": np.float32(2), "eps": np.float32(1e-5), "gamma": RNG.normal(1, 0.3, shape).astype(np.float32)}

    def reduce_mean(source, out):
        if opset >= 18:
            return node("ReduceMean", [source, "axes"], [out], keepdims=1)
        return node("ReduceMean", [source], [out], axes=axes, keepdims=1)

    if opset >= 18:
        init["axes"] = np.array(axes, np.int64)
    nodes = [reduce_mean(x, "mean"), node("Sub", [x, "mean"], ["d"])]
    if duplicated_sub:
        nodes.append(node("Sub", [x, "mean"], ["d2"]))
    if cast:
        nodes.append(node("Cast", ["d"], ["d_float"], to=TensorProto.FLOAT))
    nodes += [node("Pow", ["d_float" if cast else "d", "two"], ["square"]), reduce_mean("square", "variance"),
              node("Add", ["variance", "eps"], ["variance_eps"]), node("Sqrt", ["variance_eps"], ["deviation"]),
              node("Div", ["d2" if duplicated_sub else "d", "deviation"], ["normalized"]),
              node("Mul", ["normalized", "gamma"], ["scaled" if beta else y])]
    if beta:
        init["beta"] = RNG.normal(0, 0.3, shape).astype(np.float32)
        nodes.append(node("Add", ["scaled", "beta"], [y]))
    return nodes, init


@functools.cache
def float_form(form, opset=13):
    """A MatMul (tokens) or a Conv (feature maps) before the chain, so that quantize_static has an op to
    quantize in every mode; LayerNorm2d permutes to NHWC and back around it."""
    shape, axes, options = FORMS[form]
    node = helper.make_node
    source, out, nodes_after = "c", "y", []
    if len(shape) == 3:
        nodes = [node("MatMul", ["x", "w"], ["c"])]
        init = {"w": RNG.normal(0, 0.4, (shape[-1], shape[-1])).astype(np.float32)}
    else:
        nodes = [node("Conv", ["x", "w"], ["c"])]
        init = {"w": RNG.normal(0, 0.5, (shape[1], shape[1], 1, 1)).astype(np.float32)}
    if form == "layer-norm-2d":
        nodes.append(node("Transpose", ["c"], ["c_nhwc"], perm=[0, 2, 3, 1]))
        nodes_after = [node("Transpose", ["y_nhwc"], ["y"], perm=[0, 3, 1, 2])]
        source, out = "c_nhwc", "y_nhwc"
    channels = shape[-1] if len(shape) == 3 else shape[1]
    chain_nodes, chain_init = chain(source, out, axes, channels, len(shape) == 4, opset, **options)
    return float_model(nodes + chain_nodes + nodes_after, [("x", shape)], [("y", shape)], {**init, **chain_init},
                       opset=opset)


@functools.cache
def quantized_form(form, mode, opset=13):
    shape = FORMS[form][0]
    feeds = [{"x": RNG.normal(0, 1, shape).astype(np.float32)} for _ in range(8)]
    data = quantized(float_form(form, opset), feeds, **MODES[mode])
    return dequantize_per_reader(data) if mode == "qdq-dequantize-per-reader" else data


def dequantize_per_reader(data):
    """The model with a copy of the DequantizeLinear before the first ReduceMean for each other reader."""
    model = onnx.load_from_string(data)
    nodes = list(model.graph.node)
    reduce_mean = next(n for n in nodes if n.op_type == "ReduceMean")
    dequantize = next(n for n in nodes if n.output[0] == reduce_mean.input[0])
    for k, reader in enumerate(n for n in nodes if n is not reduce_mean and dequantize.output[0] in n.input):
        copy = onnx.NodeProto()
        copy.CopyFrom(dequantize)
        copy.name, copy.output[0] = f"{dequantize.name}_copy{k}", f"{dequantize.output[0]}_copy{k}"
        reader.input[list(reader.input).index(dequantize.output[0])] = copy.output[0]
        model.graph.node.insert(list(model.graph.node).index(dequantize) + 1, copy)
    return model.SerializeToString()


def reference_ops(data, **config):
    """The op types of the graph the reference session runs (ReferenceSession's options: the int8 twin of a
    uint8 model, every graph optimization), with more session config entries."""
    options = session_options()
    for key, value in config.items():
        options.add_session_config_entry(key, value)
    with tempfile.TemporaryDirectory() as tmp:
        options.optimized_model_filepath = os.path.join(tmp, "optimized.onnx")
        onnxruntime.InferenceSession(int8_twin(data) if uses_uint8(data) else data, options,
                                     providers=["CPUExecutionProvider"])
        return [n.op_type for n in onnx.load(options.optimized_model_filepath).graph.node]


CASES = [(form, mode, 13) for form in FORMS for mode in MODES] + [
    ("tokens", mode, opset) for opset in (11, 16, 18) for mode in ("qdq-s8s8", "qoperator-u8", "qdq-float-chain")]


@pytest.mark.parametrize("form, mode, opset", CASES)
def test_reference_never_runs_layer_normalization(form, mode, opset):
    """The premise of the refusal: onnxruntime's session does not fuse the chain into LayerNormalization in a
    quantized model; it still holds the chain's ReduceMean."""
    ops = reference_ops(quantized_form(form, mode, opset))
    assert "LayerNormalization" not in ops and "ReduceMean" in ops, ops


@pytest.mark.parametrize("form", ["tokens", "duplicated-sub", "cast-before-pow"])
def test_reference_fuses_without_its_qdq_handling(form):
    """The check above sees a fusion where there is one: the chain left whole in float, over the last axis,
    is fused once onnxruntime's QDQ handling (which gives each reader of a DequantizeLinear its own copy)
    is off. qnnweb follows the reference as configured, with that handling on."""
    ops = reference_ops(quantized_form(form, "qdq-float-chain"), **{"session.disable_quant_qdq": "1"})
    assert "LayerNormalization" in ops and "ReduceMean" not in ops, ops


def inputs(form, count=4):
    """Random inputs, the last with a zero row (a padded window, as tiny_vit's): its variance plus epsilon
    quantizes to 0, the Div computes 0 / 0, and QuantizeLinear of NaN gives -128 in onnxruntime."""
    xs = [np.random.default_rng(seed).normal(0, 1, FORMS[form][0]).astype(np.float32) for seed in range(count)]
    xs[-1][0, 0] = 0
    return xs


def assert_float32_chain(loaded):
    """The chain's statistics run as float32 MEANs (no LAYER_NORM: onnxruntime runs no LayerNormalization)."""
    graph = loaded._graph
    means = [op for op in graph.ops if op.type == "MEAN"]
    assert len(means) == 2 and all(graph.tensors[op.outputs[0]].dtype == "float32" for op in means), graph.ops
    assert "LAYER_NORM" not in {op.type for op in graph.ops}


OP_BY_OP = [case for case in CASES if case[1] != "qdq-float-chain"]


@pytest.mark.parametrize("form, mode, opset", OP_BY_OP)
def test_decomposed_layer_norm_bit_exact_op_by_op(form, mode, opset):
    """Where quantize_static quantized the Add, Div and Mul of the chain, onnxruntime's ops are each followed
    exactly: bit-exact in every variant."""
    data = quantized_form(form, mode, opset)
    assert_float32_chain(qnnweb.load(data))
    for x in inputs(form):
        assert_matches_onnxruntime(data, x, ["MEAN"], exact=True)


FLOAT_CHAIN = [case for case in CASES if case[1] == "qdq-float-chain"]


@pytest.mark.parametrize("form, mode, opset", FLOAT_CHAIN)
def test_decomposed_layer_norm_left_in_float_within_rounding(form, mode, opset):
    """The chain left whole in float up to the model's float output: onnxruntime fuses its Pow ... Mul part into
    SimplifiedLayerNormalization (tokens) or moves the transposes around it through the chain (layer-norm-2d,
    then reducing over another axis), qnnweb runs the ops as written: within 1e-5 (absolute, or relative where
    larger) of onnxruntime's float output in every variant."""
    data = quantized_form(form, mode, opset)
    assert_float32_chain(qnnweb.load(data))
    session = ReferenceSession(data)
    for x in inputs(form):
        want = session.run({"x": x})[0]
        for variant in qnnweb.VARIANTS:
            got = qnnweb.load(data, variant=variant).run(x)[0]
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=variant)
