// qnnweb bench page: runs ONE engine on ONE model, as given by the query string, and publishes
// what it measured on window.benchResult for tools/bench/bench.py (./build.sh bench), which drives it
// with Playwright. Everything comes from this server: Pyodide from /pyodide/, the qnnweb wheels
// from /api/wheels, LiteRT.js and onnxruntime-web from /vendor/ (npm packages that
// ./build.sh setup installs into .cache/npm). No CDN.
//
// Query parameters:
//   engine   qnnweb (Pyodide) | qnnweb-js (web/qnnweb.js, no Python) | litert | ort
//   model    URL of the model file (.onnx for ort, .tflite for litert, either for qnnweb, the
//            server's compiled .qnn for qnnweb-js)
//   input    URL of the raw input bytes (the input tensor, little-endian, in the model's layout);
//            without it a deterministic pattern of `dtype` / `shape` (or the model's own) is used
//   dtype    float32 | int8 | uint8 (of the input)       shape  e.g. 1,3,224,224
//   variant  qnnweb kernels: relaxed | simd128 | scalar (default: the best the browser runs);
//            LiteRT.js: compat (its SIMD128-only build; default: the one LiteRT.js picks)
//   kernels  qnnweb.js's kernelsURL (the listing's versioned kernels_url, as the demo passes it;
//            default: qnnweb.js's own, /kernels/)
//   threads  every engine's thread count (default 1): qnnweb's and qnnweb.js's `threads`, ORT's
//            ort.env.wasm.numThreads, LiteRT.js's cpuOptions.numThreads
//   warmup   runs after the first one before window.benchResult.state becomes "ready" (default 0)
//   runs     if given, the page also times this many runs itself (for a person opening the page)
//
// window.benchResult = {state: "loading" | "ready" | "error", error, engine, ttfi_ms (navigation
//   start -> first output, i.e. performance.now() at that point), first_run_ms, stages: {...},
//   first_visit_bytes (transfer sizes of the page and everything it fetched until the first output),
//   output: {dtype, shape, base64}, wasm: [.wasm URLs fetched], info: {...}, versions: {...}}
// window.bench.run(n) -> {ms: [n wall times of one inference as JS sees it], kernel_ms: [...] (qnnweb:
//   model.last_run_ms, the time inside qnn_run)}

// the versions build.sh pins (NPM_BENCH_PACKAGES; the import map in index.html names LiteRT.js's):
// /vendor/{package}@{version}/ URLs are immutable
const ORT_WEB_DIR = "/vendor/onnxruntime-web@1.30.0/dist/";
const LITERT_WASM_DIR = "/vendor/@litertjs/core@2.5.3/wasm/";

const params = new URLSearchParams(location.search);
const engine = params.get("engine") || "qnnweb";
const modelUrl = params.get("model");
const inputUrl = params.get("input");
const threads = Math.max(1, parseInt(params.get("threads") || "1", 10));
const warmup = Math.max(0, parseInt(params.get("warmup") || "0", 10));
const selfRuns = parseInt(params.get("runs") || "0", 10);
const variant = params.get("variant") || "";
const kernelsURL = params.get("kernels") ? new URL(params.get("kernels"), location.href).href : undefined;

const result = {
  state: "loading",
  error: null,
  engine,
  model: modelUrl,
  variant: variant || null,
  threads,
  ttfi_ms: null,
  first_run_ms: null,
  stages: {},
  output: null,
  wasm: [],
  info: {},
  versions: {},
  crossOriginIsolated: self.crossOriginIsolated,
  userAgent: navigator.userAgent,
};
window.benchResult = result;

const $ = (id) => document.getElementById(id);
const stage = (name) => { result.stages[name] = performance.now(); };

function status(text) {
  $("status").textContent = text;
}

function bytesToBase64(bytes) {
  let s = "";
  for (let i = 0; i < bytes.length; i += 0x8000) s += String.fromCharCode.apply(null, bytes.subarray(i, i + 0x8000));
  return btoa(s);
}

const TYPED = { float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int32: Int32Array };

