"""ONNX's own node tests for quantization operators (shipped in PyPI onnx==1.17.0), run through
qnnweb for every variant. Every case passes, or raises UnsupportedModelError and is listed with its
reason in docs/supported-models.md's conformance table; nothing else is acceptable.

qnnweb needs static quantization: the tests feed scales, zero points and weights as model inputs,
so every input but the first becomes a constant (initializer) before loading.
"""

import re
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import numpy_helper

import qnnweb

NODE_TESTS = Path(onnx.__file__).parent / "backend" / "test" / "data" / "node"
PATTERN = re.compile(r"^test_(qlinear|quantizelinear|dequantizelinear|convinteger|matmulinteger|dynamicquantizelinear)")
CASES = sorted(p.name for p in NODE_TESTS.iterdir() if PATTERN.match(p.name))
CONFORMANCE_PAGE = Path(__file__).resolve().parents[2] / "docs" / "supported-models.md"
# onnx 1.17.0's expected outputs for these forget to saturate to -128 (onnxruntime is right):
# compare with onnxruntime instead (see ../shared/FIXTURES.md).
WRONG_EXPECTED = {"test_qlinearmatmul_2D_int8_float16", "test_qlinearmatmul_2D_int8_float32",
                  "test_qlinearmatmul_3D_int8_float16", "test_qlinearmatmul_3D_int8_float32"}


def documented_unsupported():
    """{case: reason} from docs/supported-models.md's table of conformance cases qnnweb does not run."""
    rows = re.findall(r"^\| `(test_\w+)` \| (.+?) \|$", CONFORMANCE_PAGE.read_text(), flags=re.MULTILINE)
    return dict(rows)


def frozen_model(case):
    """The case's model with every input but the first turned into an initializer."""
    model = onnx.load(NODE_TESTS / case / "model.onnx")
    data = sorted((NODE_TESTS / case / "test_data_set_0").glob("input_*.pb"))
    tensors = []
    for path in data:
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        tensors.append(tensor)
    graph = model.graph
    for value_info, tensor in list(zip(graph.input, tensors))[1:]:
        tensor.name = value_info.name
        graph.initializer.append(tensor)
    first = graph.input[0]
    del graph.input[1:]
    graph.input[0].CopyFrom(first)
    inputs = [numpy_helper.to_array(tensors[0])]
    outputs = []
    for path in sorted((NODE_TESTS / case / "test_data_set_0").glob("output_*.pb")):
        tensor = onnx.TensorProto()
        tensor.ParseFromString(path.read_bytes())
        outputs.append(numpy_helper.to_array(tensor))
    return model, inputs, outputs


def test_cases_found():
    assert len(CASES) == 39


@pytest.mark.parametrize("case", CASES)
def test_conformance(case):
    model, inputs, expected = frozen_model(case)
    data = model.SerializeToString()
    documented = documented_unsupported()
    try:
        models = [qnnweb.load(data, variant=variant) for variant in qnnweb.VARIANTS]
    except qnnweb.UnsupportedModelError as error:
        assert case in documented, f"{case} is not supported ({error}) but not listed in docs/supported-models.md"
        return
    assert case not in documented, f"{case} runs: remove it from docs/supported-models.md's table of unsupported cases"
    if case in WRONG_EXPECTED:
        session = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
        expected = session.run(None, {model.graph.input[0].name: inputs[0]})
    for m in models:
        got = m.run(*inputs)
        for ours, theirs in zip(got, expected):
            assert ours.shape == theirs.shape, (m.variant, ours.shape, theirs.shape)
            if theirs.dtype.kind == "f":
                np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6, err_msg=m.variant)
            else:
                np.testing.assert_array_equal(ours.astype(np.int64), theirs.astype(np.int64), err_msg=m.variant)
