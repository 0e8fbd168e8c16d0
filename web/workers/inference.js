// The demo page's inference worker: web/qnnweb.js runs the server's compiled models here, off the
// page's main thread. Messages {id, op, ...} get {id, ok, result} or {id, ok: false, error}:
//   pixels   {image, pre, w, h, plan}           -> {rgb, plan, photoSize: [W, H]}: a photo (a Blob, decoded
//                                                 here, or an ImageBitmap) resized and cropped to the w x h
//                                                 input as `plan` says (default: the sidecar's `pre`); here,
//                                                 so that a 24-megapixel photo never blocks the page
//   load     {url, variant, threads, kernelsURL} -> {key, info}    (kept: later ops name it by key)
//   classify {key, rgb, mean, std, k, logits}  -> {ms, variant, threads, raw, top}
//   run      {key, rgb, mean, std}             -> {ms, variant, threads, outputs: {name: values}}
//                                                 (every output dequantized: detection, landmarks...)
//   rerun    {key}                             -> ms (the last input again)
//   listen   {key}                             -> null: a new audio stream for a wake-word model (its state
//                                                 reset, a new audio frontend)
//   hear     {key, samples}                    -> {ms, outputs, probabilities}: 16 kHz int16 samples of that
//                                                 stream; one output (uint8) and probability per model call
import * as qnnweb from "../qnnweb.js";
import { MicroFrontend } from "../qnnweb-audio.js";
import { dequantize, preprocessPlan, resizeCrop, rgbToInput, topK } from "../qnnweb-image.js";

const models = new Map(); // key -> {model, x}
const streams = new Map(); // key -> {frontend, frames}: a wake-word model's audio stream, frames not yet run
const FRAMES_PER_CALL = 3; // a microWakeWord model's input is [1, 3, 40]: three 10 ms feature frames

// numpy's round (half to even)
function roundHalfEven(x) {
  const r = Math.round(x);
  return r - x === 0.5 && r % 2 !== 0 ? r - 1 : r;
}

// The frames as the model's input, quantized as pymicro-wakeword's MicroWakeWord.process_streaming_prob does:
// np.round(feature / scale + zero_point).astype(int8) (an Int8Array wraps as that cast does).
function quantizeFrames(frames, tensor) {
  const x = new Int8Array(tensor.size);
  frames.forEach((frame, f) => frame.forEach((v, i) => {
    x[f * frame.length + i] = roundHalfEven(v / tensor.scale + tensor.zero_point);
  }));
  return x;
}

// The photo (RGB bytes at the input's size) through the model: its outputs and the run's time.
function runOn(key, rgb, mean, std) {
  const entry = models.get(key);
  const { model } = entry;
  entry.x = rgbToInput(rgb, model.inputs[0], mean, std);
  const t0 = performance.now();
  const outs = model.run([entry.x]);
  return { model, ms: performance.now() - t0, outs };
}

// A photo as Pillow reads it: no colour management, no premultiplied alpha.
const DECODE = { colorSpaceConversion: "none", premultiplyAlpha: "none" };

const ops = {
  async pixels({ image, pre, w, h, plan }) {
    let bitmap = image;
    if (image instanceof Blob) {
      try {
        bitmap = await createImageBitmap(image, DECODE);
      } catch (err) {
        const error = new Error(`not an image this browser can decode (${err.message})`);
        error.name = "DecodeError";
        throw error;
      }
    }
    const W = bitmap.width, H = bitmap.height;
    const ctx = new OffscreenCanvas(W, H).getContext("2d", { willReadFrequently: true });
    ctx.drawImage(bitmap, 0, 0);
    bitmap.close();
    const rgba = ctx.getImageData(0, 0, W, H).data;
    const p = plan || preprocessPlan(pre, W, H, w, h);
    let rgb = resizeCrop(rgba, W, H, 4, p.rw, p.rh, p.x0, p.y0, p.cw, p.ch);
    if (p.cw !== w || p.ch !== h) {
      rgb = resizeCrop(rgb, p.cw, p.ch, 3, w, h, 0, 0, w, h); // a crop that is not the input size
      p.text += `, resized to ${w}×${h}`;
    }
    return { rgb, plan: p, photoSize: [W, H] };
  },
  async load({ url, variant, threads, kernelsURL }) {
    const key = `${url}|${variant || "auto"}|${threads || "auto"}`;
    const options = kernelsURL ? { variant, threads, kernelsURL } : { variant, threads };
    if (!models.has(key)) models.set(key, { model: await qnnweb.load(url, options), x: null });
    return { key, info: models.get(key).model.info() };
  },
  classify({ key, rgb, mean, std, k, logits }) {
    const { model, ms, outs } = runOn(key, rgb, mean, std);
    const raw = dequantize(outs[0], model.outputs[0]);
    return { ms, variant: model.variant, threads: model.info().threads, raw, top: topK(raw, k, logits) };
  },
  run({ key, rgb, mean, std }) {
    const { model, ms, outs } = runOn(key, rgb, mean, std);
    const outputs = {};
    model.outputs.forEach((tensor, i) => { outputs[tensor.name] = dequantize(outs[i], tensor); });
    return { ms, variant: model.variant, threads: model.info().threads, outputs };
  },
  rerun({ key }) {
    const entry = models.get(key);
    const t0 = performance.now();
    entry.model.run([entry.x]);
    return performance.now() - t0;
  },
  listen({ key }) {
    models.get(key).model.reset();
    streams.set(key, { frontend: new MicroFrontend(), frames: [] });
    return null;
  },
  hear({ key, samples }) {
    const { model } = models.get(key);
    const stream = streams.get(key);
    const [output] = model.outputs;
    stream.frames.push(...stream.frontend.process(samples));
    const result = { ms: 0, outputs: [], probabilities: [] };
    while (stream.frames.length >= FRAMES_PER_CALL) {
      const [q] = model.run([quantizeFrames(stream.frames.splice(0, FRAMES_PER_CALL), model.inputs[0])]);
      result.ms += model.lastRunMs;
      result.outputs.push(q[0]);
      result.probabilities.push((q[0] - output.zero_point) * output.scale);
    }
    return result;
  },
};

self.onmessage = async ({ data }) => {
  const { id, op } = data;
  try {
    postMessage({ id, ok: true, result: await ops[op](data) });
  } catch (err) {
    postMessage({ id, ok: false, error: { name: err.name, message: err.message } });
  }
};
