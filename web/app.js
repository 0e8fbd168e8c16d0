// qnnweb demo page: Pyodide runs the qnnweb Python package, which runs int8 models on
// WebAssembly kernels. Plain ES module, no bundler, nothing loaded from outside this server.
//
// Test hooks: document.body.dataset.state is "loading" | "ready" | "running" | "done" | "error";
// dataset.pending counts queued tasks; dataset.runs counts finished ones. #results holds <li>
// with data-label / data-score; #results carries data-model / data-photo / data-variant.

const VARIANTS = ["relaxed", "simd128", "scalar"];
const $ = (id) => document.getElementById(id);
const body = document.body;
window.qnnwebDemo = { lastInput: null }; // for tests: the RGB bytes of the last run

const page = {
  pyodide: null,
  helpers: null, // Python functions: loadModel, describeModel, classify
  models: new Map(), // name -> record from /api/models
  loaded: new Map(), // `${name}|${variant}` -> {model: PyProxy, info}
  samples: new Map(), // name -> url
  upload: null, // {name, blob} of the user's own photo
  variant: null, // null = let qnnweb pick
};

// ---------------------------------------------------------------- status, errors, task queue

function setStatus(text, fraction = null) {
  $("status").textContent = text;
  const bar = $("progress");
  if (fraction === null) bar.removeAttribute("value");
  else bar.value = Math.max(0, Math.min(1, fraction));
}

function doneLoading(text) {
  $("status").textContent = text;
  $("progress").value = 1;
  $("loader").classList.add("idle");
}

function errorText(err) {
  // Pyodide's PythonError carries the whole traceback: the last line is the readable part.
  const msg = String(err && err.message ? err.message : err).trim();
  const lines = msg.split("\n").map((l) => l.trim()).filter(Boolean);
  return { summary: lines.length ? lines[lines.length - 1] : "unknown error", details: msg };
}

function showError(context, err) {
  const { summary, details } = errorText(err);
  const box = $("error");
  box.replaceChildren();
  const strong = document.createElement("strong");
  strong.textContent = context + ": ";
  box.append(strong, document.createTextNode(summary));
  if (details !== summary) {
    const more = document.createElement("details");
    const s = document.createElement("summary");
    s.textContent = "details";
    const pre = document.createElement("pre");
    pre.textContent = details;
    more.append(s, pre);
    box.append(more);
  }
  box.hidden = false;
  console.error(context, err);
}

function clearError() {
  $("error").hidden = true;
  $("error").replaceChildren();
}

let queue = Promise.resolve();
let pending = 0;
let runs = 0;

// Tasks run one at a time, in order; the page state reflects the last finished task.
function enqueue(label, task) {
  pending += 1;
  body.dataset.pending = String(pending);
  body.dataset.state = "running";
  queue = queue.then(async () => {
    let ok = true;
    clearError();
    try {
      await task();
    } catch (err) {
      ok = false;
      showError(err.context || label, err);
    }
    pending -= 1;
    runs += 1;
    body.dataset.pending = String(pending);
    body.dataset.runs = String(runs);
    if (pending === 0) body.dataset.state = ok ? "done" : "error";
  });
  return queue;
}

// ---------------------------------------------------------------- start-up

const PY_HELPERS = `
import json
import qnnweb
import qnnweb.image
from js import performance


def _tensor(t):
    return {"name": t.name, "shape": list(t.shape), "dtype": t.dtype,
            "scale": t.scale, "zero_point": t.zero_point}


async def load_model(url, variant, progress):
    return await qnnweb.load_async(url, variant=variant or None, progress=progress)


def describe_model(model):
    info = model.info()
    info["variant"] = model.variant
    info["inputs"] = [_tensor(t) for t in model.inputs]
    info["outputs"] = [_tensor(t) for t in model.outputs]
    return json.dumps(info, default=str)


def classify(model, rgb, mean_std_json, k):
    mean, std = json.loads(mean_std_json)
    x = qnnweb.image.rgb_to_input(rgb.to_bytes(), model.inputs[0], mean, std)
    t0 = performance.now()
    outputs = model.run(x)
    ms = performance.now() - t0
    top = qnnweb.image.top_k(outputs[0], model.outputs[0], k)
    return json.dumps({"ms": ms, "variant": model.variant,
                       "top": [[int(i), float(s)] for i, s in top]})
`;

async function fetchJSON(url) {
  const res = await fetch(url);
  let data = null;
  try {
    data = await res.json();
  } catch (_) {
    /* not JSON */
  }
  if (!res.ok) {
    const detail = data && data.detail ? data.detail : res.statusText;
    throw new Error(`${url}: HTTP ${res.status}: ${detail}`);
  }
  return data;
}

