"""TFLite_Detection_PostProcess (the custom op TF Object Detection API SSD models end in) against
ai-edge-litert, every variant: SSD heads' box encodings and class scores (int8 through DEQUANTIZE, as
full-int8 conversions write them, or uint8 straight in with uint8 anchors, as TF1 quantized models do)
decoded against anchors, then fast NMS (1 or 2 classes per detection) or regular per-class NMS. The
detections must be bit-exact: boxes, classes, scores and the count. The models are written by qnnweb's
TFLite exporter (CUSTOM op, flexbuffer options), which ai-edge-litert reads like any converter's file.

Also ``qnnweb.vision.detection_postprocess``, the same arithmetic in pure Python for SSD models exported
without the op, against the kernel; and the errors of malformed ops."""

import struct

import numpy as np
import pytest
from ai_edge_litert.interpreter import Interpreter
from hypothesis import given, settings
from hypothesis import strategies as st

import qnnweb
from qnnweb import vision
from qnnweb.exporters import export_tflite
from qnnweb.graph import Graph, Op, Tensor

OPTIONS = {"max_detections": 10, "max_classes_per_detection": 1, "detections_per_class": 100, "use_regular_nms": False,
           "nms_score_threshold": 0.3, "nms_iou_threshold": 0.5, "num_classes": 3, "y_scale": 10.0, "x_scale": 10.0,
           "h_scale": 5.0, "w_scale": 5.0}


def ssd_tail(anchors=64, dtype="int8", background=True, seed=0, **options):
    """(TFLite bytes, box encodings, class scores, anchors as floats): a model whose inputs are an SSD head's
    quantized outputs and whose op is TFLite_Detection_PostProcess; random inputs for it."""
    o = dict(OPTIONS, **options)
    rng = np.random.default_rng(seed)
    columns = o["num_classes"] + (1 if background else 0)
    tensors = []

    def add(name, shape, dt, scale=(), zero_point=(), data=None):
        tensors.append(Tensor(len(tensors), name, tuple(shape), dt, tuple(scale), tuple(zero_point), 0, data))
        return len(tensors) - 1

    signed = dtype == "int8"
    boxes_q = add("box_encodings", [1, anchors, 4], dtype, (0.05,), (3 if signed else 128,))
    scores_q = add("class_predictions", [1, anchors, columns], dtype, (1 / 256,), (-128 if signed else 0,))
    grid = np.stack([rng.uniform(0, 1, anchors), rng.uniform(0, 1, anchors), rng.uniform(0.05, 0.4, anchors),
                     rng.uniform(0.05, 0.4, anchors)], 1).astype(np.float32)
    if signed:
        anchor_tensor = add("anchors", [anchors, 4], "float32", data=grid.tobytes())
        anchor_values = grid
    else:   # TF1 quantized SSDs: uint8 anchors beside uint8 box encodings (TFLite reads them so)
        grid_q = np.clip(np.round(grid * 255), 0, 255).astype(np.uint8)
        anchor_tensor = add("anchors", [anchors, 4], "uint8", (1 / 255,), (0,), data=grid_q.tobytes())
        anchor_values = grid_q.astype(np.float32) * np.float32(1 / 255)
    ops = []
    if signed:
        boxes, scores = add("boxes", [1, anchors, 4], "float32"), add("scores", [1, anchors, columns], "float32")
        ops += [Op(0, "DEQUANTIZE", [boxes_q], [boxes]), Op(1, "DEQUANTIZE", [scores_q], [scores])]
    else:
        boxes, scores = boxes_q, scores_q
    slots = o["max_detections"] * o["max_classes_per_detection"]
    outputs = [add("detection_boxes", [1, slots, 4], "float32"), add("detection_classes", [1, slots], "float32"),
               add("detection_scores", [1, slots], "float32"), add("num_detections", [1], "float32")]
    ops.append(Op(len(ops), "DETECTION_POSTPROCESS", [boxes, scores, anchor_tensor], outputs, o))
    data = export_tflite(Graph(tensors, ops, [boxes_q, scores_q], outputs, "tflite"))
    lo, hi = (-128, 128) if signed else (0, 256)
    xb = rng.integers(lo, hi, (1, anchors, 4)).astype(dtype)
    xs = rng.integers(lo, hi, (1, anchors, columns)).astype(dtype)
    return data, xb, xs, anchor_values


