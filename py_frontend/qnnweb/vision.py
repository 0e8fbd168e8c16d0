"""Post-processing of detection, landmark and segmentation outputs without numpy (Pyodide has none
offline): SSD anchors and box decoding as MediaPipe's calculators do them (BlazeFace), non-maximum
suppression (hard, and MediaPipe's weighted form), TFLite's detection post-processing
(``detection_postprocess``, for SSD models exported without their TFLite_Detection_PostProcess op),
landmark scaling, per-pixel class argmax. Values come
in as Python floats (``qnnweb.image.dequantize`` of an output); boxes are (ymin, xmin, ymax, xmax) in
the model input's normalized [0, 1] coordinates."""

import math
from dataclasses import dataclass, field

from .numerics.float32 import float32


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
# its full-range sibling (faces up to ~5 m away): one 48 x 48 grid of single anchors
BLAZEFACE_FULL_RANGE = {"input_size": 192, "strides": [4], "anchors_per_cell": [1], "keypoints": 6}


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


def ssd_detections(outputs, postprocess):
    """A detector's detections as its sidecar's ``postprocess`` settings say (the JavaScript twin, which
    the demo page uses: ``ssdDetections`` in web/qnnweb-vision.js): ``outputs`` maps output names to
    values (``qnnweb.image.dequantize``); ``anchors`` (input_size, strides, anchors_per_cell, offset) for
    ssd_anchors, ``boxes`` / ``scores`` the outputs, ``keypoints`` and ``min_score`` for decode_boxes,
    ``iou_threshold``, ``max_detections`` and ``weighted`` for nms."""
    a = postprocess.get("anchors")
    if not a:
        raise ValueError("postprocess has no SSD anchor settings ('anchors')")
    anchors = ssd_anchors(a["input_size"], a["strides"], a["anchors_per_cell"], a.get("offset", 0.5))
    named = []
    for key in ("boxes", "scores"):
        name = postprocess.get(key)
        if name not in outputs:
            raise ValueError(f"postprocess names {key} output '{name}'; the outputs are {', '.join(outputs)}")
        named.append(outputs[name])
    found = decode_boxes(named[0], named[1], anchors, a["input_size"], postprocess.get("keypoints", 0),
                         postprocess.get("min_score", 0.5))
    return nms(found, postprocess.get("iou_threshold", 0.3), postprocess.get("max_detections"),
               bool(postprocess.get("weighted", False)))


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


def _ioufloat32(a, b):
    """TFLite's ComputeIntersectionOverUnion, every step rounded to float32."""
    area_a = float32(float32(a[2] - a[0]) * float32(a[3] - a[1]))
    area_b = float32(float32(b[2] - b[0]) * float32(b[3] - b[1]))
    if area_a <= 0 or area_b <= 0:
        return 0.0
    h = max(float32(min(a[2], b[2]) - max(a[0], b[0])), 0.0)
    w = max(float32(min(a[3], b[3]) - max(a[1], b[1])), 0.0)
    inter = float32(h * w)
    return float32(inter / float32(float32(area_a + area_b) - inter))


