"""A model output declared uint8 (a QuantizeLinear to uint8 as the graph's output, or a quantized model
whose final DequantizeLinear was cut off to get the raw bytes) comes back as uint8 with onnxruntime's
values, whatever op made it: the importer shifts qnnweb's int8 back to uint8 in one place
(importers/onnx/importer.py `as_declared`). Before, only some ops' handlers did it, and Softmax,
AveragePool, Add, Concat, Reshape, the float unary ops ... handed back int8 bytes (every value 128 off)."""

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from qnnweb_dev.onnx_quantized import float_model, quantized
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb

C = 4
X = np.random.default_rng(5).normal(0, 2, (1, C, 6, 6)).astype(np.float32)


def constant(name, values, dtype):
    return numpy_helper.from_array(np.array(values, dtype), name)


# op -> (attributes, [(extra input name, values, dtype)]); the op's first input is the dequantized x
OPS = {
    "Relu": ({}, []), "Sigmoid": ({}, []), "Tanh": ({}, []), "HardSwish": ({}, []), "LeakyRelu": ({}, []),
    "MaxPool": ({"kernel_shape": [2, 2]}, []), "AveragePool": ({"kernel_shape": [2, 2]}, []),
    "GlobalAveragePool": ({}, []), "Softmax": ({}, []), "ReduceMean": ({"axes": [2, 3]}, []),
    "Reshape": ({}, [("shape", [1, -1], np.int64)]), "Flatten": ({}, []), "Identity": ({}, []),
    "Add": ({}, [("xd", None, None)]), "Mul": ({}, [("xd", None, None)]), "Sub": ({}, [("xd", None, None)]),
    "Max": ({}, [("xd", None, None)]), "Concat": ({"axis": 1}, [("xd", None, None)]),
    "DepthToSpace": ({"blocksize": 2}, []), "SpaceToDepth": ({"blocksize": 2}, []),
    "Slice": ({}, [("starts", [1], np.int64), ("ends", [4], np.int64), ("axes", [2], np.int64)]),
    "Pad": ({}, [("pads", [0, 0, 1, 1, 0, 0, 1, 1], np.int64)]),
    "Resize": ({"mode": "linear"}, [("roi", [], np.float32), ("scales", [1, 1, 2, 2], np.float32)]),
    "Gather": ({"axis": 1}, [("indices", [2, 0], np.int64)]),
}


def one_op_model(op):
    """x -> QuantizeLinear (uint8) -> DequantizeLinear -> op -> QuantizeLinear (uint8, another scale) = y."""
    attributes, extra = OPS[op]
    initializers = [constant("s", 0.05, np.float32), constant("z", 128, np.uint8),
                    constant("s2", 0.07, np.float32), constant("z2", 131, np.uint8)]
    initializers += [constant(name, values, dtype) for name, values, dtype in extra if values is not None]
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["xq"]),
             helper.make_node("DequantizeLinear", ["xq", "s", "z"], ["xd"]),
             helper.make_node(op, ["xd"] + [name for name, _, _ in extra], ["f"], **attributes),
             helper.make_node("QuantizeLinear", ["f", "s2", "z2"], ["y"])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, 6, 6])],
                              [helper.make_tensor_value_info("y", TensorProto.UINT8, None)], initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString()


@pytest.mark.parametrize("op", sorted(OPS))
def test_a_uint8_output_after_each_op(op):
    data = one_op_model(op)
    (theirs,) = ReferenceSession(data).run({"x": X})
    (ours,) = qnnweb.load(data).run(X)
    assert ours.dtype == np.uint8 and theirs.dtype == np.uint8
    np.testing.assert_array_equal(ours, theirs)


def without_final_dequantize(data):
    """The quantized model with its last DequantizeLinear removed: its uint8 input is the output."""
    model = onnx.load_from_string(data)
    graph = model.graph
    (last,) = [n for n in graph.node if n.output[0] == graph.output[0].name]
    assert last.op_type == "DequantizeLinear"
    graph.node.remove(last)
    graph.output[0].name = last.input[0]
    graph.output[0].type.tensor_type.elem_type = TensorProto.UINT8
    return model.SerializeToString()


@pytest.mark.parametrize("quant_format", ["QDQ", "QOperator"])
@pytest.mark.parametrize("last", ["Conv", "Add", "Sigmoid"])
def test_a_quantized_model_cut_before_its_final_dequantize(quant_format, last):
    rng = np.random.default_rng(7)
    nodes = [helper.make_node("Conv", ["x", "w1"], ["a"], pads=[1, 1, 1, 1]), helper.make_node("Relu", ["a"], ["r"]),
             helper.make_node("Conv", ["r", "w2"], ["b"])]
    nodes += {"Conv": [], "Add": [helper.make_node("Add", ["b", "r"], ["c"])],
              "Sigmoid": [helper.make_node("Sigmoid", ["b"], ["c"])]}[last]
    weights = {"w1": rng.normal(0, 0.5, (C, 3, 3, 3)).astype(np.float32),
               "w2": rng.normal(0, 0.4, (C, C, 1, 1)).astype(np.float32)}
    model = float_model(nodes, [("x", [1, 3, 6, 6])], [(nodes[-1].output[0], [1, C, 6, 6])], weights)
    feeds = [{"x": rng.uniform(-1, 1, (1, 3, 6, 6)).astype(np.float32)} for _ in range(6)]
    data = without_final_dequantize(quantized(model, feeds, quant_format=quant_format, activation="QUInt8"))
    x = rng.uniform(-1, 1, (1, 3, 6, 6)).astype(np.float32)
    (theirs,) = ReferenceSession(data).run({"x": x})
    for variant in qnnweb.VARIANTS:
        (ours,) = qnnweb.load(data, variant=variant).run(x)
        assert ours.dtype == np.uint8, variant
        difference = np.abs(ours.astype(int) - theirs.astype(int))
        assert difference.max() <= 1 and (difference == 0).mean() >= 0.99, variant
