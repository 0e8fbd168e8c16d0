// A wake-word model (sidecar task "wake-word": a microWakeWord streaming model) hears the microphone. Listen
// starts getUserMedia; an AudioWorklet (workers/audio-worklet.js) resamples it to 16 kHz int16 and posts 30 ms
// chunks; the inference worker turns them into feature frames (qnnweb-audio.js), runs the model every 3 frames
// and answers its probabilities. As pymicro-wakeword decides: "detected" when the mean of the last
// sliding_window_size probabilities passes the sidecar's probability_cutoff. The plot shows the probabilities
// and that mean over the last PLOT_SECONDS, the cutoff as a dashed line.
//
// The model's latency per call is the page's latency (its median over the last calls too).
//
// Test hooks: body.dataset.listening is "on" | "off"; #wakeword-state carries data-detections (how many
// times the mean rose past the cutoff) and data-calls; window.qnnwebDemo.wakeword is {outputs (the model's
// uint8 outputs), means, samples() (the 16 kHz int16 samples the frontend was given, the first
// MAX_KEPT_SECONDS)}.
import { recordLatency } from "./run-info.js";
import { page } from "./state.js";
import { $, showError } from "./ui.js";
import { infer } from "./workers.js";

const WORKLET = new URL("../workers/audio-worklet.js", import.meta.url);
const CALL_SECONDS = 0.03; // a call per 3 feature frames of 10 ms
const PLOT_SECONDS = 10;
const MAX_KEPT_SECONDS = 60;
const COLORS = { cutoff: "#e03131", probability: "#868e96", mean: "#1c7ed6" };
const body = document.body;

let shown = null; // {record, key}: the wake-word model the panel is for

function settings(record) {
  const pp = record.postprocess || {};
  if (typeof pp.probability_cutoff !== "number" || !Number.isInteger(pp.sliding_window_size)) {
    throw new Error(`${record.file}: its sidecar has no wake-word settings ` +
                    "(postprocess.probability_cutoff, sliding_window_size)");
  }
  return { cutoff: pp.probability_cutoff, size: pp.sliding_window_size, phrase: pp.phrase || record.title };
}

// The state line, an aria-live region: its text is replaced only when it changes (each replacement is read out).
function setState(text, detections, calls) {
  const state = $("wakeword-state");
  if (state.textContent !== text) state.textContent = text;
  state.dataset.detections = String(detections);
  state.dataset.calls = String(calls);
}

/** The panel for a wake-word model loaded in the inference worker (`key`), or hidden (record null). */
export function showWakeWord(record, key) {
  stopListening();
  $("wakeword").hidden = !record;
  shown = record ? { record, key } : null;
  if (!record) {
    delete body.dataset.task;
    return;
  }
  body.dataset.task = "wake-word"; // the page's layout without a photo (style.css)
  const { cutoff, size, phrase } = settings(record);
  $("results-title").textContent = `Wake word \u201c${phrase}\u201d`;
  $("scores-kind").textContent = `detected when the mean of the last ${size} probabilities passes ${cutoff}`;
  $("preprocess").textContent = "microphone → 16 kHz int16 (linear interpolation) → " +
    "40 log-mel features per 10 ms (qnnweb-audio.js) → 3 frames per call, int8";
  setState("Not listening: press Listen (the microphone).", 0, 0);
  draw({ probabilities: [], means: [], cutoff });
  window.qnnwebDemo.wakeword = null;
}

