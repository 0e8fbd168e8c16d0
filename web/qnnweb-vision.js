// Post-processing of detection, landmark and segmentation outputs: the JavaScript twin of the Python
// package's qnnweb.vision (same arithmetic in float64, same order, so the demo page's boxes and points
// equal CPython's). Boxes are [ymin, xmin, ymax, xmax] in the model input's normalized [0, 1]
// coordinates; detections are {box, score, keypoints: [[x, y]], label}.

/** Anchor centres [x, y] of MediaPipe's SsdAnchorsCalculator with fixed anchor sizes (vision.ssd_anchors). */
export function ssdAnchors(inputSize, strides, anchorsPerCell, offset = 0.5) {
  const anchors = [];
  strides.forEach((stride, i) => {
    const cells = Math.ceil(inputSize / stride);
    for (let y = 0; y < cells; y++) {
      for (let x = 0; x < cells; x++) {
        for (let a = 0; a < anchorsPerCell[i]; a++) anchors.push([(x + offset) / cells, (y + offset) / cells]);
      }
    }
  });
  return anchors;
}

/** MediaPipe's TensorsToDetectionsCalculator (vision.decode_boxes): the detections whose sigmoid score
 * reaches minScore. */
export function decodeBoxes(raw, scores, anchors, inputSize, keypoints = 0, minScore = 0.5, scoreClip = 100.0) {
  const perAnchor = Math.floor(raw.length / anchors.length);
  if (perAnchor < 4 + 2 * keypoints || scores.length !== anchors.length) {
    throw new RangeError(`${raw.length} regressor values and ${scores.length} scores for ${anchors.length} anchors`);
  }
  const out = [];
  anchors.forEach(([ax, ay], i) => {
    const logit = Math.max(-scoreClip, Math.min(scoreClip, scores[i]));
    const score = 1.0 / (1.0 + Math.exp(-logit));
    if (score < minScore) return;
    const r = i * perAnchor;
    const cx = raw[r] / inputSize + ax, cy = raw[r + 1] / inputSize + ay;
    const w = raw[r + 2] / inputSize, h = raw[r + 3] / inputSize;
    const points = [];
    for (let k = 0; k < keypoints; k++) {
      points.push([raw[r + 4 + 2 * k] / inputSize + ax, raw[r + 5 + 2 * k] / inputSize + ay]);
    }
    out.push({ box: [cy - h / 2, cx - w / 2, cy + h / 2, cx + w / 2], score, keypoints: points, label: 0 });
  });
  return out;
}

/** Intersection over union of two [ymin, xmin, ymax, xmax] boxes. */
export function iou(a, b) {
  const h = Math.min(a[2], b[2]) - Math.max(a[0], b[0]);
  const w = Math.min(a[3], b[3]) - Math.max(a[1], b[1]);
  if (h <= 0 || w <= 0) return 0.0;
  const inter = h * w;
  const union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - inter;
  return union > 0 ? inter / union : 0.0;
}

// Python's sum(): left to right, starting from 0
function sum(values) {
  let total = 0;
  for (const v of values) total += v;
  return total;
}

/** Non-maximum suppression, best score first (vision.nms); `weighted` is MediaPipe's WEIGHTED mode. */
export function nms(detections, iouThreshold = 0.3, maxDetections = null, weighted = false) {
  // a stable sort, as Python's sorted()
  let remaining = detections.map((d, i) => [d, i]).sort((p, q) => q[0].score - p[0].score || p[1] - q[1]).map((p) => p[0]);
  const kept = [];
  while (remaining.length && (maxDetections === null || kept.length < maxDetections)) {
    let best = remaining[0];
    const overlapping = remaining.filter((d) => d === best || iou(best.box, d.box) > iouThreshold);
    remaining = remaining.filter((d) => !overlapping.includes(d));
    if (weighted && overlapping.length > 1) {
      const total = sum(overlapping.map((d) => d.score));
      const box = [0, 1, 2, 3].map((k) => sum(overlapping.map((d) => d.box[k] * d.score)) / total);
      const points = best.keypoints.map((_, p) => [0, 1].map((k) => sum(overlapping.map((d) => d.keypoints[p][k] * d.score)) / total));
      best = { box, score: best.score, keypoints: points, label: best.label };
    }
    kept.push(best);
  }
  return kept;
}

/** Flat landmarks (x, y[, z] per point, in input pixels) normalized to the image the roi was cut from
 * (vision.scale_landmarks). */
export function scaleLandmarks(values, inputSize, roi = [0.0, 0.0, 1.0, 1.0], dims = 3) {
  const [ymin, xmin, ymax, xmax] = roi;
  const sx = (xmax - xmin) / inputSize, sy = (ymax - ymin) / inputSize;
  const points = [];
  for (let i = 0; i + dims <= values.length; i += dims) {
    const x = xmin + values[i] * sx, y = ymin + values[i + 1] * sy;
    points.push(dims === 3 ? [x, y, values[i + 2] * sx] : [x, y]);
  }
  return points;
}

/** The best class of every pixel of a [H, W, classes] score map, or [classes, H, W] with channelsFirst
 * (vision.mask_argmax; ties to the lower index; -1 where the best score is below minScore). */
export function maskArgmax(scores, height, width, classes, channelsFirst = false, minScore = null) {
  if (scores.length !== height * width * classes) {
    throw new RangeError(`${scores.length} scores for ${height}x${width} pixels of ${classes} classes`);
  }
  const pixels = height * width;
  const [step, stride] = channelsFirst ? [pixels, 1] : [1, classes];
  const out = new Array(pixels);
  for (let p = 0; p < pixels; p++) {
    const at = p * stride;
    let best = 0;
    for (let c = 1; c < classes; c++) if (scores[at + c * step] > scores[at + best * step]) best = c;
    out[p] = minScore !== null && scores[at + best * step] < minScore ? -1 : best;
  }
  return out;
}

/** The logistic function, as decodeBoxes scores (a face-presence logit -> probability). */
export function sigmoid(x) {
  return 1.0 / (1.0 + Math.exp(-x));
}
