"""qnnweb.vision (numpy-free post-processing) on MediaPipe's BlazeFace, short and full range, with its
trained weights (the ai-edge-quantizer fixtures, tests/data/tflite): one face found on the astronaut and
Grace Hopper photos, where their faces are; and the helpers on hand-made cases."""

from pathlib import Path

import numpy as np
import pytest
import qnnweb
from qnnweb import vision
from qnnweb.image import dequantize

DATA = Path(__file__).resolve().parents[1] / "data" / "tflite"


BLAZEFACE = {"face_detection_short_range": vision.BLAZEFACE_SHORT_RANGE,
             "face_detection_full_range": vision.BLAZEFACE_FULL_RANGE}


def blazeface(model, x, config=vision.BLAZEFACE_SHORT_RANGE):
    """The faces, through ssd_detections with the settings the demo's sidecar gives BlazeFace (boxes the
    first output, scores the second: their names differ between the two models)."""
    outputs = {t.name: dequantize(v, t) for v, t in zip(model.run(x), model.outputs)}
    boxes, scores = (t.name for t in model.outputs)
    postprocess = {"boxes": boxes, "scores": scores, "anchors": config,
                   "keypoints": config["keypoints"], "min_score": 0.5, "iou_threshold": 0.3, "weighted": True}
    return vision.ssd_detections(outputs, postprocess)


@pytest.mark.parametrize("name", list(BLAZEFACE))
@pytest.mark.parametrize("sample, centre", [(0, (0.25, 0.46)), (1, (0.31, 0.51))], ids=["astronaut", "grace_hopper"])
def test_blazeface_finds_the_face(name, sample, centre):
    """The centre squares of astronaut.png and grace_hopper.jpg (128 x 128 for the short-range model,
    192 x 192 for the full-range one) hold one face each, its centre (y, x) near ``centre`` (read off the
    photos: the middle of the face). The full-range model's quantized scores saturate near 0.5: its classifier's
    output range was calibrated on 16 photos, 3 with faces (the short-range one's on crops of their faces too)."""
    model = qnnweb.load((DATA / f"{name}.tflite").read_bytes())
    x = np.load(DATA / f"{name}.npz")["input_0"][sample]
    faces = blazeface(model, x, BLAZEFACE[name])
    assert len(faces) == 1, faces
    ymin, xmin, ymax, xmax = faces[0].box
    assert 0.1 < ymax - ymin < 0.8 and 0.1 < xmax - xmin < 0.8
    assert abs((ymin + ymax) / 2 - centre[0]) < 0.1 and abs((xmin + xmax) / 2 - centre[1]) < 0.1
    assert len(faces[0].keypoints) == 6 and all(xmin - 0.1 < px < xmax + 0.1 for px, _ in faces[0].keypoints)


def test_anchors_of_blazeface_short_and_full_range():
    anchors = vision.ssd_anchors(128, [8, 16], [2, 6])
    assert len(anchors) == 896
    assert anchors[0] == anchors[1] == (0.5 / 16, 0.5 / 16) and anchors[512] == (0.5 / 8, 0.5 / 8)
    anchors = vision.ssd_anchors(192, [4], [1])
    assert len(anchors) == 2304 and anchors[0] == (0.5 / 48, 0.5 / 48) and anchors[49] == (1.5 / 48, 1.5 / 48)


def test_ssd_detections_needs_anchor_settings_and_the_named_outputs():
    with pytest.raises(ValueError, match="no SSD anchor settings"):
        vision.ssd_detections({}, {"boxes": "b", "scores": "s"})
    anchors = {"input_size": 128, "strides": [128], "anchors_per_cell": [1]}
    with pytest.raises(ValueError, match="postprocess names scores output 's'; the outputs are b, c"):
        vision.ssd_detections({"b": [0.0] * 16, "c": [0.0]}, {"boxes": "b", "scores": "s", "anchors": anchors})


def test_nms_hard_and_weighted():
    a = vision.Detection((0.0, 0.0, 1.0, 1.0), 0.9, [(0.5, 0.5)])
    b = vision.Detection((0.0, 0.1, 1.0, 1.1), 0.6, [(0.7, 0.5)])
    c = vision.Detection((2.0, 2.0, 3.0, 3.0), 0.8, [(2.5, 2.5)])
    assert vision.iou(a.box, b.box) == pytest.approx(0.9 / 1.1)
    assert [d.score for d in vision.nms([b, c, a], 0.5)] == [0.9, 0.8]
    merged = vision.nms([a, b, c], 0.5, weighted=True)[0]
    assert merged.box[1] == pytest.approx(0.06 / 1.5) and merged.keypoints[0][0] == pytest.approx(0.87 / 1.5)
    assert len(vision.nms([a, b, c], 0.5, max_detections=1)) == 1


def test_landmarks_and_masks():
    points = vision.scale_landmarks([96.0, 48.0, 10.0, 0.0, 192.0, -5.0], 192, roi=(0.5, 0.0, 1.0, 0.5))
    assert points == [pytest.approx((0.25, 0.625, 10.0 * 0.5 / 192)), pytest.approx((0.0, 1.0, -5.0 * 0.5 / 192))]
    assert vision.mask_argmax([0.1, 0.9, 0.5, 0.5, 2.0, -1.0], 1, 3, 2) == [1, 0, 0]
    # [classes, H, W] (an ONNX model's NCHW output), and background below a score
    assert vision.mask_argmax([0.1, 0.9, 0.5, 0.5, 2.0, -1.0], 1, 3, 2, channels_first=True) == [1, 1, 0]
    assert vision.mask_argmax([0.1, 0.9, 0.5, 0.5, 2.0, -1.0], 1, 3, 2, channels_first=True, min_score=0.6) == [-1, 1, -1]
    with pytest.raises(ValueError):
        vision.mask_argmax([0.0] * 5, 1, 3, 2)


def test_image_output_to_rgb():
    from qnnweb.image import output_to_rgb

    # NCHW and NHWC of the same 1x2 image; [0, 1] to 0..255, half away from zero, clipped
    nchw = [0.0, 1.5, 0.5, -0.2, 0.006, 1.0]
    assert output_to_rgb(nchw, (1, 3, 1, 2)) == bytes([0, 128, 2, 255, 0, 255])
    nhwc = [nchw[0], nchw[2], nchw[4], nchw[1], nchw[3], nchw[5]]
    assert output_to_rgb(nhwc, (1, 1, 2, 3)) == output_to_rgb(nchw, (1, 3, 1, 2))
    assert output_to_rgb([-1.0, 1.0] * 3, (1, 3, 1, 2), value_range=(-1.0, 1.0)) == bytes([0] * 3 + [255] * 3)
    with pytest.raises(ValueError):
        output_to_rgb([0.0] * 4, (1, 4, 1, 1))