function typedFrom(buffer, dtype) {
  const T = TYPED[dtype];
  if (!T) throw new Error(`input dtype ${dtype} is not supported by the bench page`);
  return new T(buffer);
}

// A deterministic input when no ?input= is given: a fixed pseudo-random pattern.
function patternInput(dtype, shape) {
  const n = shape.reduce((a, b) => a * b, 1);
  const T = TYPED[dtype];
  const out = new T(n);
  let s = 12345;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) >>> 0;
    const b = (s >>> 16) & 0xff;
    out[i] = dtype === "float32" ? (b - 127.5) / 127.5 : dtype === "int8" ? b - 128 : b;
  }
  return out;
}

async function fetchBytes(url) {
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return await res.arrayBuffer();
}

function paramShape() {
  const s = params.get("shape");
  return s ? s.split(",").map((d) => parseInt(d, 10)) : null;
}

function outputRecord(typed, dtype, shape) {
  const bytes = new Uint8Array(typed.buffer, typed.byteOffset, typed.byteLength);
  return { dtype, shape, base64: bytesToBase64(bytes) };
}

// ------------------------------------------------------------------------------------ qnnweb

const PY_BENCH = `
import json
import sys
import qnnweb

STATE = {}


async def setup(url, variant, input_buffer, threads):
    model = await qnnweb.load_async(url, variant=variant or None, threads=threads)
    STATE["model"] = model
    if input_buffer is None or not hasattr(input_buffer, "to_bytes"):
        info = model.inputs[0]
        n = info.nbytes
        STATE["x"] = bytes((i * 7919 + 13) % 251 for i in range(n))
    else:
        STATE["x"] = input_buffer.to_bytes()
    return json.dumps({"variant": model.variant, "info": model.info(), "version": qnnweb.__version__,
                       "snapshot": "_qnnweb_snapshot" in sys.modules})


def run_once():
    STATE["outputs"] = STATE["model"].run(STATE["x"])
    return STATE["model"].last_run_ms


def output_bytes():
    out = STATE["outputs"][0]
    return memoryview(out).cast("B").tobytes()


def profile():
    return json.dumps(STATE["model"].profile_by_family(STATE["x"], repeats=5))


def output_meta():
    info = STATE["model"].outputs[0]
    return json.dumps({"dtype": info.dtype, "shape": list(info.shape)})
`;

async function qnnwebEngine() {
  const { startPyodide } = await import("/static/pyodide-start.js");
  // as the demo's Python worker starts it: the server's memory snapshot when it has one
  const pyodide = await startPyodide();
  stage("runtime_loaded");
  const ns = pyodide.globals.get("dict")();
  await pyodide.runPythonAsync(PY_BENCH, { globals: ns });
  stage("package_loaded");
  const input = inputUrl ? await fetchBytes(inputUrl) : undefined;
  const setup = ns.get("setup");
  const meta = JSON.parse(await setup(new URL(modelUrl, location.href).href, variant, input, threads));
  setup.destroy();
  stage("model_loaded");
  result.info = meta.info;
  result.variant = meta.variant;
  result.versions = { qnnweb: meta.version, pyodide: pyodide.version };
  result.pyodideSnapshot = meta.snapshot;
  const runOnce = ns.get("run_once");
  const outputBytes = ns.get("output_bytes");
  const outputMeta = ns.get("output_meta");
  const profile = ns.get("profile");
  return {
    profile: () => JSON.parse(profile()),
    async runOne() {
      const t0 = performance.now();
      const kernel = runOnce();
      return [performance.now() - t0, kernel];
    },
    output() {
      const m = JSON.parse(outputMeta());
      const proxy = outputBytes();
      const bytes = proxy.toJs();
      proxy.destroy();
      return { dtype: m.dtype, shape: m.shape, base64: bytesToBase64(bytes) };
    },
  };
}

// ------------------------------------------------------------------------- qnnweb.js (compiled model)

