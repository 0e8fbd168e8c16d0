// Image pre- and post-processing for web/qnnweb.js models: the JavaScript twin of the Python
// package's qnnweb.image (same arithmetic, so the demo page's numbers equal CPython's).

/** [N, 3, H, W] (ONNX) rather than [N, H, W, 3] (TFLite). */
export function isNCHW(shape) {
  return shape.length === 4 && shape[1] === 3 && shape[3] !== 3;
}

// Python's qnnweb.ops.common.round_half_away
function roundHalfAway(x) {
  return x >= 0 ? Math.floor(x + 0.5) : -Math.floor(-x + 0.5);
}

/** H*W*3 RGB bytes (at the input's size) -> the model's input: float = (pixel - mean[c]) / std[c],
 * quantized with the input's scale and zero point when it is int8, NHWC or NCHW as its shape says. */
export function rgbToInput(rgb, tensor, mean = [0, 0, 0], std = [1, 1, 1]) {
  if (rgb.length !== tensor.size) {
    throw new RangeError(`expected ${tensor.size / 3} RGB pixels for input [${tensor.shape}], got ${rgb.length / 3}`);
  }
  const plane = rgb.length / 3;
  const planar = isNCHW(tensor.shape);
  let out;
  const tables = [0, 1, 2].map((c) => Array.from({ length: 256 }, (_, p) => (p - mean[c]) / std[c]));
  if (tensor.dtype === "float32") {
    out = new Float32Array(rgb.length);
  } else if (tensor.dtype === "int8") {
    out = new Int8Array(rgb.length);
    for (const t of tables) {
      for (let p = 0; p < 256; p++) {
        t[p] = Math.max(-128, Math.min(127, roundHalfAway(t[p] / tensor.scale) + tensor.zero_point));
      }
    }
  } else {
    throw new TypeError(`images go into float32 or int8 inputs, not ${tensor.dtype}`);
  }
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) out[planar ? c * plane + i : i * 3 + c] = tables[c][rgb[i * 3 + c]];
  }
  return out;
}

/** Output values as numbers (float64), as qnnweb.image.dequantize. */
export function dequantize(output, tensor) {
  if (tensor.dtype === "float32") return Array.from(output);
  if (tensor.dtype === "int8") return Array.from(output, (v) => (v - tensor.zero_point) * tensor.scale);
  throw new TypeError(`cannot dequantize a ${tensor.dtype} output`);
}

/** An image-to-image model's output ([1, 3, H, W] or [1, H, W, 3]) as H*W*3 RGB bytes, valueRange
 * mapped to 0..255 (qnnweb.image.output_to_rgb). */
export function outputToRGB(values, shape, valueRange = [0.0, 1.0]) {
  const nchw = isNCHW(shape);
  const [h, w] = nchw ? [shape[2], shape[3]] : [shape[1], shape[2]];
  if (shape.length !== 4 || shape[0] !== 1 || (nchw ? shape[1] : shape[3]) !== 3 || values.length !== 3 * h * w) {
    throw new RangeError(`an RGB image output is [1, 3, H, W] or [1, H, W, 3], not [${shape}]`);
  }
  const [lo, hi] = valueRange;
  const scale = 255.0 / (hi - lo);
  const out = new Uint8Array(3 * h * w);
  const plane = h * w;
  for (let i = 0; i < plane; i++) {
    for (let c = 0; c < 3; c++) {
      const v = nchw ? values[c * plane + i] : values[i * 3 + c];
      out[i * 3 + c] = Math.max(0, Math.min(255, roundHalfAway((v - lo) * scale)));
    }
  }
  return { rgb: out, width: w, height: h };
}

export function softmax(values) {
  const top = Math.max(...values);
  const exps = values.map((v) => Math.exp(v - top));
  let total = 0;
  for (const e of exps) total += e; // in order, as Python's sum()
  return exps.map((e) => e / total);
}

/** The k best classes as [index, score], best first (ties: lower index); `logits` applies a
 * softmax first. */
export function topK(scores, k = 5, logits = false) {
  const s = logits ? softmax(scores) : scores;
  const order = s.map((_, i) => i).sort((a, b) => s[b] - s[a] || a - b);
  return order.slice(0, k).map((i) => [i, s[i]]);
}
