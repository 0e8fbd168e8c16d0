// The demo page's inference worker: web/qnnweb.js runs the server's compiled models here, off the
// page's main thread. Messages {id, op, ...} get {id, ok, result} or {id, ok: false, error}:
//   load     {url, variant, threads, kernelsURL} -> {key, info}    (kept: later ops name it by key)
//   classify {key, rgb, mean, std, k, logits}  -> {ms, variant, threads, raw, top}
//   run      {key, rgb, mean, std}             -> {ms, variant, threads, outputs: {name: values}}
//                                                 (every output dequantized: detection, landmarks...)
//   rerun    {key}                             -> ms (the last input again)
import * as qnnweb from "../qnnweb.js";
import { dequantize, rgbToInput, topK } from "../qnnweb-image.js";

const models = new Map(); // key -> {model, x}

// The photo (RGB bytes at the input's size) through the model: its outputs and the run's time.
function runOn(key, rgb, mean, std) {
  const entry = models.get(key);
  const { model } = entry;
  entry.x = rgbToInput(rgb, model.inputs[0], mean, std);
  const t0 = performance.now();
  const outs = model.run([entry.x]);
  return { model, ms: performance.now() - t0, outs };
}

const ops = {
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
};

self.onmessage = async ({ data }) => {
  const { id, op } = data;
  try {
    postMessage({ id, ok: true, result: await ops[op](data) });
  } catch (err) {
    postMessage({ id, ok: false, error: { name: err.name, message: err.message } });
  }
};