def litert(data, xb, xs):
    interpreter = Interpreter(model_content=data, num_threads=1)
    interpreter.allocate_tensors()
    inputs = interpreter.get_input_details()
    interpreter.set_tensor(inputs[0]["index"], xb)
    interpreter.set_tensor(inputs[1]["index"], xs)
    interpreter.invoke()
    return [interpreter.get_tensor(d["index"]) for d in interpreter.get_output_details()]


CASES = {
    "fast-int8": {},
    "fast-uint8": {"dtype": "uint8"},
    "fast-2-classes-per-detection": {"max_classes_per_detection": 2},
    "regular-nms": {"use_regular_nms": True, "detections_per_class": 4},
    "no-background-column": {"background": False},
    "many-anchors-and-classes": {"anchors": 600, "num_classes": 12, "max_detections": 25, "seed": 3},
    "regular-many": {"anchors": 300, "num_classes": 6, "use_regular_nms": True, "max_detections": 20, "seed": 4},
    "nothing-above-threshold": {"nms_score_threshold": 1.5},
    "iou-threshold-1": {"nms_iou_threshold": 1.0, "seed": 5},
}


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("case", CASES)
def test_detections_are_litert_s(case, variant):
    data, xb, xs, _ = ssd_tail(**CASES[case])
    want = litert(data, xb, xs)
    count = int(want[3][0])
    per = CASES[case].get("max_classes_per_detection", 1) if not CASES[case].get("use_regular_nms") else 1
    model = qnnweb.load(data, variant=variant)
    got = [np.asarray(g).reshape(w.shape) for g, w in zip(model.run([xb, xs]), want, strict=True)]
    assert int(got[3][0]) == count
    if case != "nothing-above-threshold":
        assert count > 0
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(g[:, :count * per], w[:, :count * per])
        assert not g[:, count * per:].any(), "slots past num_detections are zero"


@pytest.mark.parametrize("case", ["fast-int8", "fast-2-classes-per-detection", "regular-nms", "no-background-column",
                                  "fast-uint8"])
def test_python_helper_is_the_kernel(case):
    """vision.detection_postprocess on the dequantized head outputs gives the kernel's detections exactly."""
    settings = dict(CASES[case])
    data, xb, xs, anchors = ssd_tail(**settings)
    model = qnnweb.load(data)
    boxes, classes, scores, count = (np.asarray(v) for v in model.run([xb, xs]))
    o = dict(OPTIONS, **{k: v for k, v in settings.items() if k in OPTIONS})
    signed = settings.get("dtype", "int8") == "int8"
    xb_f = (xb.astype(np.float32) - np.float32(3 if signed else 128)) * np.float32(0.05)
    xs_f = (xs.astype(np.float32) - np.float32(-128 if signed else 0)) * np.float32(1 / 256)
    got = vision.detection_postprocess(xb_f.ravel().tolist(), xs_f.ravel().tolist(), anchors.ravel().tolist(), **o)
    n = got[3]
    assert n == int(count.ravel()[0])
    per = len(got[0]) // max(n, 1) if n else 0
    assert [list(b) for b in got[0]] == boxes.reshape(-1, 4)[:n * per].tolist()
    assert got[1] == classes.ravel()[:n * per].tolist() and got[2] == scores.ravel()[:n * per].tolist()


def _with_options(data, **changes):
    """The model's bytes with its custom options replaced (same length or not: rebuilt by the exporter)."""
    graph = qnnweb.importers.import_model(data)
    op = next(o for o in graph.ops if o.type == "DETECTION_POSTPROCESS")
    op.options = {k: v for k, v in dict(op.options, **changes).items() if v is not None}
    return export_tflite(graph)


