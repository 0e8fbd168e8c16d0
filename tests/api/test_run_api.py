"""The native API's conveniences: inputs by name (a dict or keywords), a dynamic batch taken from the
feed, ``reshape``, ``close`` / ``with``, ``qnnweb.supported_variants()``."""

import numpy as np
import pytest
import qnnweb
from onnx import helper
from qnnweb_dev.onnx_quantized import float_model, quantized


def two_input_model():
    """y = relu(a + b) over a symbolic batch 'n', int8 QDQ."""
    nodes = [helper.make_node("Add", ["a", "b"], ["s"]), helper.make_node("Relu", ["s"], ["y"])]
    model = float_model(nodes, [("a", ["n", 4, 3]), ("b", ["n", 4, 3])], [("y", ["n", 4, 3])])
    rng = np.random.default_rng(1)
    feeds = [{k: rng.uniform(-1, 1, (1, 4, 3)).astype(np.float32) for k in "ab"} for _ in range(8)]
    return quantized(model, feeds, activation="QInt8")


@pytest.fixture(scope="module")
def data():
    return two_input_model()


def test_inputs_by_position_by_dict_and_by_keyword(data):
    model = qnnweb.load(data, variant="scalar")
    rng = np.random.default_rng(2)
    a, b = (rng.uniform(-1, 1, (1, 4, 3)).astype(np.float32) for _ in range(2))
    (expected,) = model.run(a, b)
    for outputs in (model.run({"a": a, "b": b}), model.run(b=b, a=a), model.run([a, b])):
        np.testing.assert_array_equal(outputs[0], expected)
    with pytest.raises(ValueError, match=r"missing input 'b'; the model's inputs: 'a' \(float32 \[1, 4, 3\]\), "
                                         r"'b' \(float32 \[1, 4, 3\]\)"):
        model.run({"a": a})
    with pytest.raises(ValueError, match="no input named 'c'"):
        model.run(a=a, b=b, c=a)
    with pytest.raises(ValueError, match="either in order or by name"):
        model.run(a, b=b)
    with pytest.raises(ValueError, match=r"takes 2 input\(s\) \('a'"):
        model.run(a)


def test_a_dynamic_batch_comes_from_the_feed(data):
    model = qnnweb.load(data, variant="simd128")
    rng = np.random.default_rng(3)
    a, b = (rng.uniform(-1, 1, (5, 4, 3)).astype(np.float32) for _ in range(2))
    singles = [model.run(a[i:i + 1], b[i:i + 1])[0] for i in range(5)]
    (batched,) = model.run(a=a, b=b)
    assert batched.shape == (5, 4, 3) and model.inputs[0].shape == (5, 4, 3) == model.outputs[0].shape
    np.testing.assert_array_equal(batched, np.concatenate(singles))
    assert model.variant == "simd128"
    assert model.run(a[:1], b[:1])[0].shape == (1, 4, 3)  # and back
    with pytest.raises(ValueError, match=r"expected shape \[1, 4, 3\], got \[1, 5, 3\]"):  # not a dynamic axis
        model.run(np.zeros((1, 5, 3), np.float32), np.zeros((1, 5, 3), np.float32))


def test_compiled_and_static_models_keep_their_shapes(data, data_dir):
    compiled = qnnweb.load(qnnweb.compile(data))
    with pytest.raises(ValueError, match="fixed when it is compiled"):
        compiled.reshape({"a": [2, 4, 3], "b": [2, 4, 3]})
    with pytest.raises(ValueError, match=r"expected shape \[1, 4, 3\], got \[2, 4, 3\]"):
        compiled.run(np.zeros((2, 4, 3), np.float32), np.zeros((2, 4, 3), np.float32))
    static = qnnweb.load(data_dir / "models" / "mobilenet_v2_u8s8.onnx", variant="scalar")  # batch fixed at 1
    with pytest.raises(ValueError, match=r"expected shape \[1, 3, 224, 224\], got \[2, 3, 224, 224\]"):
        static.run(np.zeros((2, 3, 224, 224), np.float32))
    static.reshape({"input": [1, 3, 224, 224]})  # its own shape: fine


def test_close_frees_the_model_and_with_closes_it(data):
    with qnnweb.load(data, variant="scalar") as model:
        x = np.zeros((1, 4, 3), np.float32)
        model.run(x, x)
    for use in (lambda: model.run(x, x), model.info, lambda: model.profile(x, x)):
        with pytest.raises(ValueError, match=r"the model is closed \(model.close\(\)\): load it again"):
            use()
    model.close()


def test_supported_variants_needs_no_argument():
    assert qnnweb.supported_variants() == qnnweb.VARIANTS  # wasmtime validates all three