async function startPyodide() {
  setStatus("Loading Pyodide (Python for WebAssembly)…");
  const { loadPyodide } = await import("/pyodide/pyodide.mjs");
  const pyodide = await loadPyodide({ indexURL: "/pyodide/" });

  setStatus("Installing qnnweb…", 0.6);
  const { wheels } = await fetchJSON("/api/wheels");
  const urls = wheels.map((u) => new URL(u, location.href).href);
  await pyodide.loadPackage(urls, {
    messageCallback: (msg) => setStatus(msg, 0.7),
    errorCallback: (msg) => console.warn(msg),
  });
  setStatus("Importing qnnweb…", 0.9);
  const ns = pyodide.globals.get("dict")();
  await pyodide.runPythonAsync(PY_HELPERS, { globals: ns });
  page.pyodide = pyodide;
  page.helpers = {
    loadModel: ns.get("load_model"),
    describeModel: ns.get("describe_model"),
    classify: ns.get("classify"),
  };
}

function fillSelect(select, items) {
  select.replaceChildren();
  for (const { value, text } of items) {
    const opt = document.createElement("option");
    opt.value = value;
    opt.textContent = text;
    select.append(opt);
  }
}

function kb(bytes) {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} KB`;
}

async function loadLists() {
  const [{ models }, { samples }] = await Promise.all([fetchJSON("/api/models"), fetchJSON("/api/samples")]);
  for (const m of models) page.models.set(m.name, m);
  fillSelect(
    $("model-select"),
    models.map((m) => ({
      value: m.name,
      text: `${m.name} (${m.format}, ${kb(m.size)}${m.error ? ", unusable" : ""})`,
    })),
  );
  for (const s of samples) page.samples.set(s.name, s.url);
  fillSelect(
    $("photo-select"),
    samples.map((s) => ({ value: s.name, text: s.name })),
  );
  if (!models.length) throw new Error("the server has no models (run ./build.sh build)");
}

function readVariantParam() {
  const v = new URLSearchParams(location.search).get("variant");
  if (v === null || v === "" || v === "auto") return null;
  if (!VARIANTS.includes(v)) throw new Error(`?variant=${v}: use one of ${VARIANTS.join(", ")}`);
  return v;
}

async function main() {
  body.dataset.state = "loading";
  try {
    page.variant = readVariantParam();
    $("variant-select").value = page.variant || "";
    await Promise.all([startPyodide(), loadLists()]);
  } catch (err) {
    setStatus("Failed to start.");
    showError("Start-up failed", err);
    body.dataset.state = "error";
    return;
  }
  for (const id of ["model-select", "photo-select", "photo-file", "variant-select", "run"]) $(id).disabled = false;
  doneLoading(`Ready: Python ${page.pyodide.version ? "(Pyodide " + page.pyodide.version + ")" : ""}`);
  body.dataset.state = "ready";

  $("run").addEventListener("click", () => enqueue("Run failed", runSelected));
  $("model-select").addEventListener("change", () => enqueue("Run failed", runSelected));
  $("photo-select").addEventListener("change", () => enqueue("Run failed", runSelected));
  $("variant-select").addEventListener("change", () => {
    page.variant = $("variant-select").value || null;
    const url = new URL(location.href);
    if (page.variant) url.searchParams.set("variant", page.variant);
    else url.searchParams.delete("variant");
    history.replaceState(null, "", url);
    enqueue("Run failed", runSelected);
  });
  $("photo-file").addEventListener("change", () => {
    const file = $("photo-file").files[0];
    if (!file) return;
    page.upload = { name: file.name, blob: file };
    const select = $("photo-select");
    let opt = select.querySelector('option[data-upload="1"]');
    if (!opt) {
      opt = document.createElement("option");
      opt.dataset.upload = "1";
      select.prepend(opt);
    }
    opt.value = "upload:" + file.name;
    opt.textContent = `your photo: ${file.name}`;
    select.value = opt.value;
    enqueue("Run failed", runSelected);
  });
}

// ---------------------------------------------------------------- one run

async function getModel(name) {
  const key = `${name}|${page.variant || "auto"}`;
  if (page.loaded.has(key)) return page.loaded.get(key);
  const record = page.models.get(name);
  if (!record) throw new Error(`unknown model ${name}`);
  $("loader").classList.remove("idle");
  setStatus(`Downloading ${record.file}…`, 0);
  const progress = (loaded, total) => {
    const t = total || record.size;
    setStatus(`Downloading ${record.file}: ${kb(loaded)} / ${kb(t)}`, t ? loaded / t : null);
  };
  let model;
  try {
    model = await page.helpers.loadModel(record.url, page.variant, progress);
  } catch (err) {
    doneLoading(`Could not load ${record.file}.`);
    if (err && typeof err === "object") err.context = `Cannot load model ${record.file}`;
    throw err;
  }
  const info = JSON.parse(page.helpers.describeModel(model));
  const entry = { model, info };
  page.loaded.set(key, entry);
  doneLoading(`Loaded ${record.file} (${info.variant} kernels).`);
  return entry;
}

async function photoBlob() {
  const value = $("photo-select").value;
  if (value.startsWith("upload:") && page.upload) return { name: page.upload.name, blob: page.upload.blob };
  const url = page.samples.get(value);
  if (!url) throw new Error("pick a photo");
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return { name: value, blob: await res.blob() };
}

function inputSize(tensor) {
  const s = tensor.shape;
  if (s.length === 4 && s[3] === 3) return { h: s[1], w: s[2] }; // NHWC
  if (s.length === 4 && s[1] === 3) return { h: s[2], w: s[3] }; // NCHW
  if (s.length === 3 && s[2] === 3) return { h: s[0], w: s[1] };
  throw new Error(`input shape [${s}] is not an RGB image`);
}

// Bilinear resampling exactly as Pillow's Image.resize(size, Image.BILINEAR) does it for 8-bit
// RGB (the model tests prepare photos that way): a triangle filter widened by the scale when
// shrinking (antialiased), 22-bit fixed-point weights, horizontal pass first, then vertical.
const PRECISION_BITS = 22;
const ONE = 1 << PRECISION_BITS;

function resampleCoeffs(inSize, outSize) {
  const scale = inSize / outSize;
  const filterscale = Math.max(scale, 1.0);
  const support = 1.0 * filterscale; // bilinear filter support is 1
  const ksize = Math.ceil(support) * 2 + 1;
  const bounds = new Int32Array(outSize * 2);
  const kk = new Float64Array(outSize * ksize);
  for (let xx = 0; xx < outSize; xx++) {
    const center = (xx + 0.5) * scale;
    const ss = 1.0 / filterscale;
    let xmin = Math.trunc(center - support + 0.5);
    if (xmin < 0) xmin = 0;
    let xmax = Math.trunc(center + support + 0.5);
    if (xmax > inSize) xmax = inSize;
    xmax -= xmin;
    let ww = 0.0;
    const w = new Float64Array(xmax);
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
  const v = Math.floor(ss / ONE);
  return v < 0 ? 0 : v > 255 ? 255 : v;
}

// src: RGB(A) bytes with `channels` per pixel -> RGB bytes of outW x outH.
function resizeBilinear(src, inW, inH, channels, outW, outH) {
  let cur = src;
  let curW = inW;
  let curC = channels;
  if (outW !== inW) {
    const { ksize, bounds, kk } = resampleCoeffs(inW, outW);
    const out = new Uint8Array(outW * inH * 3);
    for (let y = 0; y < inH; y++) {
      for (let xx = 0; xx < outW; xx++) {
        const xmin = bounds[xx * 2];
        const xmax = bounds[xx * 2 + 1];
        let r = ONE / 2, g = ONE / 2, b = ONE / 2;
        for (let x = 0; x < xmax; x++) {
          const k = kk[xx * ksize + x];
          const i = (y * curW + x + xmin) * curC;
          r += cur[i] * k;
          g += cur[i + 1] * k;
          b += cur[i + 2] * k;
        }
        const o = (y * outW + xx) * 3;
        out[o] = clip8(r);
        out[o + 1] = clip8(g);
        out[o + 2] = clip8(b);
      }
    }
    cur = out;
    curW = outW;
    curC = 3;
  }
  if (outH !== inH) {
    const { ksize, bounds, kk } = resampleCoeffs(inH, outH);
    const out = new Uint8Array(curW * outH * 3);
    for (let yy = 0; yy < outH; yy++) {
      const ymin = bounds[yy * 2];
      const ymax = bounds[yy * 2 + 1];
      for (let x = 0; x < curW; x++) {
        let r = ONE / 2, g = ONE / 2, b = ONE / 2;
        for (let y = 0; y < ymax; y++) {
          const k = kk[yy * ksize + y];
          const i = ((y + ymin) * curW + x) * curC;
          r += cur[i] * k;
          g += cur[i + 1] * k;
          b += cur[i + 2] * k;
        }
        const o = (yy * curW + x) * 3;
        out[o] = clip8(r);
        out[o + 1] = clip8(g);
        out[o + 2] = clip8(b);
      }
    }
    cur = out;
    curC = 3;
  }
  if (curC === 3) return cur;
  const rgb = new Uint8Array(outW * outH * 3); // same size: just drop alpha
  for (let i = 0, j = 0; j < rgb.length; i += curC, j += 3) {
    rgb[j] = cur[i];
    rgb[j + 1] = cur[i + 1];
    rgb[j + 2] = cur[i + 2];
  }
  return rgb;
}

// Decode the photo without colour management (as Pillow reads it), resize the whole photo to
// the model's input size (no crop) and show what the model sees. Returns H*W*3 RGB bytes.
async function photoToRGB(blob, w, h) {
  const bitmap = await createImageBitmap(blob, { colorSpaceConversion: "none", premultiplyAlpha: "none" });
  const full = document.createElement("canvas");
  full.width = bitmap.width;
  full.height = bitmap.height;
  const fctx = full.getContext("2d", { willReadFrequently: true });
  fctx.drawImage(bitmap, 0, 0);
  bitmap.close();
  const rgba = fctx.getImageData(0, 0, full.width, full.height).data;
  const rgb = resizeBilinear(rgba, full.width, full.height, 4, w, h);

  const canvas = $("input-canvas");
  canvas.width = w;
  canvas.height = h;
  const view = new ImageData(w, h);
  for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) {
    view.data[i] = rgb[j];
    view.data[i + 1] = rgb[j + 1];
    view.data[i + 2] = rgb[j + 2];
    view.data[i + 3] = 255;
  }
  canvas.getContext("2d").putImageData(view, 0, 0);
  window.qnnwebDemo.lastInput = rgb;
  return rgb;
}

function showPhoto(name, blob) {
  const img = $("photo");
  if (img.dataset.objectUrl) URL.revokeObjectURL(img.dataset.objectUrl);
  const url = URL.createObjectURL(blob);
  img.dataset.objectUrl = url;
  img.src = url;
  $("photo-name").textContent = name;
}

function showModelInfo(name, info) {
  $("variant").textContent = info.variant;
  $("variant").dataset.variant = info.variant;
  const k = $("kernels");
  k.replaceChildren();
  for (const [op, fn] of Object.entries(info.kernels || {})) {
    const li = document.createElement("li");
    li.innerHTML = "<span></span>: <code></code>";
    li.firstChild.textContent = op;
    li.lastChild.textContent = fn;
    k.append(li);
  }
  const inp = info.inputs[0];
  const out = info.outputs[0];
  const ops = (info.ops || []).length;
  $("model-summary").textContent =
    `${name}: ${inp.dtype} [${inp.shape}] → ${out.dtype} [${out.shape}], ${ops} ops, ` +
    `weights ${kb(info.weight_bytes || 0)}, arena ${kb(info.arena_bytes || 0)}`;
  $("model-info").textContent = JSON.stringify(info, null, 2);
}

function showResults(top, labels, meta) {
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
    const bar = document.createElement("span");
    bar.className = "bar";
    const fill = document.createElement("span");
    fill.style.width = `${Math.max(0, Math.min(1, score)) * 100}%`;
    bar.append(fill);
    const value = document.createElement("span");
    value.className = "score";
    value.textContent = score.toFixed(3);
    li.append(name, bar, value);
    ol.append(li);
  }
  Object.assign(ol.dataset, meta);
}

async function runSelected() {
  const name = $("model-select").value;
  if (!name) throw new Error("pick a model");
  const record = page.models.get(name);
  // Clear the previous answer first, so nothing stale is on screen if this run fails.
  $("results").replaceChildren();
  for (const k of ["model", "photo", "variant"]) delete $("results").dataset[k];
  $("latency").textContent = "–";
  delete $("latency").dataset.ms;
  $("latency-total").textContent = "";
  $("variant").textContent = "–";
  delete $("variant").dataset.variant;
  $("kernels").replaceChildren();
  $("model-summary").textContent = "–";
  $("model-info").textContent = "";

  const [{ model, info }, photo] = await Promise.all([getModel(name), photoBlob()]);
  showModelInfo(name, info);
  showPhoto(photo.name, photo.blob);
  const { h, w } = inputSize(info.inputs[0]);
  const rgb = await photoToRGB(photo.blob, w, h);

  const pre = record.preprocess || {};
  const mean = pre.mean || [0, 0, 0];
  const std = pre.std || [1, 1, 1];
  const k = Math.min(5, (record.labels || []).length || 5);
  const t0 = performance.now();
  const result = JSON.parse(page.helpers.classify(model, rgb, JSON.stringify([mean, std]), k));
  const total = performance.now() - t0;

  $("latency").textContent = `${result.ms.toFixed(1)} ms`;
  $("latency").dataset.ms = String(result.ms);
  $("latency-total").textContent = `(${total.toFixed(1)} ms with pre/post-processing)`;
  $("variant").textContent = result.variant;
  $("variant").dataset.variant = result.variant;
  showResults(result.top, record.labels, { model: name, photo: photo.name, variant: result.variant });
  setStatus(`${name} on ${photo.name}: ${result.ms.toFixed(1)} ms with ${result.variant} kernels.`, 1);
}

main();