def _best_indices(values, count):
    """TFLite's DecreasingPartialArgSort: the indices of the ``count`` best values, best first: the first
    maximum for one, else std::partial_sort's order under "values[i] > values[j]" (libstdc++'s heap select
    and heap sort, which decides how ties come out)."""
    n = len(values)
    if count == 1:
        best = 0
        for i in range(1, n):
            if values[i] > values[best]:
                best = i
        return [best]
    first = list(range(n))

    def greater(a, b):
        return values[a] > values[b]

    def adjust(hole, length, value):
        top, child = hole, hole
        while child < (length - 1) // 2:
            child = 2 * (child + 1)
            if greater(first[child], first[child - 1]):
                child -= 1
            first[hole] = first[child]
            hole = child
        if length % 2 == 0 and child == (length - 2) // 2:
            child = 2 * (child + 1)
            first[hole] = first[child - 1]
            hole = child - 1
        parent = (hole - 1) // 2
        while hole > top and greater(first[parent], value):
            first[hole] = first[parent]
            hole = parent
            parent = (hole - 1) // 2
        first[hole] = value

    def pop(length, result):
        value = first[result]
        first[result] = first[0]
        adjust(0, length, value)

    if count >= 2:
        for parent in range((count - 2) // 2, -1, -1):
            adjust(parent, count, first[parent])
    for i in range(count, n):
        if greater(first[i], first[0]):
            pop(count, i)
    for last in range(count - 1, 0, -1):
        pop(last, last)
    return first[:count]


def detection_postprocess(boxes, scores, anchors, num_classes, max_detections, max_classes_per_detection=1,
                          detections_per_class=100, use_regular_nms=False, nms_score_threshold=0.0,
                          nms_iou_threshold=0.6, y_scale=10.0, x_scale=10.0, h_scale=5.0, w_scale=5.0):
    """TFLite's TFLite_Detection_PostProcess (the op TF Object Detection API SSD models end in), with the same
    arithmetic as its kernel (and qnnweb's): ``boxes`` per anchor (y, x, h, w, ...) flat, ``scores`` per anchor
    (a leading background column when there are num_classes + 1), ``anchors`` per anchor (y, x, h, w), all
    floats (dequantized). The options are the op's. Returns (boxes [(ymin, xmin, ymax, xmax)], classes, scores,
    count) for the count detections (max_classes_per_detection entries each with fast NMS)."""
    n = len(anchors) // 4
    stride = len(boxes) // n
    with_background = len(scores) // n
    offset = with_background - num_classes
    if stride < 4 or len(scores) != n * with_background or not 0 <= offset <= 1:
        raise ValueError(f"{len(boxes)} box values, {len(scores)} scores and {len(anchors)} anchor values do not "
                         f"describe the same anchors for {num_classes} classes")
    ys, xs, hs, ws = (float(float32(v)) for v in (y_scale, x_scale, h_scale, w_scale))
    decoded = []
    for i in range(n):
        by, bx, bh, bw = (float32(v) for v in boxes[i * stride:i * stride + 4])
        ay, ax, ah, aw = (float32(v) for v in anchors[4 * i:4 * i + 4])
        yc, xc = float32(by / ys * ah + ay), float32(bx / xs * aw + ax)
        half_h, half_w = float32(0.5 * math.exp(bh / hs) * ah), float32(0.5 * math.exp(bw / ws) * aw)
        decoded.append((float32(yc - half_h), float32(xc - half_w), float32(yc + half_h), float32(xc + half_w)))
    scores = [float32(v) for v in scores]
    threshold, iou_threshold = float32(nms_score_threshold), float32(nms_iou_threshold)

    def single_class(class_scores, limit):
        kept = [i for i, v in enumerate(class_scores) if v >= threshold]
        kept.sort(key=lambda i: -class_scores[i])          # stable: equal scores keep anchor order
        selected, active = [], [True] * len(kept)
        for i, anchor in enumerate(kept):
            if len(selected) >= min(len(kept), limit):
                break
            if not active[i]:
                continue
            selected.append(anchor)
            for j in range(i + 1, len(kept)):
                if active[j] and _ioufloat32(decoded[anchor], decoded[kept[j]]) > iou_threshold:
                    active[j] = False
        return selected

    out = []
    if use_regular_nms:
        merged = []   # (score, anchor, class), best first, at most max_detections
        for c in range(num_classes):
            column = [scores[a * with_background + c + offset] for a in range(n)]
            merged += [(column[a], a, c) for a in single_class(column, detections_per_class)]
            merged = sorted(merged, key=lambda e: -e[0])[:max_detections]   # stable, as LiteRT's regular NMS
        out = [(decoded[a], c, s) for s, a, c in merged]
        count = len(out)
    else:
        categories = min(max_classes_per_detection, num_classes)
        best, best_scores = [], []
        for a in range(n):
            row = scores[a * with_background + offset:(a + 1) * with_background]
            order = _best_indices(row, categories)
            best.append(order)
            best_scores.append(row[order[0]])
        selected = single_class(best_scores, max_detections)
        for a in selected:
            row = scores[a * with_background + offset:(a + 1) * with_background]
            out += [(decoded[a], c, row[c]) for c in best[a]]
        count = len(selected)
    return [b for b, _, _ in out], [c for _, c, _ in out], [s for _, _, s in out], count