export async function startListening() {
  if (!shown) throw new Error("pick a wake-word model first");
  stopListening();
  const { record, key } = shown;
  const { cutoff, size, phrase } = settings(record);
  if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
    throw new Error("this browser gives pages no microphone (it needs https or localhost)");
  }
  const stream = await navigator.mediaDevices.getUserMedia({
    audio: { channelCount: 1, echoCancellation: false, noiseSuppression: false, autoGainControl: false },
  });
  const context = new AudioContext();
  const listening = { stream, context, cutoff, size, phrase, probabilities: [], means: [], outputs: [], heard: [],
                      keptSamples: 0, detections: 0, above: false, drawing: false };
  try {
    await infer({ op: "listen", key });
    await context.audioWorklet.addModule(WORKLET);
    const node = new AudioWorkletNode(context, "resample-16k");
    node.port.onmessage = ({ data }) => hear(listening, key, data);
    context.createMediaStreamSource(stream).connect(node);
    node.connect(context.destination); // silent: pulls the graph, so the worklet runs
    await context.resume();
  } catch (err) {
    for (const track of stream.getTracks()) track.stop();
    context.close();
    throw err;
  }
  page.listening = listening;
  window.qnnwebDemo.wakeword = {
    outputs: listening.outputs, means: listening.means,
    samples: () => listening.heard.flatMap((chunk) => Array.from(chunk)),
  };
  body.dataset.listening = "on";
  $("listen").textContent = "Stop";
  setState(`Listening for \u201c${phrase}\u201d…`, 0, 0);
}

export function stopListening() {
  const listening = page.listening;
  if (!listening) return;
  page.listening = null;
  for (const track of listening.stream.getTracks()) track.stop();
  listening.context.close();
  body.dataset.listening = "off";
  $("listen").textContent = "Listen";
  setState(`Stopped (${listening.detections} detection${listening.detections === 1 ? "" : "s"}).`,
           listening.detections, listening.outputs.length);
}

// A chunk of 16 kHz samples through the model (in the inference worker, which answers in order), then the
// sliding mean and the detection, as pymicro-wakeword's MicroWakeWord.process_streaming: 0 until the window
// is full, "detected" while the mean is above the cutoff.
async function hear(listening, key, samples) {
  if (page.listening !== listening) return;
  if (listening.keptSamples < MAX_KEPT_SECONDS * 16000) {
    listening.heard.push(samples.slice());
    listening.keptSamples += samples.length;
  }
  let result;
  try {
    result = await infer({ op: "hear", key, samples }, [samples.buffer]);
  } catch (err) {
    if (page.listening === listening) stopListening();
    showError("Wake-word model failed", err);
    return;
  }
  if (page.listening !== listening) return; // stopped meanwhile
  if (result.outputs.length) recordLatency(`${key}|microphone`, result.ms / result.outputs.length);
  const { probabilities, means, size, cutoff, phrase } = listening;
  result.outputs.forEach((q, i) => {
    listening.outputs.push(q);
    probabilities.push(result.probabilities[i]);
    const last = probabilities.slice(-size);
    const mean = last.length < size ? 0 : last.reduce((a, b) => a + b, 0) / size;
    means.push(mean);
    if (mean > cutoff && !listening.above) listening.detections += 1;
    listening.above = mean > cutoff;
  });
  setState(listening.above ? `Detected \u201c${phrase}\u201d` : `Listening for \u201c${phrase}\u201d…` +
           (listening.detections ? ` (detected ${listening.detections}×)` : ""), listening.detections,
           listening.outputs.length);
  $("wakeword-state").classList.toggle("detected", listening.above);
  if (!listening.drawing) {
    listening.drawing = true;
    requestAnimationFrame(() => {
      listening.drawing = false;
      draw(listening);
    });
  }
}

// The last PLOT_SECONDS of probabilities (solid) and their sliding mean (thick), the cutoff dashed.
function draw({ probabilities, means, cutoff }) {
  const canvas = $("wakeword-plot");
  const ctx = canvas.getContext("2d");
  const { width, height } = canvas;
  ctx.clearRect(0, 0, width, height);
  const n = Math.round(PLOT_SECONDS / CALL_SECONDS);
  const y = (p) => height - 2 - p * (height - 4);
  const line = (values, color, lineWidth) => {
    const tail = values.slice(-n); // the newest at the right edge
    ctx.strokeStyle = color;
    ctx.lineWidth = lineWidth;
    ctx.beginPath();
    tail.forEach((p, i) => ctx[i ? "lineTo" : "moveTo"](width - (tail.length - 1 - i) * (width / (n - 1)), y(p)));
    ctx.stroke();
  };
  ctx.setLineDash([6, 4]);
  line(new Array(n).fill(cutoff), COLORS.cutoff, 1);
  ctx.setLineDash([]);
  line(probabilities, COLORS.probability, 1);
  line(means, COLORS.mean, 2.5);
}