def test_malformed_ops_are_named_errors():
    data, _, _, _ = ssd_tail()
    with pytest.raises(qnnweb.UnsupportedModelError, match="num_classes"):
        qnnweb.load(_with_options(data, num_classes=None))
    with pytest.raises(qnnweb.UnsupportedModelError, match="nms_iou_threshold 0.0 outside"):
        qnnweb.load(_with_options(data, nms_iou_threshold=0.0))
    with pytest.raises(qnnweb.UnsupportedModelError, match="num_classes 7 with class predictions of 4 columns"):
        qnnweb.load(_with_options(data, num_classes=7))
    # another custom op: named in the error
    renamed = data.replace(b"TFLite_Detection_PostProcess", b"TFLite_Detection_PostProcesX")
    with pytest.raises(qnnweb.UnsupportedModelError, match="CUSTOM TFLite_Detection_PostProcesX"):
        qnnweb.load(renamed)
    # options that are not a flexbuffer map
    start = data.index(b"max_classes_per_detection")
    broken = data[:start - 40] + bytes(40) + data[start:]
    with pytest.raises(qnnweb.ModelError):
        qnnweb.load(broken)


def test_uint8_box_encodings_need_uint8_anchors():
    """TFLite's kernel reads the anchors as uint8 whenever the box encodings are uint8: a model pairing them
    with float anchors gives all-zero boxes there; qnnweb refuses it and says why."""
    data, _, _, _ = ssd_tail(dtype="uint8")
    graph = qnnweb.importers.import_model(data)
    op = next(o for o in graph.ops if o.type == "DETECTION_POSTPROCESS")
    anchors = graph.tensors[op.inputs[2]]
    values = struct.unpack(f"<{anchors.size}f", bytes(anchors.data))
    # the exporter writes the IR: rebuild the model with float anchors and the uint8 box encodings straight in
    graph.tensors[op.inputs[2]] = Tensor(anchors.index, "anchors", anchors.shape, "float32", data=struct.pack(f"<{len(values)}f", *values))
    dequantize = next(o for o in graph.ops if o.type == "DEQUANTIZE" and o.outputs[0] == op.inputs[0])
    op.inputs[0] = dequantize.inputs[0]
    graph.ops.remove(dequantize)
    with pytest.raises(qnnweb.UnsupportedModelError, match="uint8 but the anchors are not"):
        qnnweb.load(export_tflite(graph))


@settings(max_examples=int(__import__("os").environ.get("DPP_EXAMPLES", 40)), deadline=None)
@given(anchors=st.integers(1, 200), classes=st.integers(1, 8), background=st.booleans(),
       max_detections=st.integers(1, 20), per_detection=st.integers(1, 3), regular=st.booleans(),
       per_class=st.integers(1, 10), score=st.sampled_from([0.0, 0.2, 0.5, 0.9]),
       iou=st.sampled_from([0.1, 0.45, 0.6, 1.0]), dtype=st.sampled_from(["int8", "uint8"]), seed=st.integers(0, 1000))
def test_random_heads_and_options_match_litert(anchors, classes, background, max_detections, per_detection, regular,
                                               per_class, score, iou, dtype, seed):
    data, xb, xs, _ = ssd_tail(anchors, dtype, background, seed, num_classes=classes, max_detections=max_detections,
                               max_classes_per_detection=per_detection, use_regular_nms=regular,
                               detections_per_class=per_class, nms_score_threshold=score, nms_iou_threshold=iou)
    want = litert(data, xb, xs)
    count = int(want[3][0])
    # the slots TFLite writes: fast NMS puts detection s's classes at s * max_classes_per_detection + c
    written = list(range(count)) if regular else [s * per_detection + c for s in range(count)
                                                  for c in range(min(per_detection, classes))]
    got = [np.asarray(g).reshape(w.shape) for g, w in zip(qnnweb.load(data, variant="scalar").run([xb, xs]), want)]
    assert int(got[3][0]) == count
    for g, w in zip(got[:3], want[:3]):
        np.testing.assert_array_equal(g[:, written], w[:, written])
