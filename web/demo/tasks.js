// How the page shows each task's outputs (a model's sidecar names its task): the top classes, a
// detector's boxes and keypoints drawn over the photo, landmarks, a segmentation mask, an image-to-image
// model's picture beside its input. TASKS maps a task to its renderer, show(record, result, {rgb (the
// input), plan, photoSize, meta, info, roi}); each lists what it found in #results (showResults, with the
// test hooks' data-* attributes).
import { outputToRGB, resizeCrop } from "../qnnweb-image.js";
import { maskArgmax, scaleLandmarks, sigmoid, ssdDetections } from "../qnnweb-vision.js";
import { inputSize, photoMapper } from "./photo.js";
import { $, describeCanvas, paintRGB } from "./ui.js";

const COLORS = ["#ffd43b", "#51cf66", "#ff6b6b", "#4dabf7", "#f783ac", "#a9e34b"];

// Whether a classifier's outputs are logits (its sidecar's output.meaning says so): the page shows
// their softmax.
export function isLogits(record) {
  const meaning = (record.output && record.output.meaning) || "";
  if (meaning) return /logit/i.test(meaning);
  return false; // TFLite demo models end in SOFTMAX: their outputs already are probabilities
}

// The list of what a run found: [index, score] pairs with their labels; `meta` (model, photo, variant,
// engine, task) goes on #results as data-* attributes.
function showResults(top, labels, meta, probabilities) {
  const ol = $("results");
  ol.replaceChildren();
  for (const [index, score] of top) {
    const label = labels && labels[index] !== undefined ? labels[index] : `class ${index}`;
    const li = document.createElement("li");
    li.dataset.label = label;
    li.dataset.index = String(index);
    li.dataset.score = String(score);
    const name = document.createElement("span");
    name.className = "label";
    name.textContent = label;
    name.title = `class ${index}: ${label}`;
    const bar = document.createElement("span");
    bar.className = "bar";
    const fill = document.createElement("span");
    fill.style.width = `${Math.max(0, Math.min(1, score)) * 100}%`;
    bar.append(fill);
    const value = document.createElement("span");
    value.className = "score";
    value.textContent = probabilities ? `${(score * 100).toFixed(1)} %` : score.toFixed(3);
    li.append(name, bar, value);
    ol.append(li);
  }
  Object.assign(ol.dataset, meta);
}

function showClasses(record, result, { meta }) {
  $("results-title").textContent = "Top classes";
  $("scores-kind").textContent = isLogits(record) ? "softmax of the model's logits" : "the model's output";
  showResults(result.top, record.labels, meta, true);
  window.qnnwebDemo.lastTop = result.top;
}

// The outputs a sidecar's postprocess settings name must be the model's.
function namedOutputs(record, outputs, names) {
  for (const n of names) {
    if (!(n in outputs)) {
      throw new Error(`${record.file}: its sidecar's postprocess names output '${n}'; the model's outputs are ` +
                      Object.keys(outputs).join(", "));
    }
  }
  return names.map((n) => outputs[n]);
}

// The overlay at the photo's size, cleared, with the part of the photo the model saw outlined.
function overlayFor(photoSize, at) {
  const canvas = $("overlay");
  [canvas.width, canvas.height] = photoSize;
  const ctx = canvas.getContext("2d");
  ctx.lineWidth = Math.max(2, Math.round(Math.max(...photoSize) / 250));
  const [x0, y0] = at(0, 0);
  const [x1, y1] = at(1, 1);
  ctx.setLineDash([ctx.lineWidth * 4, ctx.lineWidth * 3]);
  ctx.strokeStyle = "rgb(255 255 255 / 70%)";
  ctx.strokeRect(x0, y0, x1 - x0, y1 - y0);
  ctx.setLineDash([]);
  return ctx;
}

function dot(ctx, x, y, radius) {
  ctx.beginPath();
  ctx.arc(x, y, radius, 0, 2 * Math.PI);
  ctx.fill();
}

// A detector's detections (ssdDetections: SSD anchors, sigmoid scores, non-maximum suppression), as its
// sidecar's postprocess says; an error names the model's file.
export function detections(record, outputs) {
  try {
    return ssdDetections(outputs, record.postprocess || {});
  } catch (err) {
    throw new Error(`${record.file}: ${err.message}`, { cause: err });
  }
}

