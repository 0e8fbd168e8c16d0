"""Post-processing of detection, landmark and segmentation outputs without numpy (Pyodide has none
offline): SSD anchors and box decoding as MediaPipe's calculators do them (BlazeFace), non-maximum
suppression (hard, and MediaPipe's weighted form), landmark scaling, per-pixel class argmax. Values come
in as Python floats (``qnnweb.image.dequantize`` of an output); boxes are (ymin, xmin, ymax, xmax) in
the model input's normalized [0, 1] coordinates."""

import math
from dataclasses import dataclass, field


@dataclass
class Detection:
    box: tuple                  # (ymin, xmin, ymax, xmax), normalized to the model's input
    score: float
    keypoints: list = field(default_factory=list)   # [(x, y)], normalized
    label: int = 0


def ssd_anchors(input_size, strides, anchors_per_cell, offset=0.5):
    """Anchor centres (x, y) of MediaPipe's SsdAnchorsCalculator with fixed anchor sizes: for each stride
    a grid of ceil(size / stride) cells, ``anchors_per_cell[i]`` anchors per cell (layers of one stride
    are merged, as the calculator does). BlazeFace short range: ssd_anchors(128, [8, 16], [2, 6])."""
    anchors = []
    for stride, per_cell in zip(strides, anchors_per_cell):
        cells = math.ceil(input_size / stride)
        for y in range(cells):
            for x in range(cells):
                anchors += [((x + offset) / cells, (y + offset) / cells)] * per_cell
    return anchors


BLAZEFACE_SHORT_RANGE = {"input_size": 128, "strides": [8, 16], "anchors_per_cell": [2, 6], "keypoints": 6}


def decode_boxes(raw, scores, anchors, input_size, keypoints=0, min_score=0.5, score_clip=100.0):
    """MediaPipe's TensorsToDetectionsCalculator (reverse_output_order, fixed anchor size 1): ``raw`` is the
    flat regressor output (per anchor: x, y, w, h offsets in input pixels, then keypoint x, y pairs),
    ``scores`` one raw logit per anchor. Returns the Detections whose sigmoid score reaches ``min_score``."""
    per_anchor = len(raw) // len(anchors)
    if per_anchor < 4 + 2 * keypoints or len(scores) != len(anchors):
        raise ValueError(f"{len(raw)} regressor values and {len(scores)} scores for {len(anchors)} anchors")
    out = []
    for i, (ax, ay) in enumerate(anchors):
        logit = max(-score_clip, min(score_clip, scores[i]))
        score = 1.0 / (1.0 + math.exp(-logit))
        if score < min_score:
            continue
        r = raw[i * per_anchor:(i + 1) * per_anchor]
        cx, cy = r[0] / input_size + ax, r[1] / input_size + ay
        w, h = r[2] / input_size, r[3] / input_size
        points = [(r[4 + 2 * k] / input_size + ax, r[5 + 2 * k] / input_size + ay) for k in range(keypoints)]
        out.append(Detection((cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2), score, points))
    return out


def iou(a, b):
    """Intersection over union of two (ymin, xmin, ymax, xmax) boxes."""
    h = min(a[2], b[2]) - max(a[0], b[0])
    w = min(a[3], b[3]) - max(a[1], b[1])
    if h <= 0 or w <= 0:
        return 0.0
    inter = h * w
    union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter
    return inter / union if union > 0 else 0.0


def nms(detections, iou_threshold=0.3, max_detections=None, weighted=False):
    """Non-maximum suppression, best score first. ``weighted`` (MediaPipe's WEIGHTED mode, BlazeFace):
    each kept detection's box and keypoints become the score-weighted mean of the detections it
    suppresses (itself included)."""
    remaining = sorted(detections, key=lambda d: -d.score)
    kept = []
    while remaining and (max_detections is None or len(kept) < max_detections):
        best = remaining[0]
        overlapping = [d for d in remaining if d is best or iou(best.box, d.box) > iou_threshold]
        remaining = [d for d in remaining if not any(d is o for o in overlapping)]
        if weighted and len(overlapping) > 1:
            total = sum(d.score for d in overlapping)
            box = tuple(sum(d.box[k] * d.score for d in overlapping) / total for k in range(4))
            points = [tuple(sum(d.keypoints[p][k] * d.score for d in overlapping) / total for k in range(2))
                      for p in range(len(best.keypoints))]
            best = Detection(box, best.score, points, best.label)
        kept.append(best)
    return kept


def scale_landmarks(values, input_size, roi=(0.0, 0.0, 1.0, 1.0), dims=3):
    """Flat landmark output (x, y[, z] per point, in input pixels, as Face Mesh gives them) as
    [(x, y[, z])] normalized to the image the ``roi`` (ymin, xmin, ymax, xmax; normalized) was cut from;
    z is scaled like x."""
    ymin, xmin, ymax, xmax = roi
    sx, sy = (xmax - xmin) / input_size, (ymax - ymin) / input_size
    points = []
    for i in range(0, len(values) - dims + 1, dims):
        x, y = xmin + values[i] * sx, ymin + values[i + 1] * sy
        points.append((x, y, values[i + 2] * sx) if dims == 3 else (x, y))
    return points


def mask_argmax(scores, height, width, classes, channels_first=False, min_score=None):
    """The best class of every pixel of a score map, [H, W, classes] (NHWC) or, with ``channels_first``,
    [classes, H, W] (an ONNX model's NCHW output), flat: a list of H * W class indices, row by row (ties
    to the lower index); -1 (background) where the best score is below ``min_score``."""
    if len(scores) != height * width * classes:
        raise ValueError(f"{len(scores)} scores for {height}x{width} pixels of {classes} classes")
    pixels = height * width
    out = []
    for p in range(pixels):
        pixel = scores[p::pixels] if channels_first else scores[p * classes:(p + 1) * classes]
        best = max(pixel)
        out.append(-1 if min_score is not None and best < min_score else pixel.index(best))
    return out
