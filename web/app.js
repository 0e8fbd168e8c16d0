// qnnweb demo page. The models run in web/qnnweb.js, the JavaScript runtime, on the models the
// server compiled with qnnweb's Python frontend (.qnn), in a worker (workers/inference.js); Python
// (Pyodide + the qnnweb wheel) starts in another worker (workers/python.js) for the Python panel
// and scripts, and is never on the way to a result. The main thread only draws: no long tasks.
// Plain ES modules, no bundler, nothing loaded from outside this server. This module is the entry
// point: start-up (URL parameters, the lists), the controls and the run flow; the parts live in
// web/demo/ (one module per concern: state, ui, workers, models, photo, tasks, roi, run-info, queue,
// camera, wakeword, python-panel).
//
// Test hooks: document.body.dataset.state is "loading" | "ready" | "running" | "done" | "error";
// dataset.started is "1" once the runtime and the lists are up; dataset.python is "loading" |
// "ready" | "failed"; dataset.pending counts queued tasks; dataset.runs counts finished ones;
// dataset.camera is "on" | "off" (#camera-stats carries data-fps and data-frames while it runs).
// #results holds <li> with data-label / data-index / data-score (and data-box for a detection,
// data-points for landmarks); #results carries data-model / data-photo / data-variant / data-engine /
// data-task. #latency and #latency-median carry data-ms (and data-n). window.qnnwebDemo:
// runPython(source, globals) -> stdout (in the Python worker), the last run's numbers (lastDetections /
// lastLandmarks for those tasks), firstResultMs (performance.now() at the first result) and longTasks
// (over 50 ms).
//
// Each model's sidecar names its task (/api/models `task`): classification shows the top classes;
// detection draws boxes and keypoints over the photo, landmarks the points, segmentation the mask;
// image-to-image shows the picture (settings: `postprocess`). A wake-word model hears the microphone
// instead of a photo (demo/wakeword.js: Listen, a live plot, "detected"; its test hooks are listed there).
//
// ?variant=scalar|simd128|relaxed forces a kernel build, ?threads=N a thread count (a value that is
// neither is dropped, with a notice in #notice; default: the
// runtime's, min(4, cores) on this cross-origin isolated page); ?model=NAME and ?photo=NAME pick the
// first run's model and photo (one that names nothing usable here is dropped, with a notice) and
// follow the controls (a shared link brings back the model and sample photo on screen);
// ?autorun=0 waits for a click instead of classifying at once.

import { startCamera, stopCamera } from "./demo/camera.js";
import { fillModelList, getModel, usable } from "./demo/models.js";
import { clearPhoto, fillThumbs, inputSize, markThumb, photoBlob, photoToRGB, sampleChosen, showPhoto,
  watchPhotoInputs } from "./demo/photo.js";
import { watchPython } from "./demo/python-panel.js";
import { enqueue } from "./demo/queue.js";
import { detectorROI } from "./demo/roi.js";
import { clearShown, median, recordLatency, showModelInfo, showNote } from "./demo/run-info.js";
import { page } from "./demo/state.js";
import { isLogits, runTitle, TASKS } from "./demo/tasks.js";
import { $, doneLoading, fillSelect, fmtMs, setQueryParam, setStatus, showError, showNotice, threadsText }
  from "./demo/ui.js";
import { showWakeWord, startListening, stopListening } from "./demo/wakeword.js";
import { infer, runPython } from "./demo/workers.js";

const VARIANTS = ["relaxed", "simd128", "scalar"];
const API_URL = new URL("../api/", import.meta.url).href; // this module is /static/app.js, under any prefix
const DEFAULT_MODEL = "efficientnet_lite0_u8s8";
// Shown first, in this order (the rest of /api/samples follows).
const PREFERRED_SAMPLES = ["chelsea.png", "coffee.png", "astronaut.png", "grace_hopper.jpg", "dog.jpg"];
const MODEL_SETTLE_MS = 300; // a model choice runs once it has rested this long
const BENCH_RUNS = 10;
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

// ---------------------------------------------------------------- start-up

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

