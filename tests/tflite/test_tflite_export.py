"""Models whose buffers live after the flatbuffer (Buffer.offset/size, as converters write large
models), made by qnnweb's exporter from the real models and cross-checked with LiteRT."""

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter
from tflite.Model import Model as TFLiteModel

import qnnweb
from qnnweb.exporters import export_tflite
from qnnweb.importers import import_model
from qnnweb_dev.reference import int8 as ref


def litert_run(data, x):
    interpreter = Interpreter(model_content=data, num_threads=1)
    interpreter.allocate_tensors()
    interpreter.set_tensor(interpreter.get_input_details()[0]["index"], x)
    interpreter.invoke()
    return interpreter.get_tensor(interpreter.get_output_details()[0]["index"])


@pytest.mark.parametrize("name", ["visual_wake_words", "image_classification"])
@pytest.mark.parametrize("external", [False, True])
def test_export_round_trip(name, external, model_path):
    original = model_path(name).read_bytes()
    exported = export_tflite(import_model(original), external_buffers=external)
    model = TFLiteModel.GetRootAs(exported, 0)
    buffers = [model.Buffers(i) for i in range(1, model.BuffersLength())]
    if external:
        assert all(b.Offset() > 1 and b.DataLength() == 0 for b in buffers)
        assert all(b.Offset() + b.Size() <= len(exported) for b in buffers)
    else:
        assert all(b.Offset() == 0 and b.DataLength() > 0 for b in buffers)
    x = np.random.default_rng(7).integers(0, 256, size=qnnweb.describe(original)["inputs"][0]["shape"])
    x = x.astype(qnnweb.describe(original)["inputs"][0]["dtype"])
    for variant in qnnweb.VARIANTS:
        (ours,) = qnnweb.load(exported, variant=variant).run(x)
        (theirs,) = qnnweb.load(original, variant=variant).run(x)
        np.testing.assert_array_equal(ours, theirs)
    np.testing.assert_array_equal(litert_run(exported, x), litert_run(original, x))


def test_truncated_external_buffers(model_path):
    exported = export_tflite(import_model(model_path("image_classification").read_bytes()), external_buffers=True)
    with pytest.raises(qnnweb.ModelError, match="truncated TFLite file: buffer"):
        qnnweb.load(exported[:-100])


@pytest.mark.parametrize("name", ["efficientnet_lite0_u8s8", "mobilenet_v2_u8s8"])
def test_onnx_model_exported_to_tflite(name, data_dir):
    """ONNX -> qnnweb graph -> int8 TFLite (weights re-laid out, explicit pads as PAD ops, float32 NCHW
    input through QUANTIZE): qnnweb runs it bit-exactly like the ONNX model, and LiteRT (XNNPACK)
    agrees with it on EfficientNet's top-5 (MobileNetV2's random weights make its ranking chaotic)."""
    from PIL import Image

    original = (data_dir / "models" / f"{name}.onnx").read_bytes()
    exported = export_tflite(import_model(original))
    image = Image.open(data_dir / "samples" / "coffee.png").convert("RGB").resize((224, 224), Image.BILINEAR)
    x = ((np.asarray(image, dtype=np.float32) - 127.5) / 127.5).transpose(2, 0, 1)[None].copy()
    # The exported QUANTIZE multiplies by the reciprocal scale (LiteRT's arithmetic), ONNX divides:
    # feed the ONNX model the input snapped to the TFLite file's quantization grid, so both start
    # from the same int8 tensor and every op after it must agree bit for bit.
    graph = import_model(exported)
    (quantize,) = [op for op in graph.ops if op.type == "QUANTIZE" and op.inputs == graph.inputs]
    q = graph.tensors[quantize.outputs[0]]
    snapped = ref.dequantize(ref.quantize_litert(x, q.scale[0], q.zero_point[0]), q.scale[0], q.zero_point[0])
    (ours,) = qnnweb.load(original, variant="relaxed").run(snapped)
    (exported_ours,) = qnnweb.load(exported, variant="relaxed").run(x)
    np.testing.assert_array_equal(exported_ours, ours)
    theirs = litert_run(exported, x)
    assert theirs.shape == ours.shape
    if name.startswith("efficientnet"):
        top5 = lambda v: list(np.argsort(-v.ravel(), kind="stable")[:5])  # noqa: E731
        assert top5(theirs) == top5(ours)


