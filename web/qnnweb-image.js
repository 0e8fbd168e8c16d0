// Image pre- and post-processing for web/qnnweb.js models: the JavaScript twin of the Python
// package's qnnweb.image (same arithmetic, so the demo page's numbers equal CPython's), and before it
// the photo resized and cropped as a sidecar's `preprocess` says with Pillow's arithmetic
// (preprocessPlan, resizeCrop: the same bytes as Pillow's Image.resize(size, Image.BILINEAR) and crop).

/** [N, 3, H, W] (ONNX) rather than [N, H, W, 3] (TFLite). */
export function isNCHW(shape) {
  return shape.length === 4 && shape[1] === 3 && shape[3] !== 3;
}

// Python's qnnweb.ops.common.round_half_away
function roundHalfAway(x) {
  return x >= 0 ? Math.floor(x + 0.5) : -Math.floor(-x + 0.5);
}

// ---------------------------------------------------------------- resizing a photo as Pillow does

// Python's round(): halves go to the even neighbour (the sidecars' crop offsets use it).
function roundHalfEven(x) {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

/** What to do with a photo of imgW x imgH for a model input of w x h, as a sidecar's `preprocess` (pre)
 * says: with a numeric `resize`, the shorter side goes to `resize` (the longer to int(resize * long /
 * short), as torchvision does) and a centred `crop` (default: the input size) is cut out at
 * round((size - crop) / 2); otherwise the whole photo is resized to the input size. Returns {rw, rh}
 * (the resized photo), {x0, y0, cw, ch} (the window of it kept) and a line of text saying so. */
export function preprocessPlan(pre, imgW, imgH, w, h) {
  const resize = typeof pre.resize === "number" ? pre.resize : null;
  if (resize === null) return { rw: w, rh: h, x0: 0, y0: 0, cw: w, ch: h, text: `resize to ${w}×${h}` };
  let rw, rh;
  if (imgW <= imgH) {
    rw = resize;
    rh = Math.trunc((resize * imgH) / imgW);
  } else {
    rh = resize;
    rw = Math.trunc((resize * imgW) / imgH);
  }
  let cw = w, ch = h;
  if (typeof pre.crop === "number") cw = ch = pre.crop;
  else if (Array.isArray(pre.crop)) [ch, cw] = pre.crop;
  if (cw > rw || ch > rh) throw new Error(`crop ${cw}×${ch} is larger than the resized photo ${rw}×${rh}`);
  const x0 = roundHalfEven((rw - cw) / 2);
  const y0 = roundHalfEven((rh - ch) / 2);
  return { rw, rh, x0, y0, cw, ch, text: `shorter side to ${resize} (${rw}×${rh}), centre crop ${cw}×${ch} at (${x0}, ${y0})` };
}

// Bilinear resampling exactly as Pillow's Image.resize(size, Image.BILINEAR) does it for 8-bit
// RGB (ImagingResample): a triangle filter whose support is widened by the scale when shrinking
// (antialiased), coefficients normalised then rounded to 22-bit fixed point, horizontal pass
// first, then vertical, each rounded and clipped to 8 bits. A pass whose size does not change is
// skipped, as in Pillow. Every output pixel only depends on its own coefficients, so computing
// just a crop window of the resized image gives the same bytes as resizing then cropping.
const PRECISION_BITS = 22;
const ONE = 1 << PRECISION_BITS;
const HALF = 1 << (PRECISION_BITS - 1);

function resampleCoeffs(inSize, outSize) {
  const scale = inSize / outSize;
  const filterscale = Math.max(scale, 1.0);
  const support = 1.0 * filterscale; // the bilinear (triangle) filter's support is 1
  const ksize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const kk = new Float64Array(outSize * ksize);
  const w = new Float64Array(ksize);
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    const ss = 1.0 / filterscale;
    let xmin = Math.trunc(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    let xmax = Math.trunc(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    let ww = 0.0;
    for (let x = 0; x < xmax; x++) {
      const t = Math.abs((x + xmin - center + 0.5) * ss);
      w[x] = t < 1.0 ? 1.0 - t : 0.0;
      ww += w[x];
    }
    for (let x = 0; x < xmax; x++) {
      const v = ww !== 0.0 ? w[x] / ww : w[x];
      kk[xx * ksize + x] = v < 0 ? Math.trunc(-0.5 + v * ONE) : Math.trunc(0.5 + v * ONE);
    }
    bounds[xx * 2] = xmin;
    bounds[xx * 2 + 1] = xmax;
  }
  return { ksize, bounds, kk };
}

function clip8(ss) {
  if (ss >= ONE * 256) return 255;
  if (ss <= 0) return 0;
  return Math.floor(ss / ONE);
}

/** src: pixels with `channels` bytes each (RGB or RGBA), inW x inH. Resize to outW x outH (Pillow's
 * bilinear, above) and return the window [x0, x0 + cw) x [y0, y0 + ch) of the result as RGB bytes. */
export function resizeCrop(src, inW, inH, channels, outW, outH, x0, y0, cw, ch) {
  const C = channels;
  // source rows the vertical pass reads (all the window's rows when there is no vertical pass)
  const vert = outH !== inH ? resampleCoeffs(inH, outH) : null;
  let rowLo = y0, rowHi = y0 + ch;
  if (vert) {
    rowLo = Infinity;
    rowHi = -Infinity;
    for (let yy = y0; yy < y0 + ch; yy++) {
      rowLo = Math.min(rowLo, vert.bounds[yy * 2]);
      rowHi = Math.max(rowHi, vert.bounds[yy * 2] + vert.bounds[yy * 2 + 1]);
    }
  }
  const rows = rowHi - rowLo;
  // horizontal pass (or a plain copy of the window's columns) over those rows -> tmp, cw x rows
  const tmp = new Uint8Array(cw * rows * 3);
  if (outW !== inW) {
    const { ksize, bounds, kk } = resampleCoeffs(inW, outW);
    for (let y = 0; y < rows; y++) {
      const rowStart = (y + rowLo) * inW;
      for (let xx = 0; xx < cw; xx++) {
        const xmin = bounds[(xx + x0) * 2];
        const xmax = bounds[(xx + x0) * 2 + 1];
        const kbase = (xx + x0) * ksize;
        let r = HALF, g = HALF, b = HALF;
        for (let x = 0; x < xmax; x++) {
          const k = kk[kbase + x];
          const i = (rowStart + x + xmin) * C;
          r += src[i] * k;
          g += src[i + 1] * k;
          b += src[i + 2] * k;
        }
        const o = (y * cw + xx) * 3;
        tmp[o] = clip8(r);
        tmp[o + 1] = clip8(g);
        tmp[o + 2] = clip8(b);
      }
    }
  } else {
    for (let y = 0; y < rows; y++) {
      for (let xx = 0; xx < cw; xx++) {
        const i = ((y + rowLo) * inW + xx + x0) * C;
        const o = (y * cw + xx) * 3;
        tmp[o] = src[i];
        tmp[o + 1] = src[i + 1];
        tmp[o + 2] = src[i + 2];
      }
    }
  }
  if (!vert) return tmp;
  // vertical pass over the window's rows
  const { ksize, bounds, kk } = vert;
  const out = new Uint8Array(cw * ch * 3);
  for (let yy = 0; yy < ch; yy++) {
    const ymin = bounds[(yy + y0) * 2] - rowLo;
    const ymax = bounds[(yy + y0) * 2 + 1];
    const kbase = (yy + y0) * ksize;
    for (let x = 0; x < cw; x++) {
      let r = HALF, g = HALF, b = HALF;
      for (let y = 0; y < ymax; y++) {
        const k = kk[kbase + y];
        const i = ((y + ymin) * cw + x) * 3;
        r += tmp[i] * k;
        g += tmp[i + 1] * k;
        b += tmp[i + 2] * k;
      }
      const o = (yy * cw + x) * 3;
      out[o] = clip8(r);
      out[o + 1] = clip8(g);
      out[o + 2] = clip8(b);
    }
  }
  return out;
}

// ---------------------------------------------------------------- the model's input and outputs

/** H*W*3 RGB bytes (at the input's size) -> the model's input: float = (pixel - mean[c]) / std[c] in
 * float32, quantized as LiteRT's QUANTIZE would with the input's scale and zero point when it is int8,
 * NHWC or NCHW as its shape says (Python's qnnweb.image.rgb_to_input). */
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
    // LiteRT's QUANTIZE of the float32 value (qnnweb.numerics.tflite.quantize_float32): times the float32
    // reciprocal of the scale, in float32, rounded half to even
    const inverse = Math.fround(1 / Math.fround(tensor.scale));
    for (const t of tables) {
      for (let p = 0; p < 256; p++) {
        const q = roundHalfEven(Math.fround(Math.fround(t[p]) * inverse)) + tensor.zero_point;
        t[p] = Math.max(-128, Math.min(127, q));
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
