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

/** A detector's detections as its sidecar's `postprocess` settings say (vision.ssd_detections): `outputs`
 * maps output names to values (dequantized); `anchors` ({input_size, strides, anchors_per_cell, offset})
 * for ssdAnchors, `boxes` / `scores` the outputs, `keypoints` and `min_score` for decodeBoxes,
 * `iou_threshold`, `max_detections` and `weighted` for nms. */
export function ssdDetections(outputs, postprocess = {}) {
  const a = postprocess.anchors;
  if (!a) throw new Error("postprocess has no SSD anchor settings ('anchors')");
  const anchors = ssdAnchors(a.input_size, a.strides, a.anchors_per_cell, a.offset ?? 0.5);
  const [boxes, scores] = ["boxes", "scores"].map((key) => {
    const name = postprocess[key];
    if (!Object.hasOwn(outputs, name)) {
      throw new Error(`postprocess names ${key} output '${name}'; the outputs are ${Object.keys(outputs).join(", ")}`);
    }
    return outputs[name];
  });
  const found = decodeBoxes(boxes, scores, anchors, a.input_size, postprocess.keypoints || 0,
                            postprocess.min_score ?? 0.5);
  return nms(found, postprocess.iou_threshold ?? 0.3, postprocess.max_detections ?? null,
             Boolean(postprocess.weighted));
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

// ---------------------------------------------------------------- TFLite_Detection_PostProcess

const f32 = Math.fround;

// TFLite's ComputeIntersectionOverUnion, every step rounded to float32.
function iouF32(a, b) {
  const areaA = f32(f32(a[2] - a[0]) * f32(a[3] - a[1]));
  const areaB = f32(f32(b[2] - b[0]) * f32(b[3] - b[1]));
  if (areaA <= 0 || areaB <= 0) return 0.0;
  const h = Math.max(f32(Math.min(a[2], b[2]) - Math.max(a[0], b[0])), 0.0);
  const w = Math.max(f32(Math.min(a[3], b[3]) - Math.max(a[1], b[1])), 0.0);
  const inter = f32(h * w);
  return f32(inter / f32(f32(areaA + areaB) - inter));
}

// TFLite's DecreasingPartialArgSort (vision._best_indices): the first maximum for one, else
// std::partial_sort's order under "values[i] > values[j]" as libstdc++ computes it (heap select, heap sort).
function bestIndices(values, count) {
  const n = values.length;
  if (count === 1) {
    let best = 0;
    for (let i = 1; i < n; i++) if (values[i] > values[best]) best = i;
    return [best];
  }
  const first = Array.from({ length: n }, (_, i) => i);
  const greater = (a, b) => values[a] > values[b];
  const adjust = (hole, length, value) => {
    const top = hole;
    let child = hole;
    while (child < Math.trunc((length - 1) / 2)) {
      child = 2 * (child + 1);
      if (greater(first[child], first[child - 1])) child--;
      first[hole] = first[child];
      hole = child;
    }
    if (length % 2 === 0 && child === Math.trunc((length - 2) / 2)) {
      child = 2 * (child + 1);
      first[hole] = first[child - 1];
      hole = child - 1;
    }
    let parent = Math.trunc((hole - 1) / 2);
    while (hole > top && greater(first[parent], value)) {
      first[hole] = first[parent];
      hole = parent;
      parent = Math.trunc((hole - 1) / 2);
    }
    first[hole] = value;
  };
  const pop = (length, result) => {
    const value = first[result];
    first[result] = first[0];
    adjust(0, length, value);
  };
  if (count >= 2) for (let parent = Math.trunc((count - 2) / 2); parent >= 0; parent--) adjust(parent, count, first[parent]);
  for (let i = count; i < n; i++) if (greater(first[i], first[0])) pop(count, i);
  for (let last = count - 1; last > 0; last--) pop(last, last);
  return first.slice(0, count);
}

/** TFLite's TFLite_Detection_PostProcess with its kernel's arithmetic (vision.detection_postprocess), for SSD
 * models exported without the op: boxes per anchor (y, x, h, w, ...), scores per anchor (a leading background
 * column when there are numClasses + 1), anchors (y, x, h, w), all flat and dequantized. Returns
 * {boxes: [[ymin, xmin, ymax, xmax]], classes, scores, count}. */
export function detectionPostprocess(boxes, scores, anchors, {
  numClasses, maxDetections, maxClassesPerDetection = 1, detectionsPerClass = 100, useRegularNms = false,
  nmsScoreThreshold = 0.0, nmsIouThreshold = 0.6, yScale = 10.0, xScale = 10.0, hScale = 5.0, wScale = 5.0,
}) {
  const n = Math.trunc(anchors.length / 4);
  const stride = Math.trunc(boxes.length / n);
  const withBackground = Math.trunc(scores.length / n);
  const offset = withBackground - numClasses;
  if (stride < 4 || scores.length !== n * withBackground || offset < 0 || offset > 1) {
    throw new RangeError(`${boxes.length} box values, ${scores.length} scores and ${anchors.length} anchor values ` +
                         `do not describe the same anchors for ${numClasses} classes`);
  }
  const [ys, xs, hs, ws] = [yScale, xScale, hScale, wScale].map(f32);
  const decoded = [];
  for (let i = 0; i < n; i++) {
    const [by, bx, bh, bw] = [0, 1, 2, 3].map((k) => f32(boxes[i * stride + k]));
    const [ay, ax, ah, aw] = [0, 1, 2, 3].map((k) => f32(anchors[4 * i + k]));
    const yc = f32((by / ys) * ah + ay), xc = f32((bx / xs) * aw + ax);
    const halfH = f32(0.5 * Math.exp(bh / hs) * ah), halfW = f32(0.5 * Math.exp(bw / ws) * aw);
    decoded.push([f32(yc - halfH), f32(xc - halfW), f32(yc + halfH), f32(xc + halfW)]);
  }
  const s = Array.from(scores, f32);
  const threshold = f32(nmsScoreThreshold), iouThreshold = f32(nmsIouThreshold);
  const singleClass = (classScores, limit) => {
    const kept = [];
    classScores.forEach((v, i) => { if (v >= threshold) kept.push(i); });
    kept.sort((a, b) => classScores[b] - classScores[a]);   // stable: equal scores keep anchor order
    const selected = [], active = kept.map(() => true);
    for (let i = 0; i < kept.length && selected.length < Math.min(kept.length, limit); i++) {
      if (!active[i]) continue;
      selected.push(kept[i]);
      for (let j = i + 1; j < kept.length; j++) {
        if (active[j] && iouF32(decoded[kept[i]], decoded[kept[j]]) > iouThreshold) active[j] = false;
      }
    }
    return selected;
  };
  const out = [];
  let count;
  if (useRegularNms) {
    let merged = [];
    for (let c = 0; c < numClasses; c++) {
      const column = Array.from({ length: n }, (_, a) => s[a * withBackground + c + offset]);
      for (const a of singleClass(column, detectionsPerClass)) merged.push([column[a], a, c]);
      // stable, best first: equal scores keep the order they were found in (as LiteRT's regular NMS)
      merged = merged.map((e, i) => [e, i]).sort((p, q) => q[0][0] - p[0][0] || p[1] - q[1]).map((p) => p[0])
        .slice(0, maxDetections);
    }
    for (const [score, a, c] of merged) out.push([decoded[a], c, score]);
    count = out.length;
  } else {
    const categories = Math.min(maxClassesPerDetection, numClasses);
    const best = [], bestScores = [];
    for (let a = 0; a < n; a++) {
      const row = s.slice(a * withBackground + offset, (a + 1) * withBackground);
      const order = bestIndices(row, categories);
      best.push(order);
      bestScores.push(row[order[0]]);
    }
    const selected = singleClass(bestScores, maxDetections);
    for (const a of selected) {
      const row = s.slice(a * withBackground + offset, (a + 1) * withBackground);
      for (const c of best[a]) out.push([decoded[a], c, row[c]]);
    }
    count = selected.length;
  }
  return { boxes: out.map((e) => e[0]), classes: out.map((e) => e[1]), scores: out.map((e) => e[2]), count };
}