def test_export_writes_every_ops_options():
    """Options that differ from the schema's defaults survive export -> import, op by op."""
    from qnnweb.graph import Graph, Op, Tensor

    def t(i, shape, dtype="int8", data=None):
        return Tensor(i, f"t{i}", shape, dtype, (0.1,) if dtype == "int8" else (), (0,) if dtype == "int8" else (), 0, data)

    tensors = [t(0, (1, 4, 4, 8)), t(1, (1, 4, 4, 8)), t(2, (1, 4, 4, 16)), t(3, (1, 4, 4, 16)), t(4, (1, 8, 8, 4)),
               t(5, (2,), "int32", np.array([16, 16], np.int32).tobytes()), t(6, (1, 16, 16, 4)), t(7, (1, 4, 4, 8)),
               t(8, (2,), "int32", np.array([1, 2], np.int32).tobytes()), t(9, (1, 4, 4, 2)),
               t(10, (4,), "int32", np.array([0, 0, 0, 1], np.int32).tobytes()),
               t(11, (4,), "int32", np.array([1, 4, 4, 5], np.int32).tobytes()),
               t(12, (4,), "int32", np.array([1, 1, 1, 2], np.int32).tobytes()), t(13, (1, 4, 4, 2)),
               t(14, (), "int32", np.array(3, np.int32).tobytes()), t(15, (1, 4, 4, 4)), t(16, (1, 4, 4, 4)),
               t(17, (1, 4, 8, 4))]
    ops = [Op(0, "CONCATENATION", [0, 1], [2], {"axis": 3, "activation": "RELU"}),
           Op(1, "LEAKY_RELU", [2], [3], {"alpha": 0.25}),
           Op(2, "DEPTH_TO_SPACE", [3], [4], {"block_size": 2}),
           Op(3, "RESIZE_BILINEAR", [4, 5], [6], {"align_corners": True, "half_pixel_centers": False}),
           Op(4, "SUB", [0, 1], [7], {"activation": "RELU6"}),
           Op(5, "GATHER", [7, 8], [9], {"axis": 3, "batch_dims": 0}),
           Op(6, "STRIDED_SLICE", [7, 10, 11, 12], [13], {"begin_mask": 5, "end_mask": 2, "ellipsis_mask": 0,
                                                          "new_axis_mask": 0, "shrink_axis_mask": 0, "offset": True}),
           Op(7, "SPLIT", [14, 0], [15, 16], {"num_splits": 2}),
           Op(8, "BATCH_MATMUL", [0, 15], [17], {"adj_x": True, "adj_y": True})]
    graph = import_model(export_tflite(Graph(tensors, ops, [0, 1], [6, 7, 9, 13, 15, 16, 17], "tflite")))
    for op, expected in zip(graph.ops, ops):
        assert op.type == expected.type and all(op.options[k] == v for k, v in expected.options.items()), (op, expected)


@pytest.mark.parametrize("name", ["face_detection_short_range", "face_landmark"])
def test_export_of_ai_edge_quantizer_files_gives_litert_the_same_numbers(name):
    """MediaPipe's face models as ai-edge-quantizer writes them (tests/data/tflite): MAX_POOL_2D with its
    options, PRELU with float slopes between DEQUANTIZE and QUANTIZE (qnnweb runs it as an int8 table,
    the export puts the float op back), float16 weights nothing reads any more (left out). ai-edge-litert
    gives the exported file's outputs bit-exactly, and so does qnnweb."""
    from pathlib import Path

    original = (Path(__file__).resolve().parents[1] / "data" / "tflite" / f"{name}.tflite").read_bytes()
    exported = export_tflite(import_model(original))
    xq = np.load(Path(__file__).resolve().parents[1] / "data" / "tflite" / f"{name}.npz")["input_0"][0]  # a photo

    def outputs(data):
        interpreter = Interpreter(model_content=data, num_threads=1)
        interpreter.allocate_tensors()
        interpreter.set_tensor(interpreter.get_input_details()[0]["index"], xq)
        interpreter.invoke()
        return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]

    for ours, theirs in zip(outputs(exported), outputs(original), strict=True):
        np.testing.assert_array_equal(ours, theirs)
    for got, want in zip(qnnweb.load(exported).run(xq), qnnweb.load(original).run(xq), strict=True):
        np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("alpha", [1.0, 0.5])
def test_onnx_elu_exports_only_with_alpha_one(alpha):
    """TFLite's ELU has no alpha: an ONNX Elu with alpha 1 exports as ELU (a float island: DEQUANTIZE, ELU,
    QUANTIZE), another alpha is refused with the reason rather than written as alpha 1."""
    from onnx import helper
    from qnnweb_dev.onnx_quantized import float_model, quantized

    rng = np.random.default_rng(3)
    w = rng.normal(0, 0.5, (4, 3, 1, 1)).astype(np.float32)
    fm = float_model([helper.make_node("Conv", ["x", "w"], ["c"]), helper.make_node("Elu", ["c"], ["y"], alpha=alpha)],
                     [("x", [1, 3, 4, 4])], [("y", [1, 4, 4, 4])], {"w": w})
    data = quantized(fm, [{"x": rng.uniform(-1, 1, (1, 3, 4, 4)).astype(np.float32)} for _ in range(4)])
    graph = import_model(data)
    if alpha == 1.0:
        assert "ELU" in {op.type for op in import_model(export_tflite(graph)).ops}
    else:
        with pytest.raises(qnnweb.ModelError, match="ELU: an alpha other than 1"):
            export_tflite(graph)
