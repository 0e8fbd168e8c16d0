// qnnweb demo page. The models run in web/qnnweb.js, the JavaScript runtime, on the models the
// server compiled with qnnweb's Python frontend (.qnn), in a worker (workers/inference.js); Python
// (Pyodide + the qnnweb wheel) starts in another worker (workers/python.js) for the Python panel
// and scripts, and is never on the way to a result. The main thread only draws: no long tasks.
// Plain ES modules, no bundler, nothing loaded from outside this server.
//
// Test hooks: document.body.dataset.state is "loading" | "ready" | "running" | "done" | "error";
// dataset.started is "1" once the runtime and the lists are up; dataset.python is "loading" |
// "ready" | "failed"; dataset.pending counts queued tasks; dataset.runs counts finished ones.
// #results holds <li> with data-label / data-index / data-score (and data-box for a detection);
// #results carries data-model / data-photo / data-variant / data-engine / data-task. #latency and
// #latency-median carry data-ms (and data-n). window.qnnwebDemo: runPython(source, globals) -> stdout
// (in the Python worker), the last run's numbers (lastDetections / lastLandmarks for those tasks),
// firstResultMs (performance.now() at the first result) and longTasks (over 50 ms).
//
// Each model's sidecar names its task (/api/models `task`): classification shows the top classes;
// detection draws boxes and keypoints over the photo, landmarks the points (settings: `postprocess`).
//
// ?variant=scalar|simd128|relaxed forces a kernel build, ?threads=N a thread count (a value that is
// neither is dropped, with a notice in #notice; default: the
// runtime's, min(4, cores) on this cross-origin isolated page); ?model=NAME and ?photo=NAME pick the
// first run's model and photo; ?autorun=0 waits for a click instead of classifying at once.

import { outputToRGB } from "./qnnweb-image.js";
import { decodeBoxes, maskArgmax, nms, scaleLandmarks, sigmoid, ssdAnchors } from "./qnnweb-vision.js";

const VARIANTS = ["relaxed", "simd128", "scalar"];
const API_URL = new URL("../api/", import.meta.url).href; // this module is /static/app.js, under any prefix
const DEFAULT_MODEL = "efficientnet_lite0_u8s8";
// Shown first, in this order (the rest of /api/samples follows).
const PREFERRED_SAMPLES = ["chelsea.png", "coffee.png", "astronaut.png", "grace_hopper.jpg", "dog.jpg"];
const HISTORY = 10; // latency median over this many runs (per model and variant)
const MODEL_SETTLE_MS = 300; // a model choice runs once it has rested this long
const BENCH_RUNS = 10;
const $ = (id) => document.getElementById(id);
const body = document.body;
// For tests and the curious (DevTools): runPython (the page's Python, in its worker), the RGB bytes that went into the last
// run (after resize and crop), its raw output (dequantized floats) and the top-k shown.
window.qnnwebDemo = {
  runPython, lastInput: null, lastOutput: null, lastTop: null, lastPreprocess: null, firstResultMs: null,
  lastDetections: null, lastLandmarks: null, lastROI: null, lastMask: null, lastImage: null, longTasks: [],
};
try {
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) window.qnnwebDemo.longTasks.push({ start: e.startTime, ms: e.duration });
  }).observe({ type: "longtask", buffered: true });
} catch (_) {
  /* no Long Tasks API in this browser */
}

const page = {
  models: new Map(), // name -> record from /api/models
  loaded: new Map(), // `${name}|${variant}|${threads}` -> {key, info}: a model loaded in the inference worker
  samples: new Map(), // name -> url
  upload: null, // {name, blob} of the user's own photo
  variant: null, // null = let qnnweb pick
  threads: null, // null = the runtime's default
  kernelsURL: null, // /api/models' kernels_url: the kernel modules under their digest (immutable)
  history: new Map(), // `${name}|${variant}|${threads}` -> latencies (ms) of the last HISTORY runs
  last: null, // {key, name, photo, variant}: what the Python side holds as the last input
  camera: null, // {stream, frames, times} while the camera runs
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
      $("status").textContent = `${err.context || label}: see above.`;
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

// Workers answer {id, ok, result | error}; call() turns that into a promise.
function workerClient(url) {
  const worker = new Worker(url, { type: "module" });
  const waiting = new Map();
  let next = 0;
  worker.addEventListener("message", ({ data }) => {
    if (data.id === undefined || !waiting.has(data.id)) return;
    const { resolve, reject } = waiting.get(data.id);
    waiting.delete(data.id);
    if (data.ok) resolve(data);
    else {
      const err = new Error(data.error && data.error.message !== undefined ? data.error.message : data.error);
      err.name = (data.error && data.error.name) || "Error";
      err.stdout = data.stdout;
      reject(err);
    }
  });
  worker.addEventListener("error", (e) => {
    for (const { reject } of waiting.values()) reject(new Error(`worker ${url}: ${e.message}`));
    waiting.clear();
  });
  return {
    worker,
    call(message, transfer = []) {
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ ...message, id }, transfer);
      });
    },
  };
}