function showDetections(record, result, { plan, photoSize, meta }) {
  const pp = record.postprocess || {};
  const minScore = pp.min_score ?? 0.5;
  const kept = detections(record, result.outputs);

  const at = photoMapper(plan, photoSize);
  const ctx = overlayFor(photoSize, at);
  kept.forEach((d, i) => {
    const [ymin, xmin, ymax, xmax] = d.box;
    const [x0, y0] = at(xmin, ymin);
    const [x1, y1] = at(xmax, ymax);
    ctx.strokeStyle = ctx.fillStyle = COLORS[i % COLORS.length];
    ctx.strokeRect(x0, y0, x1 - x0, y1 - y0);
    for (const [u, v] of d.keypoints) dot(ctx, ...at(u, v), ctx.lineWidth * 1.5);
  });
  const label = (record.labels || ["object"])[0];
  showResults(kept.map((d) => [0, d.score]), [label], meta, true);
  $("results").querySelectorAll("li").forEach((li, i) => {
    const [ymin, xmin, ymax, xmax] = kept[i].box;
    const [x0, y0] = at(xmin, ymin).map(Math.round);
    const [x1, y1] = at(xmax, ymax).map(Math.round);
    li.dataset.box = JSON.stringify(kept[i].box);
    li.querySelector(".label").textContent = `${label} ${i + 1}`;
    li.querySelector(".label").title = `${label} ${i + 1}: (${x0}, ${y0})–(${x1}, ${y1}) in the photo's pixels`;
  });
  $("results-title").textContent = kept.length === 1 ? `1 ${label} found` : `${kept.length} ${label}s found`;
  describeCanvas($("overlay"), `${$("results-title").textContent}${kept.length ? ", outlined on the photo" : ""}`);
  $("scores-kind").textContent =
    `scores ≥ ${minScore}, ${pp.weighted ? "weighted " : ""}non-maximum suppression at IoU ${pp.iou_threshold ?? 0.3}`;
  window.qnnwebDemo.lastDetections = kept;
}

function showLandmarks(record, result, { plan, photoSize, meta, roi }) {
  const pp = record.postprocess || {};
  if (!pp.points || !pp.input_size) throw new Error(`${record.file}: its sidecar has no landmark settings (postprocess.points, input_size)`);
  const [values] = namedOutputs(record, result.outputs, [pp.points]);
  const points = scaleLandmarks(values, pp.input_size, [0.0, 0.0, 1.0, 1.0], pp.dims || 3);
  const score = pp.score ? sigmoid(namedOutputs(record, result.outputs, [pp.score])[0][0]) : 1;
  // below its presence threshold (MediaPipe's default: 0.5) the model sees no face: its points mean nothing
  const minScore = pp.min_score ?? 0.5;
  const found = score >= minScore ? points : [];

  const at = photoMapper(plan, photoSize);
  const ctx = overlayFor(photoSize, at);
  ctx.fillStyle = COLORS[1];
  const side = (plan.cw * photoSize[0]) / plan.rw; // the square the model saw, in photo pixels
  for (const [u, v] of found) dot(ctx, ...at(u, v), Math.max(1, side / 200));
  showResults([[0, score]], record.labels || ["face"], meta, true);
  $("results").querySelector("li").dataset.points = String(found.length);
  $("results-title").textContent = found.length ? `${found.length} landmarks` : "No face";
  describeCanvas($("overlay"), found.length ? `${found.length} landmarks drawn on the face`
    : "no face in the square the model saw (dashed): no landmarks drawn");
  const where = !pp.roi ? "" : roi ? `; in the face ${pp.roi.detector} found (dashed square)`
    : `; ${pp.roi.detector} found no face: the photo's centre square`;
  const presence = `presence score (sigmoid of the model's logit; no face below ${minScore})`;
  $("scores-kind").textContent = (pp.score ? presence : "") + where;
  window.qnnwebDemo.lastLandmarks = found;
  window.qnnwebDemo.lastROI = roi ? { box: roi.box, detection: roi.detection } : null;
}

// A colour per class (golden-angle hues), RGB.
function classColor(i) {
  const hue = (i * 137.508) % 360;
  const f = (n) => {
    const k = (n + hue / 30) % 12;
    return Math.round(255 * (0.55 - 0.45 * Math.max(-1, Math.min(k - 3, 9 - k, 1))));
  };
  return [f(0), f(8), f(4)];
}

function outputShape(info, name) {
  const tensor = info.outputs.find((t) => t.name === name);
  return tensor.shape;
}

