// The demo page's inference worker: web/qnnweb.js runs the server's compiled models here, off the
// page's main thread. Messages {id, op, ...} get {id, ok, result} or {id, ok: false, error}:
//   load     {url, variant, threads, kernelsURL} -> {key, info}    (kept: later ops name it by key)
//   classify {key, rgb, mean, std, k, logits}  -> {ms, variant, threads, raw, top}
//   rerun    {key}                             -> ms (the last input again)
import * as qnnweb from "../qnnweb.js";
import { dequantize, rgbToInput, topK } from "../qnnweb-image.js";

const models = new Map(); // key -> {model, x}

const ops = {
  async load({ url, variant, threads, kernelsURL }) {
    const key = `${url}|${variant || "auto"}|${threads || "auto"}`;
    const options = kernelsURL ? { variant, threads, kernelsURL } : { variant, threads };
    if (!models.has(key)) models.set(key, { model: await qnnweb.load(url, options), x: null });
    return { key, info: models.get(key).model.info() };
  },
  classify({ key, rgb, mean, std, k, logits }) {
    const entry = models.get(key);
    const { model } = entry;
    entry.x = rgbToInput(rgb, model.inputs[0], mean, std);
    const t0 = performance.now();
    const [out] = model.run([entry.x]);
    const ms = performance.now() - t0;
    const raw = dequantize(out, model.outputs[0]);
    return { ms, variant: model.variant, threads: model.info().threads, raw, top: topK(raw, k, logits) };
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