const inference = workerClient(new URL("workers/inference.js", import.meta.url));
const infer = async (message, transfer) => (await inference.call(message, transfer)).result;

// Python starts at once, in its own worker; runPython waits for it.
let python = null;
const pythonReady = new Promise((resolve, reject) => {
  python = workerClient(new URL("workers/python.js", import.meta.url));
  python.worker.addEventListener("message", ({ data }) => {
    if (data.type === "ready") resolve(data.version);
    if (data.type === "failed") reject(new Error(data.error));
  });
});
pythonReady.catch(() => {}); // shown in the Python panel

/** Run Python source in the Python worker (Pyodide, qnnweb installed); resolves to its stdout. */
async function runPython(source, globals = {}) {
  await pythonReady;
  return (await python.call({ op: "run", source, globals })).stdout;
}

function watchPython() {
  const status = $("python-status");
  body.dataset.python = "loading";
  pythonReady.then(
    (version) => {
      body.dataset.python = "ready";
      status.textContent = `ready: qnnweb in Pyodide ${version}, in a worker`;
      $("python-run").disabled = false;
    },
    (err) => {
      body.dataset.python = "failed";
      status.textContent = `Python did not start: ${err.message}`;
    },
  );
  fetch(new URL("examples/classify.py", import.meta.url)).then((r) => r.text()).then((text) => {
    if (!$("python-source").value) $("python-source").value = text;
  });
  $("python-run").addEventListener("click", async () => {
    const out = $("python-output");
    $("python-run").disabled = true;
    out.textContent = "running in Python (Pyodide, worker)…";
    const t0 = performance.now();
    try {
      const stdout = await runPython($("python-source").value);
      out.textContent = `${stdout}\n[Python (Pyodide in a worker): ${fmtMs(performance.now() - t0)}]`;
    } catch (err) {
      out.textContent = `${err.stdout ? err.stdout + "\n" : ""}${errorText(err).details}`;
    } finally {
      $("python-run").disabled = false;
    }
  });
}

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

function fillSelect(select, items) {
  select.replaceChildren();
  for (const { value, text, title = "", disabled = false } of items) {
    const opt = document.createElement("option");
    opt.value = value;
    opt.textContent = text;
    opt.title = title;
    opt.disabled = disabled;
    select.append(opt);
  }
}

const usable = (name) => page.models.has(name) && !page.models.get(name).error;

// A model in the list: title · task · size, "speed test only" when its sidecar says its answers mean
// nothing (unless the title says so already), and why the server cannot use it: such a model stays
// listed, but cannot be chosen.
function modelOption(m) {
  const parts = [m.title || m.name, m.task || "classification", kb(m.size)];
  if (m.speed_only && !/speed test only/i.test(m.title || "")) parts.push("speed test only");
  if (m.error) parts.push(`unusable: ${m.error.length > 80 ? m.error.slice(0, 79) + "…" : m.error}`);
  const title = m.error || (m.speed_only ? "random weights: its answers mean nothing, only its speed does" : "");
  return { value: m.name, text: parts.join(" · "), title, disabled: Boolean(m.error) };
}