// The model and photo lists (and the thumbnails), with ?model= and ?photo= chosen. Returns what it
// ignored of those parameters (the caller says so).
async function loadLists() {
  const [{ models, kernels_url }, { samples }] = await Promise.all([fetchJSON(API_URL + "models"),
    fetchJSON(API_URL + "samples")]);
  page.kernelsURL = kernels_url && new URL(kernels_url, location.href).href; // immutable URLs of this version
  for (const m of models) page.models.set(m.name, m);
  fillModelList($("model-select"), models);
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
  fillThumbs(ordered, photoChosen);
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
  showRunTitle();
  return ignored;
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

// Run's tooltip says what it does for the chosen model's task.
function showRunTitle() {
  $("run").title = runTitle(page.models.get($("model-select").value));
}

// The URL names the chosen model and sample photo (keeping the other parameters), so a shared link brings
// them back; the user's own photo is not in it.
function rememberChoices() {
  setQueryParam("model", $("model-select").value || null);
  const photo = $("photo-select").value;
  setQueryParam("photo", page.samples.has(photo) ? photo : null);
}

// A photo chosen (thumbnail, list, file or drop): the URL names it, and it runs.
function photoChosen() {
  rememberChoices();
  runNow();
}

// A model chosen. Arrow keys in the model list fire a change per step: the model runs once the choice
// rests (MODEL_SETTLE_MS), not once per model passed over. The camera keeps running: its next frame
// runs the new model (the old model's answer leaves the screen), unless that is a wake-word model,
// which hears the microphone: then the camera stops, and says so.
function modelChosen() {
  const name = $("model-select").value;
  showRunTitle();
  rememberChoices();
  clearTimeout(modelTimer);
  modelTimer = null;
  if (page.camera && page.models.get(name).task !== "wake-word") {
    enqueue("Camera", async () => clearShown());
    return;
  }
  if (page.camera) {
    stopCamera();
    showNotice(`The camera stopped: ${name} is a wake-word model, it hears the microphone (Listen).`);
  }
  modelTimer = setTimeout(runNow, MODEL_SETTLE_MS);
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
      showNotice(`Ignored ${ignored.join("; ")}.`);
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
  $("camera").addEventListener("click", () => (page.camera ? stopCamera() : startCamera(runOnce)));
  $("listen").addEventListener("click", () => (page.listening ? stopListening()
    : enqueue("Microphone unavailable", startListening)));
  $("model-select").addEventListener("change", modelChosen);
  $("photo-select").addEventListener("change", () => {
    sampleChosen();
    photoChosen();
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
  $("compare-slider").addEventListener("input", () => {
    $("compare").style.setProperty("--split", `${$("compare-slider").value}%`); // before | after
  });
  watchPhotoInputs(photoChosen);
  if (new URLSearchParams(location.search).get("autorun") !== "0") runNow();
}

// ---------------------------------------------------------------- one run

async function runSelected() {
  if (page.camera) stopCamera({ clear: false }); // a photo the user asks for ends the camera
  const name = $("model-select").value;
  if (page.models.has(name) && page.models.get(name).task === "wake-word") return readyToListen(name);
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
  if (record.task === "wake-word") {
    throw new Error(`${record.file} is a wake-word model: it hears the microphone (Listen)`);
  }
  showWakeWord(null); // a photo's run ends listening
  body.dataset.task = record.task; // the page's layout for it (style.css)

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
                                                    roi && roi.plan);
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
  show(record, result, { rgb, plan, photoSize, meta, info, roi });
  showNote(record);
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

// A wake-word model loaded, its panel shown (listening to the microphone waits for Listen: a user's choice).
async function readyToListen(name) {
  const record = page.models.get(name);
  clearShown();
  clearPhoto();
  const { key, info } = await getModel(name);
  showModelInfo(name, info, record);
  showWakeWord(record, key);
  showNote(record);
  $("engine").textContent = "qnnweb.js (JavaScript runtime, compiled model, worker)";
  setStatus(`${name} loaded: press Listen to run it on the microphone.`, 1);
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
  if (!page.last) throw new Error("the benchmark times a model on a photo (a wake-word model hears the microphone)");
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