async function qnnwebJsEngine() {
  // the model's download starts at once, while the runtime module loads (as a page would do it)
  const modelResponse = fetch(modelUrl);
  const qnnweb = await import("/static/qnnweb.js");
  stage("runtime_loaded");
  const [model, input] = await Promise.all([
    qnnweb.load(modelResponse, { variant: variant || null, threads, kernelsURL }),
    inputUrl ? fetchBytes(inputUrl) : null,
  ]);
  stage("model_loaded");
  const t = model.inputs[0];
  const data = input ? typedFrom(input, t.dtype) : patternInput(t.dtype, t.shape);
  result.info = model.info();
  result.variant = model.variant;
  // the outputs' arrays made once and filled by every run, as a page running many inferences does
  const outputs = model.outputs.map((o) => typedFrom(new ArrayBuffer(o.nbytes), o.dtype));
  let last = null;
  return {
    async runOne() {
      const t0 = performance.now();
      last = model.run([data], outputs);
      return [performance.now() - t0, model.lastRunMs];
    },
    output() {
      const o = model.outputs[0];
      return outputRecord(last[0], o.dtype, o.shape);
    },
  };
}

// ------------------------------------------------------------------------------- onnxruntime-web

async function ortEngine() {
  const ort = await import(`${ORT_WEB_DIR}ort.wasm.min.mjs`);
  ort.env.wasm.numThreads = threads; // explicit: its default depends on the machine
  ort.env.wasm.wasmPaths = ORT_WEB_DIR;
  ort.env.wasm.proxy = false;
  if ("simd" in ort.env.wasm) ort.env.wasm.simd = true;
  ort.env.logLevel = "error";
  result.versions = { "onnxruntime-web": ort.env.versions ? ort.env.versions.web || ort.env.versions.common : null };
  stage("runtime_loaded");
  const [modelBytes, input] = await Promise.all([fetchBytes(modelUrl), inputUrl ? fetchBytes(inputUrl) : null]);
  const session = await ort.InferenceSession.create(new Uint8Array(modelBytes), {
    executionProviders: ["wasm"],
    graphOptimizationLevel: "all",
  });
  stage("model_loaded");
  const name = session.inputNames[0];
  const meta = session.inputMetadata ? session.inputMetadata[0] : null;
  const dtype = params.get("dtype") || (meta && meta.type) || "float32";
  const shape = paramShape() || (meta && meta.shape);
  if (!shape || shape.some((d) => typeof d !== "number")) throw new Error(`input shape unknown: pass ?shape=`);
  const data = input ? typedFrom(input, dtype) : patternInput(dtype, shape);
  const tensor = new ort.Tensor(dtype, data, shape);
  const feeds = { [name]: tensor };
  const outName = session.outputNames[0];
  let last = null;
  result.info = {
    inputs: session.inputNames, outputs: session.outputNames, numThreads: ort.env.wasm.numThreads,
    executionProviders: ["wasm"], simd: ort.env.wasm.simd ?? "always (no non-SIMD build ships)",
  };
  return {
    async runOne() {
      const t0 = performance.now();
      const out = await session.run(feeds);
      const ms = performance.now() - t0;
      if (last) for (const t of Object.values(last)) t.dispose?.();
      last = out;
      return [ms, null];
    },
    output() {
      const t = last[outName];
      return outputRecord(t.data, t.type, Array.from(t.dims));
    },
  };
}

// ------------------------------------------------------------------------------------ LiteRT.js

const LITERT_DTYPES = { float32: "float32", int8: "int8", uint8: "uint8", int32: "int32" };