function kb(bytes) {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} KB`;
}

async function loadLists() {
  const [{ models, kernels_url }, { samples }] = await Promise.all([fetchJSON(API_URL + "models"),
    fetchJSON(API_URL + "samples")]);
  page.kernelsURL = kernels_url && new URL(kernels_url, location.href).href; // immutable URLs of this version
  for (const m of models) page.models.set(m.name, m);
  fillSelect($("model-select"), models.map(modelOption));
  const rank = (name) => {
    const i = PREFERRED_SAMPLES.indexOf(name);
    return i < 0 ? PREFERRED_SAMPLES.length : i;
  };
  const ordered = [...samples].sort((a, b) => rank(a.name) - rank(b.name) || a.name.localeCompare(b.name));
  for (const s of ordered) page.samples.set(s.name, s.url);
  fillSelect(
    $("photo-select"),
    ordered.map((s) => ({ value: s.name, text: s.name })),
  );
  fillThumbs(ordered);
  if (!models.length) throw new Error("the server has no models (run ./build.sh build)");
  // ?model= and ?photo= that name nothing here are dropped with a notice (the caller says so)
  const ignored = [];
  const params = new URLSearchParams(location.search);
  const model = params.get("model");
  if (model && !page.models.has(model)) {
    ignored.push(`?model=${model}: no such model (the list has ${[...page.models.keys()].join(", ")})`);
    setQueryParam("model", null);
  } else if (model && !usable(model)) {
    ignored.push(`?model=${model}: unusable (${page.models.get(model).error})`);
    setQueryParam("model", null);
  }
  const wanted = [model, DEFAULT_MODEL].find((n) => n && usable(n));
  if (wanted) $("model-select").value = wanted; // else the browser's choice: the first option not disabled
  const photo = params.get("photo");
  if (photo && page.samples.has(photo)) $("photo-select").value = photo;
  else if (photo) {
    ignored.push(`?photo=${photo}: no such sample photo`);
    setQueryParam("photo", null);
  }
  markThumb();
  return ignored;
}

function fillThumbs(samples) {
  const box = $("thumbs");
  box.replaceChildren();
  for (const s of samples) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "thumb";
    b.dataset.photo = s.name;
    b.title = s.name;
    b.disabled = true;
    const img = document.createElement("img");
    img.src = s.url;
    img.alt = s.name;
    img.loading = "lazy";
    b.append(img);
    b.addEventListener("click", () => {
      $("photo-select").value = s.name;
      markThumb();
      runNow();
    });
    box.append(b);
  }
}

function markThumb() {
  const value = $("photo-select").value;
  for (const b of document.querySelectorAll("#thumbs .thumb")) b.classList.toggle("active", b.dataset.photo === value);
}

function readVariantParam() {
  const v = new URLSearchParams(location.search).get("variant");
  if (v === null || v === "" || v === "auto") return null;
  if (!VARIANTS.includes(v)) throw new Error(`?variant=${v}: use one of ${VARIANTS.join(", ")}`);
  return v;
}

function readThreadsParam() {
  const t = new URLSearchParams(location.search).get("threads");
  if (t === null || t === "" || t === "auto") return null;
  if (!/^[1-9][0-9]*$/.test(t)) throw new Error(`?threads=${t}: use a positive integer or auto`);
  return parseInt(t, 10);
}

let modelTimer = null; // a model choice waiting to rest (MODEL_SETTLE_MS)

// Every run the user asks for: one for the current choices (a model choice still resting is part of it).
function runNow() {
  clearTimeout(modelTimer);
  modelTimer = null;
  enqueue("Run failed", runSelected);
}

function setQueryParam(name, value) {
  const url = new URL(location.href);
  if (value === null) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  history.replaceState(null, "", url);
}

const CONTROLS = ["model-select", "photo-select", "photo-file", "variant-select", "threads-select", "run", "bench",
  "camera"];

async function main() {
  body.dataset.state = "loading";
  try {
    // A mistyped parameter (?variant=fast) is dropped with a notice; the page starts all the same.
    const ignored = [];
    for (const [name, read] of [["variant", readVariantParam], ["threads", readThreadsParam]]) {
      try {
        page[name] = read();
      } catch (err) {
        page[name] = null;
        ignored.push(err.message);
        setQueryParam(name, null);
      }
    }
    $("variant-select").value = page.variant || "";
    const threadsSelect = $("threads-select");
    if (page.threads !== null && ![...threadsSelect.options].some((o) => o.value === String(page.threads))) {
      threadsSelect.add(new Option(String(page.threads), String(page.threads)));
    }
    threadsSelect.value = page.threads === null ? "" : String(page.threads);
    watchPython();
    ignored.push(...(await loadLists()));
    if (ignored.length) {
      $("notice").textContent = `Ignored ${ignored.join("; ")}.`;
      $("notice").hidden = false;
    }
  } catch (err) {
    doneLoading("Failed to start."); // nothing is loading any more: no busy progress bar
    showError("Start-up failed", err);
    body.dataset.state = "error";
    return;
  }
  for (const id of CONTROLS) $(id).disabled = false;
  for (const b of document.querySelectorAll("#thumbs .thumb")) b.disabled = false;
  doneLoading("Ready: qnnweb.js runs the compiled models; Python is loading in a worker.");
  body.dataset.state = "ready";
  body.dataset.started = "1";

  $("run").addEventListener("click", runNow);
  $("bench").addEventListener("click", () => enqueue("Benchmark failed", benchmark));
  $("camera").addEventListener("click", () => (page.camera ? stopCamera() : startCamera()));
  // Arrow keys in the model list fire a change per step: the model is loaded once the choice rests
  // (MODEL_SETTLE_MS), not once per model passed over.
  $("model-select").addEventListener("change", () => {
    clearTimeout(modelTimer);
    modelTimer = setTimeout(runNow, MODEL_SETTLE_MS);
  });
  $("photo-select").addEventListener("change", () => {
    markThumb();
    runNow();
  });
  $("variant-select").addEventListener("change", () => {
    page.variant = $("variant-select").value || null;
    setQueryParam("variant", page.variant);
    runNow();
  });
  $("threads-select").addEventListener("change", () => {
    const value = $("threads-select").value;
    page.threads = value ? parseInt(value, 10) : null;
    setQueryParam("threads", value || null);
    runNow();
  });
  $("photo-file").addEventListener("change", () => usePhotoFile($("photo-file").files[0]));
  // A photo dropped anywhere on the page is the user's own photo, as if picked with the file input.
  document.addEventListener("dragover", (e) => {
    if (![...e.dataTransfer.types].includes("Files")) return;
    e.preventDefault();
    body.classList.add("dropping");
  });
  document.addEventListener("dragleave", (e) => {
    if (e.relatedTarget === null) body.classList.remove("dropping");
  });
  document.addEventListener("drop", (e) => {
    body.classList.remove("dropping");
    const file = [...(e.dataTransfer.files || [])][0];
    if (!file) return;
    e.preventDefault();
    usePhotoFile(file);
  });
  if (new URLSearchParams(location.search).get("autorun") !== "0") runNow();
}

// The user's own photo (file input or drop): listed first in the photo list, and run.
function usePhotoFile(file) {
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
  markThumb();
  runNow();
}

// ---------------------------------------------------------------- one run

async function getModel(name) {
  const cacheKey = `${name}|${page.variant || "auto"}|${page.threads || "auto"}`;
  if (page.loaded.has(cacheKey)) return page.loaded.get(cacheKey);
  const record = page.models.get(name);
  if (!record) throw new Error(`unknown model ${name}`);
  $("loader").classList.remove("idle");
  setStatus(`Loading ${record.file} (compiled by the server)…`);
  let entry;
  try {
    entry = await infer({ op: "load", url: record.compiled_url, variant: page.variant, threads: page.threads,
                          kernelsURL: page.kernelsURL });
  } catch (err) {
    doneLoading(`Could not load ${record.file}.`);
    if (err && typeof err === "object") err.context = `Cannot load model ${record.file}`;
    throw err;
  }
  page.loaded.set(cacheKey, entry);
  doneLoading(`Loaded ${record.file} (${entry.info.variant} kernels, ${threadsText(entry.info.threads)}).`);
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
  if (s.length === 4 && s[1] === 3 && s[3] !== 3) return { h: s[2], w: s[3], layout: "NCHW" };
  if (s.length === 4 && s[3] === 3) return { h: s[1], w: s[2], layout: "NHWC" };
  if (s.length === 3 && s[2] === 3) return { h: s[0], w: s[1], layout: "HWC" };
  throw new Error(`input shape [${s}] is not an RGB image`);
}

// ---------------------------------------------------------------- preprocessing

// Python's round(): halves go to the even neighbour (the sidecars' crop offsets use it).
function roundHalfEven(x) {
  const f = Math.floor(x);
  const d = x - f;
  if (d > 0.5) return f + 1;
  if (d < 0.5) return f;
  return f % 2 === 0 ? f : f + 1;
}

// What to do with a photo of imgW x imgH for a model input of w x h, from the model's metadata:
// with a numeric `resize`, the shorter side goes to `resize` (the longer to int(resize * long /
// short), as torchvision does) and a centred `crop` (default: the input size) is cut out at
// round((size - crop) / 2); otherwise the whole photo is resized to the input size.
function preprocessPlan(pre, imgW, imgH, w, h) {
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

// src: pixels with `channels` bytes each (RGB or RGBA), inW x inH. Resize to outW x outH and return
// the window [x0, x0 + cw) x [y0, y0 + ch) of the result as RGB bytes.
function resizeCrop(src, inW, inH, channels, outW, outH, x0, y0, cw, ch) {
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

// Decode the photo without colour management (as Pillow reads it), resize and crop it as the
// model's metadata says, show what the model sees. Returns H*W*3 RGB bytes.
// planFor(W, H): where in the photo the model looks (default: the sidecar's preprocessing).
async function photoToRGB(name, source, pre, w, h, planFor = null) {
  let bitmap;
  try {
    bitmap = await createImageBitmap(source, { colorSpaceConversion: "none", premultiplyAlpha: "none" });
  } catch (err) {
    throw new Error(`${name} is not an image this browser can decode (${err.message})`);
  }
  const full = document.createElement("canvas");
  full.width = bitmap.width;
  full.height = bitmap.height;
  const fctx = full.getContext("2d", { willReadFrequently: true });
  fctx.drawImage(bitmap, 0, 0);
  bitmap.close();
  const W = full.width, H = full.height;
  const rgba = fctx.getImageData(0, 0, W, H).data;
  const plan = planFor ? planFor(W, H) : preprocessPlan(pre, W, H, w, h);
  let rgb = resizeCrop(rgba, W, H, 4, plan.rw, plan.rh, plan.x0, plan.y0, plan.cw, plan.ch);
  if (plan.cw !== w || plan.ch !== h) {
    rgb = resizeCrop(rgb, plan.cw, plan.ch, 3, w, h, 0, 0, w, h); // a crop that is not the input size
    plan.text += `, resized to ${w}×${h}`;
  }

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
  window.qnnwebDemo.lastPreprocess = { photo: [W, H], ...plan };
  return { rgb, plan, photoSize: [W, H] };
}

// After a failed run no photo is shown (nor what the model saw): nothing on screen belongs to an
// earlier run.
function clearPhoto() {
  const img = $("photo");
  if (img.dataset.objectUrl) URL.revokeObjectURL(img.dataset.objectUrl);
  delete img.dataset.objectUrl;
  img.removeAttribute("src");
  $("photo-name").textContent = "";
  const seen = $("input-canvas");
  seen.getContext("2d").clearRect(0, 0, seen.width, seen.height);
}

function showPhoto(name, blob) {
  const img = $("photo");
  if (img.dataset.objectUrl) URL.revokeObjectURL(img.dataset.objectUrl);
  const url = URL.createObjectURL(blob);
  img.dataset.objectUrl = url;
  img.src = url;
  $("photo-name").textContent = name;
}

function threadsText(n) {
  return n === 1 ? "1 thread" : `${n} threads`;
}

function showModelInfo(name, info, record) {
  $("variant").textContent = info.variant;
  $("variant").dataset.variant = info.variant;
  $("threads").textContent = info.threads;
  $("threads").dataset.threads = info.threads;
  $("threads-note").textContent = info.threads_note || "";
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
    `${name} (${record.format}): ${inp.dtype} [${inp.shape}] → ${out.dtype} [${out.shape}], ${ops} ops, ` +
    `weights ${kb(info.weight_bytes || 0)}, arena ${kb(info.arena_bytes || 0)}`;
  $("model-summary").title = [record.title, record.description].filter(Boolean).join(": ");
  $("model-info").textContent = JSON.stringify(info, null, 2);
}

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

function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

function fmtMs(ms) {
  return ms >= 100 ? `${ms.toFixed(0)} ms` : `${ms.toFixed(1)} ms`;
}

// One more latency for the current model and variant: show it, the median of the last runs and
// the list of those runs.
function recordLatency(key, ms) {
  const h = page.history.get(key) || [];
  h.push(ms);
  while (h.length > HISTORY) h.shift();
  page.history.set(key, h);
  $("latency").textContent = fmtMs(ms);
  $("latency").dataset.ms = String(ms);
  showMedian(key);
}

function showMedian(key) {
  const h = page.history.get(key) || [];
  const el = $("latency-median");
  if (!h.length) {
    el.textContent = "–";
    delete el.dataset.ms;
    delete el.dataset.n;
    $("latency-runs").textContent = "";
    return;
  }
  const m = median(h);
  el.textContent = `${fmtMs(m)} (last ${h.length} run${h.length > 1 ? "s" : ""})`;
  el.dataset.ms = String(m);
  el.dataset.n = String(h.length);
  $("latency-runs").textContent = h.map((v) => v.toFixed(1)).join(" · ");
}

function isLogits(record) {
  const meaning = (record.output && record.output.meaning) || "";
  if (meaning) return /logit/i.test(meaning);
  return false; // TFLite demo models end in SOFTMAX: their outputs already are probabilities
}

function clearShown() {
  $("results").replaceChildren();
  for (const k of ["model", "photo", "variant", "engine", "task"]) delete $("results").dataset[k];
  $("engine").textContent = "–";
  $("latency").textContent = "–";
  delete $("latency").dataset.ms;
  $("latency-total").textContent = "";
  $("latency-median").textContent = "–";
  delete $("latency-median").dataset.ms;
  delete $("latency-median").dataset.n;
  $("latency-runs").textContent = "";
  $("variant").textContent = "–";
  delete $("variant").dataset.variant;
  $("kernels").replaceChildren();
  $("model-summary").textContent = "–";
  $("preprocess").textContent = "–";
  $("model-info").textContent = "";
  $("results-title").textContent = "Results";
  $("scores-kind").textContent = "";
  const overlay = $("overlay");
  overlay.getContext("2d").clearRect(0, 0, overlay.width, overlay.height);
  window.qnnwebDemo.lastOutput = null;
  window.qnnwebDemo.lastTop = null;
  window.qnnwebDemo.lastDetections = null;
  window.qnnwebDemo.lastLandmarks = null;
  window.qnnwebDemo.lastROI = null;
  window.qnnwebDemo.lastMask = null;
  window.qnnwebDemo.lastImage = null;
  $("result-image").hidden = true;
  page.last = null;
}

async function runSelected() {
  if (page.camera) stopCamera({ clear: false }); // a photo the user asks for ends the camera
  try {
    await runOnce(photoBlob());
  } catch (err) {
    clearPhoto();
    throw err;
  }
}

// The selected model on a photo ({name, blob}, or a promise of it: fetched while the model loads) or a
// camera frame ({name: "camera", frame: the video}).
async function runOnce(photoOrPromise) {
  const name = $("model-select").value;
  if (!name) throw new Error("pick a model");
  const record = page.models.get(name);
  // Clear the previous answer first, so nothing stale is on screen if this run fails (camera frames
  // replace it in place instead: no flicker between frames).
  if (!photoOrPromise.frame) clearShown();

  const [{ key: modelKey, info }, photo] = await Promise.all([getModel(name), photoOrPromise]);
  showModelInfo(name, info, record);
  const { h, w, layout } = inputSize(info.inputs[0]);
  const pre = record.preprocess || {};
  const t0 = performance.now();
  const task = record.task || "classification";
  // a landmark model fed by a detector (Face Mesh after BlazeFace, as MediaPipe runs them): the
  // detector finds the face first, the landmark model sees that square of the photo
  const roi = task === "landmarks" && (record.postprocess || {}).roi
    ? await detectorROI(record, photo.name, photo.frame || photo.blob, w, h) : null;
  const { rgb, plan, photoSize } = await photoToRGB(photo.name, photo.frame || photo.blob, pre, w, h,
                                                    roi && roi.planFor);
  if (!photo.frame) showPhoto(photo.name, photo.blob);
  const mean = pre.mean || [0, 0, 0];
  const std = pre.std || [1, 1, 1];
  $("preprocess").textContent =
    `${plan.text} (Pillow's bilinear); (pixel − [${mean}]) / [${std}]; ${layout} ${info.inputs[0].dtype}`;
  const show = TASKS[task];
  if (!show) throw new Error(`${record.file} is a ${task} model: the page cannot show its outputs yet`);
  let result;
  if (task === "classification") {
    const logits = isLogits(record);
    const k = Math.min(5, (record.labels || []).length || 5);
    result = await infer({ op: "classify", key: modelKey, rgb, mean, std, k, logits });
    window.qnnwebDemo.lastOutput = result.raw;
  } else {
    result = await infer({ op: "run", key: modelKey, rgb, mean, std });
    window.qnnwebDemo.lastOutput = result.outputs;
  }
  const meta = { model: name, photo: photo.name, variant: result.variant, engine: "qnnweb.js", task };
  show(record, result, { plan, photoSize, meta, info, roi });
  const total = performance.now() - t0;

  // latencies are kept per model, photo, variant and thread count: a median never mixes inputs
  const key = `${name}|${photo.name}|${result.variant}|${result.threads}`;
  recordLatency(key, result.ms);
  $("latency-total").textContent = `(${fmtMs(total)} with decoding, resizing and post-processing)`;
  $("variant").textContent = result.variant;
  $("variant").dataset.variant = result.variant;
  $("engine").textContent = "qnnweb.js (JavaScript runtime, compiled model, worker)";
  if (window.qnnwebDemo.firstResultMs === null) window.qnnwebDemo.firstResultMs = performance.now();
  page.last = { key, modelKey, name, photo: photo.name, variant: result.variant, threads: result.threads };
  setStatus(`${name} on ${photo.name}: ${fmtMs(result.ms)} with ${result.variant} kernels on ${threadsText(result.threads)}.`, 1);
}