function showSegmentation(record, result, { plan, photoSize, meta, info }) {
  const pp = record.postprocess || {};
  const [scores] = namedOutputs(record, result.outputs, [pp.scores]);
  const shape = outputShape(info, pp.scores);
  const channelsFirst = (pp.layout || "NHWC") === "NCHW";
  const [classes, height, width] = channelsFirst ? shape.slice(1) : [shape[3], shape[1], shape[2]];
  const mask = maskArgmax(scores, height, width, classes, channelsFirst, pp.min_score ?? null);

  // the mask, one colour per class (background clear), stretched over the part of the photo the model saw
  const small = new OffscreenCanvas(width, height);
  const pixels = new ImageData(width, height);
  const counts = new Map();
  mask.forEach((c, i) => {
    if (c < 0) return;
    counts.set(c, (counts.get(c) || 0) + 1);
    const [r, g, b] = classColor(c);
    pixels.data.set([r, g, b, 150], i * 4);
  });
  small.getContext("2d").putImageData(pixels, 0, 0);
  const at = photoMapper(plan, photoSize);
  const ctx = overlayFor(photoSize, at);
  const [x0, y0] = at(0, 0);
  const [x1, y1] = at(1, 1);
  ctx.imageSmoothingEnabled = false;
  ctx.drawImage(small, x0, y0, x1 - x0, y1 - y0);

  // the legend: the classes seen, by their share of the pixels
  const labels = record.labels || [];
  const seen = [...counts.entries()].sort((a, b) => b[1] - a[1] || a[0] - b[0]).map(([c, n]) => [c, n / mask.length]);
  showResults(seen, labels, meta, true);
  $("results").querySelectorAll("li").forEach((li, i) => {
    const swatch = document.createElement("span");
    swatch.className = "swatch";
    swatch.style.background = `rgb(${classColor(seen[i][0]).join(" ")})`;
    li.querySelector(".label").prepend(swatch);
  });
  const background = pp.background || "background";
  $("results-title").textContent = seen.length ? "Where things are" : `Only ${background}`;
  const shares = seen.slice(0, 3).map(([c, share]) => `${labels[c] ?? `class ${c}`} ${Math.round(share * 100)} %`);
  describeCanvas($("overlay"), seen.length ? `segmentation: ${shares.join(", ")}` : `segmentation: only ${background}`);
  $("scores-kind").textContent = `share of the pixels; ${background} below a score of ${pp.min_score ?? "–"}`;
  window.qnnwebDemo.lastMask = mask;
}

// The model's output image over its input scaled to the same size (Pillow's bilinear): before and after.
function showImage(record, result, { meta, info, rgb: input }) {
  const pp = record.postprocess || {};
  const [values] = namedOutputs(record, result.outputs, [pp.image]);
  const { rgb, width, height } = outputToRGB(values, outputShape(info, pp.image), pp.range || [0.0, 1.0]);
  const { w, h } = inputSize(info.inputs[0]);
  paintRGB($("before-canvas"), resizeCrop(input, w, h, 3, width, height, 0, 0, width, height), width, height);
  paintRGB($("result-canvas"), rgb, width, height);
  $("before-size").textContent = `${w}×${h}`;
  $("result-size").textContent = `${width}×${height}`;
  describeCanvas($("before-canvas"), `the model's input, ${w}×${h} pixels, scaled to ${width}×${height}`);
  describeCanvas($("result-canvas"), `the model's output image, ${width}×${height} pixels`);
  $("result-image").hidden = false;
  showResults([], [], meta, true);
  $("results-title").textContent = "Result";
  $("scores-kind").textContent = `${width}×${height} from the ${w}×${h} input`;
  window.qnnwebDemo.lastImage = rgb;
}

export const TASKS = {
  classification: showClasses, detection: showDetections, landmarks: showLandmarks, segmentation: showSegmentation,
  "image-to-image": showImage,
};

// What Run does for a model (the Run button's tooltip); a wake-word model has no Run: it hears the microphone.
export function runTitle(record) {
  const task = (record && record.task) || "classification";
  if (task === "detection") return `Detect the ${(record.labels || ["object"])[0]}s in the photo`;
  const does = { classification: "Classify the photo", landmarks: "Find the landmarks in the photo",
    segmentation: "Segment the photo: where each kind of thing is", "image-to-image": "Upscale the photo",
    "wake-word": "A wake-word model hears the microphone: press Listen" };
  return does[task] || `Run the ${task} model on the photo`;
}
