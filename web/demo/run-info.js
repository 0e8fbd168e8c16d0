// What the page shows of a run besides its results: the model's facts (kernels, threads, shapes,
// sizes), the note on its answers, the latency and the median of the last runs; clearShown takes a run off
// the screen.
import { modelNote } from "./models.js";
import { page } from "./state.js";
import { $, describeCanvas, fmtMs, kb } from "./ui.js";

const HISTORY = 10; // latency median over this many runs (per model, photo, variant and thread count)

export function showModelInfo(name, info, record) {
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

// Beside the answers, what to make of them (demo/models.js's modelNote), if the model's sidecar says.
export function showNote(record) {
  const note = modelNote(record);
  $("result-note").textContent = note || "";
  $("result-note").hidden = !note;
}

export function median(values) {
  const s = [...values].sort((a, b) => a - b);
  const n = s.length;
  return n % 2 ? s[(n - 1) / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

// One more latency for the run `key` names: show it, the median of the last runs and the list of
// those runs.
export function recordLatency(key, ms) {
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

// Nothing of the last run stays on screen (nor in window.qnnwebDemo): its results, its facts, what
// was drawn over the photo, an output image.
export function clearShown() {
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
  $("result-note").hidden = true;
  const overlay = $("overlay");
  overlay.getContext("2d").clearRect(0, 0, overlay.width, overlay.height);
  describeCanvas(overlay, null);
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