// ---------------------------------------------------------------- showing each task's outputs

const COLORS = ["#ffd43b", "#51cf66", "#ff6b6b", "#4dabf7", "#f783ac", "#a9e34b"];

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

// Model input coordinates (normalized to the crop window the model saw) -> photo pixels.
function photoMapper(plan, [W, H]) {
  return (u, v) => [((plan.x0 + u * plan.cw) * W) / plan.rw, ((plan.y0 + v * plan.ch) * H) / plan.rh];
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

// A detector's outputs as detections (SSD anchors, sigmoid scores, non-maximum suppression), as its
// sidecar's postprocess says.
function detections(record, outputs) {
  const pp = record.postprocess || {};
  const a = pp.anchors;
  if (!a) throw new Error(`${record.file}: its sidecar has no SSD anchor settings (postprocess.anchors)`);
  const [boxes, scores] = namedOutputs(record, outputs, [pp.boxes, pp.scores]);
  const anchors = ssdAnchors(a.input_size, a.strides, a.anchors_per_cell, a.offset ?? 0.5);
  const found = decodeBoxes(boxes, scores, anchors, a.input_size, pp.keypoints || 0, pp.min_score ?? 0.5);
  return nms(found, pp.iou_threshold ?? 0.3, pp.max_detections ?? null, Boolean(pp.weighted));
}

// The square of the photo a landmark model should see: the detector named by the sidecar's
// postprocess.roi finds the best face; its box, squared and scaled by roi.scale (MediaPipe: 1.5), kept
// inside the photo. Returns {planFor, detection, box: [x0, y0, x1, y1] in photo pixels}, or null when
// the detector finds nothing.
async function detectorROI(record, name, source, w, h) {
  const spec = record.postprocess.roi;
  const detector = page.models.get(spec.detector);
  if (!detector) throw new Error(`${record.file}: its sidecar's detector ${spec.detector} is not on this server`);
  const { key, info } = await getModel(spec.detector);
  const input = inputSize(info.inputs[0]);
  const pre = detector.preprocess || {};
  const { rgb, plan, photoSize } = await photoToRGB(name, source, pre, input.w, input.h);
  const result = await infer({ op: "run", key, rgb, mean: pre.mean || [0, 0, 0], std: pre.std || [1, 1, 1] });
  const [best] = detections(detector, result.outputs);
  if (!best) return null;
  const at = photoMapper(plan, photoSize);
  const [W, H] = photoSize;
  const [x0, y0] = at(best.box[1], best.box[0]);
  const [x1, y1] = at(best.box[3], best.box[2]);
  const side = Math.min(Math.max(x1 - x0, y1 - y0) * (spec.scale ?? 1.5), W, H);
  const left = Math.max(0, Math.min(W - side, (x0 + x1) / 2 - side / 2));
  const top = Math.max(0, Math.min(H - side, (y0 + y1) / 2 - side / 2));
  const planFor = () => {
    // the photo scaled so that the square is w x h, then that window of it
    const s = w / side;
    const rw = Math.max(w, Math.round(W * s)), rh = Math.max(h, Math.round(H * s));
    const px = Math.min(rw - w, Math.round(left * s)), py = Math.min(rh - h, Math.round(top * s));
    return { rw, rh, x0: px, y0: py, cw: w, ch: h,
             text: `the face ${spec.detector} found: a ${Math.round(side)} px square at (${Math.round(left)}, ` +
                   `${Math.round(top)}), resized to ${w}×${h}` };
  };
  return { planFor, detection: best, box: [x0, y0, x1, y1] };
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

  const at = photoMapper(plan, photoSize);
  const ctx = overlayFor(photoSize, at);
  ctx.fillStyle = COLORS[1];
  const side = (plan.cw * photoSize[0]) / plan.rw; // the square the model saw, in photo pixels
  for (const [u, v] of points) dot(ctx, ...at(u, v), Math.max(1, side / 200));
  showResults([[0, score]], record.labels || ["face"], meta, true);
  $("results").querySelector("li").dataset.points = String(points.length);
  $("results-title").textContent = `${points.length} landmarks`;
  const where = !pp.roi ? "" : roi ? `; in the face ${pp.roi.detector} found (dashed square)`
    : `; ${pp.roi.detector} found no face: the photo's centre square`;
  $("scores-kind").textContent = (pp.score ? "presence score (sigmoid of the model's logit)" : "") + where;
  window.qnnwebDemo.lastLandmarks = points;
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
  $("scores-kind").textContent = `share of the pixels; ${background} below a score of ${pp.min_score ?? "–"}`;
  window.qnnwebDemo.lastMask = mask;
}

function showImage(record, result, { meta, info }) {
  const pp = record.postprocess || {};
  const [values] = namedOutputs(record, result.outputs, [pp.image]);
  const { rgb, width, height } = outputToRGB(values, outputShape(info, pp.image), pp.range || [0.0, 1.0]);
  const canvas = $("result-canvas");
  canvas.width = width;
  canvas.height = height;
  const pixels = new ImageData(width, height);
  for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) pixels.data.set([rgb[j], rgb[j + 1], rgb[j + 2], 255], i);
  canvas.getContext("2d").putImageData(pixels, 0, 0);
  $("result-size").textContent = `${width}×${height}`;
  $("result-image").hidden = false;
  showResults([], [], meta, true);
  $("results-title").textContent = "Result";
  const input = inputSize(info.inputs[0]);
  $("scores-kind").textContent = `${width}×${height} from the ${input.w}×${input.h} input`;
  window.qnnwebDemo.lastImage = rgb;
}