async function litertEngine() {
  const litert = await import("@litertjs/core");
  // threads > 1 needs the threaded build (relaxed SIMD + cross-origin isolation); variant=compat
  // loads the build LiteRT.js picks where relaxed SIMD is off (Firefox, Safari): SIMD128 only
  if (variant === "compat") await litert.loadLiteRt(`${LITERT_WASM_DIR}litert_wasm_compat_internal.js`);
  else await litert.loadLiteRt(LITERT_WASM_DIR, threads > 1 ? { threads: true } : undefined);
  stage("runtime_loaded");
  const [modelBytes, input] = await Promise.all([fetchBytes(modelUrl), inputUrl ? fetchBytes(inputUrl) : null]);
  const model = await litert.loadAndCompile(new Uint8Array(modelBytes), {
    accelerator: "wasm",
    cpuOptions: { numThreads: threads },
  });
  stage("model_loaded");
  const details = model.getInputDetails()[0];
  const dtype = params.get("dtype") || LITERT_DTYPES[details.dtype] || "float32";
  const shape = paramShape() || Array.from(details.shape);
  const data = input ? typedFrom(input, dtype) : patternInput(dtype, shape);
  const tensor = new litert.Tensor(data, shape);
  let last = null;
  result.info = {
    inputs: model.getInputDetails().map((d) => ({ name: d.name, dtype: d.dtype, shape: Array.from(d.shape) })),
    outputs: model.getOutputDetails().map((d) => ({ name: d.name, dtype: d.dtype, shape: Array.from(d.shape) })),
    accelerator: "wasm",
    numThreads: threads,
  };
  return {
    async runOne() {
      const t0 = performance.now();
      const outs = await model.run(tensor);
      const ms = performance.now() - t0;
      if (last) for (const t of last) t.delete();
      last = outs;
      return [ms, null];
    },
    output() {
      const typed = last[0].toTypedArray();
      const d = model.getOutputDetails()[0];
      const dtype = Object.keys(TYPED).find((k) => typed instanceof TYPED[k]) || String(d.dtype);
      return outputRecord(typed, dtype, Array.from(d.shape));
    },
  };
}

// ------------------------------------------------------------------------------------------ main

function firstVisitBytes() {
  const entries = [...performance.getEntriesByType("navigation"), ...performance.getEntriesByType("resource")];
  return entries.reduce((sum, e) => sum + (e.transferSize || 0), 0);
}

function wasmFiles() {
  return performance
    .getEntriesByType("resource")
    .filter((e) => new URL(e.name).pathname.endsWith(".wasm"))
    .map((e) => new URL(e.name).pathname);
}

async function main() {
  if (!modelUrl) throw new Error("no ?model= given");
  const make = { qnnweb: qnnwebEngine, "qnnweb-js": qnnwebJsEngine, ort: ortEngine, litert: litertEngine }[engine];
  if (!make) throw new Error(`unknown engine ${engine} (qnnweb, qnnweb-js, litert, ort)`);
  status(`loading ${engine}…`);
  const runner = await make();
  const [first] = await runner.runOne();
  result.ttfi_ms = performance.now(); // ms since navigation start
  result.first_run_ms = first;
  result.first_visit_bytes = firstVisitBytes();
  result.output = runner.output();
  for (let i = 0; i < warmup; i++) await runner.runOne();
  result.wasm = wasmFiles();
  window.bench = {
    async run(n) {
      const ms = [];
      const kernel = [];
      for (let i = 0; i < n; i++) {
        const [m, k] = await runner.runOne();
        ms.push(m);
        kernel.push(k);
      }
      return { ms, kernel_ms: kernel };
    },
    output: () => runner.output(),
    // qnnweb: Model.profile_by_family (per op family: ms, ops, GMAC/s); null for the other engines
    profile: () => (runner.profile ? runner.profile() : null),
  };
  result.state = "ready";
  document.body.dataset.state = "ready";
  status(`${engine} ready: first inference at ${result.ttfi_ms.toFixed(0)} ms after navigation`);
  if (selfRuns > 0) {
    const r = await window.bench.run(selfRuns);
    const sorted = [...r.ms].sort((a, b) => a - b);
    result.self = { runs: selfRuns, median_ms: sorted[Math.floor(sorted.length / 2)], min_ms: sorted[0] };
  }
  $("out").textContent = JSON.stringify({ ...result, output: result.output && { ...result.output, base64: "…" } }, null, 2);
}

main().catch((err) => {
  result.state = "error";
  result.error = String(err && err.stack ? err.stack : err);
  result.wasm = wasmFiles();
  document.body.dataset.state = "error";
  status(`error: ${err && err.message ? err.message : err}`);
  console.error(err);
});