const TASKS = {
  classification: showClasses, detection: showDetections, landmarks: showLandmarks, segmentation: showSegmentation,
  "image-to-image": showImage,
};

// ---------------------------------------------------------------- camera

// The camera's frames go through the selected model one after another (each a queued task, so the
// controls still work between frames), with the frame rate and the model's latency shown live.
async function startCamera() {
  let stream;
  try {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      throw new Error("this browser gives pages no camera (it needs https or localhost)");
    }
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "user" }, audio: false });
  } catch (err) {
    showError("Camera unavailable", err);
    return;
  }
  const video = $("camera-video");
  video.srcObject = stream;
  await video.play();
  clearPhoto();
  $("photo").hidden = true;
  video.hidden = false;
  $("photo-name").textContent = "camera";
  const camera = { stream, frames: 0, times: [] };
  page.camera = camera;
  body.dataset.camera = "on";
  $("camera").textContent = "Stop camera";
  while (page.camera === camera) {
    await enqueue("Camera frame failed", () => cameraFrame(camera));
    if (body.dataset.state === "error") stopCamera({ clear: false }); // the error stays on screen
    await new Promise((r) => requestAnimationFrame(r)); // let the page paint the frame's result
  }
}

async function cameraFrame(camera) {
  if (page.camera !== camera) return; // stopped while this frame waited in the queue
  await runOnce({ name: "camera", frame: $("camera-video") });
  if (page.camera !== camera) return;
  camera.frames += 1;
  const now = performance.now();
  camera.times.push(now);
  while (camera.times.length > 1 && now - camera.times[0] > 2000) camera.times.shift();
  const span = (camera.times[camera.times.length - 1] - camera.times[0]) / 1000;
  const fps = span > 0 ? (camera.times.length - 1) / span : 0;
  const stats = $("camera-stats");
  stats.textContent = `${fps.toFixed(1)} frames/s · model ${$("latency").textContent}`;
  stats.dataset.fps = String(fps);
  stats.dataset.frames = String(camera.frames);
}

// clear: also take the last frame's results off the screen (after a frame still running), unless a
// photo's run replaces them anyway.
function stopCamera({ clear = true } = {}) {
  if (!page.camera) return;
  for (const track of page.camera.stream.getTracks()) track.stop();
  page.camera = null;
  const video = $("camera-video");
  video.srcObject = null;
  video.hidden = true;
  $("photo").hidden = false;
  body.dataset.camera = "off";
  $("camera").textContent = "Camera";
  $("camera-stats").textContent = "";
  if (clear) enqueue("Camera", async () => clearShown());
}

// Run the last input BENCH_RUNS more times (after a fresh run if the selection changed), one at a
// time so the page stays responsive, and show every latency and the median.
async function benchmark() {
  const name = $("model-select").value;
  const photo = $("photo-select").value.replace(/^upload:/, "");
  const sameVariant = !page.variant || (page.last && page.last.variant === page.variant);
  const sameThreads = !page.threads || (page.last && page.last.threads === page.threads);
  if (!page.last || page.last.name !== name || page.last.photo !== photo || !sameVariant || !sameThreads) {
    await runSelected();
  }
  const { key } = page.last;
  for (let i = 1; i <= BENCH_RUNS; i++) {
    setStatus(`Benchmark: run ${i} of ${BENCH_RUNS}…`, (i - 1) / BENCH_RUNS);
    await new Promise((r) => setTimeout(r, 0)); // let the page paint
    recordLatency(key, await infer({ op: "rerun", key: page.last.modelKey }));
  }
  const m = median(page.history.get(key));
  setStatus(`Benchmark: median ${fmtMs(m)} over the last ${page.history.get(key).length} runs (${page.last.variant} kernels).`, 1);
}

main();
