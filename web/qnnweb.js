// qnnweb's JavaScript runtime: runs a compiled model (.qnn, written by qnnweb.compile or served by
// the qnnweb server under /models/NAME.qnn) on the kernel modules, without Python.
//
//   import * as qnnweb from "/static/qnnweb.js";   // or "qnnweb" (the npm package, web/package.json)
//   const model = await qnnweb.load("/models/efficientnet_lite0_u8s8.qnn");   // URL, Response or bytes
//   const [scores] = model.run(input);          // a typed array per input (or {name: array})
//   model.info();                               // variant, threads, inputs, outputs, memory, timings
//
// Threads: on a cross-origin isolated page (COOP/COEP; SharedArrayBuffer) a model runs on
// min(4, cores) threads by default (`load(url, {threads: n})`): the variant's -threads module on one
// shared memory, instantiated by this page and by n - 1 Workers it starts. The caller of run() is
// thread 0 and never blocks in Atomics.wait (it spins), so run() may be called on a page's main thread.
//
// It picks the kernel variant as the Python frontend does: the best of relaxed, simd128, scalar that
// this engine validates (probed with a few-byte module, so only the chosen module is downloaded).
// The file format is documented in py_frontend/qnnweb/compiled.py and the README.

export const VARIANTS = ["relaxed", "simd128", "scalar"];
export const FORMAT_VERSION = 2;  // the newest it reads; files without state are version 1 (see compiled.py)
const STATELESS_FORMAT_VERSION = 1;
export const ABI_VERSION = 15; // wasm_kernels/include/qnnweb.h QNN_ABI_VERSION

const HEADER_BYTES = 32;
const DTYPES = { float32: Float32Array, int8: Int8Array, uint8: Uint8Array, int32: Int32Array, int64: BigInt64Array };

/** An input of ids (its tensor's index_rows: an embedding table's rows): each id within the table, as
 * onnxruntime's Gather requires (ids lie in [-rows, rows)). */
function checkIds(t, ids) {
  const rows = t.dtype === "int64" ? BigInt(t.index_rows) : t.index_rows;
  for (const id of ids) {
    if (id < -rows || id >= rows) {
      throw new RangeError(`input '${t.name}': id ${id} is outside the embedding table's ${t.index_rows} rows (ids lie in [${-t.index_rows}, ${t.index_rows}))`);
    }
  }
}

// (func (param v128 v128) (result v128) local.get 0 local.get 1 <op>): i8x16.add, then the relaxed dot
const PROBES = {
  simd128: [0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 123, 123, 1, 123, 3, 2, 1, 0, 10, 10, 1, 8, 0, 32, 0,
    32, 1, 253, 110, 11],
  relaxed: [0, 97, 115, 109, 1, 0, 0, 0, 1, 7, 1, 96, 2, 123, 123, 1, 123, 3, 2, 1, 0, 10, 11, 1, 9, 0, 32, 0,
    32, 1, 253, 146, 2, 11],
};

/** A model file that cannot be loaded (corrupt, another ABI version, refused by the kernels). */
export class ModelError extends Error {
  constructor(message) {
    super(message);
    this.name = "ModelError";
  }
}

/** The variants this engine validates, best first. */
export function supportedVariants() {
  const ok = (v) => v === "scalar" || WebAssembly.validate(new Uint8Array(PROBES[v]));
  return VARIANTS.filter((v) => ok(v) && (v !== "relaxed" || ok("simd128")));
}

/** Where the kernel modules are by default: kernels/ beside this module's folder. The qnnweb server
 * serves this module as /static/qnnweb.js and the kernels under /kernels/ (under any prefix); the npm
 * package has lib/qnnweb.js and kernels/. */
export function defaultKernelsURL() {
  return new URL("../kernels/", import.meta.url).href;
}

const modules = new Map(); // url -> Promise<WebAssembly.Module>: compiled once per page

/** The compiled kernel module of a variant (streaming compile, so V8 caches its code); `threaded`:
 * its build for several threads. */
export function kernelModule(variant, kernelsURL = defaultKernelsURL(), threaded = false) {
  const url = new URL(`qnnweb-${variant}${threaded ? "-threads" : ""}.wasm`, kernelsURL).href;
  if (!modules.has(url)) {
    const compiled = WebAssembly.compileStreaming(fetch(url)).catch((err) => {
      modules.delete(url);
      throw new Error(`kernel module ${url}: ${err.message}`);
    });
    modules.set(url, compiled);
  }
  return modules.get(url);
}

export const MAX_THREADS = 16; // wasm_kernels/src/threadpool.h QNN_MAX_THREADS
const SHARED_MEMORY_PAGES = { initial: 16, maximum: 32768 }; // wasm_kernels/build.sh: 1 MiB .. 2 GiB
const WORKER_STACK_BYTES = 256 << 10; // each worker's wasm stack (thread 0 has the module's own)
const WORKER_START_TIMEOUT_MS = 10000;

/** The thread count a page gets by default: min(4, cores) where threads can run, else 1. */
export function defaultThreads() {
  return threadSupport(4).threads === 1 ? 1 : Math.min(4, globalThis.navigator?.hardwareConcurrency || 1);
}

/** How many of `requested` threads can run in this context, and why not all (note: null = all). */
export function threadSupport(requested) {
  if (!Number.isInteger(requested) || requested < 1) {
    throw new TypeError(`threads must be a positive integer, got ${requested}`);
  }
  if (requested === 1) return { threads: 1, note: null };
  if (typeof SharedArrayBuffer === "undefined" || !globalThis.crossOriginIsolated) {
    return { threads: 1, note: `${requested} threads asked, 1 runs: the page is not cross-origin isolated ` +
      "(it needs the headers Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: " +
      "require-corp), so there is no SharedArrayBuffer" };
  }
  if (typeof Worker === "undefined") {
    return { threads: 1, note: `${requested} threads asked, 1 runs: this JavaScript context cannot start Workers` };
  }
  if (requested > MAX_THREADS) {
    return { threads: MAX_THREADS, note: `${requested} threads asked, the kernels run at most ${MAX_THREADS}` };
  }
  return { threads: requested, note: null };
}

// A worker of the pool: its own instance of the module on the shared memory and its own stack; it
// lives in qnn_worker (woken through the shared memory) until the model is closed.
const WORKER_SOURCE = `onmessage = ({ data: { module, memory, thread, stackTop } }) => {
  let exports;
  try {
    exports = new WebAssembly.Instance(module, { env: { memory } }).exports;
    exports.__stack_pointer.value = stackTop;
  } catch (err) {
    postMessage({ error: String(err) });
    return;
  }
  postMessage({ ready: thread });
  exports.qnn_worker(thread);
};`;
let workerURL = null;

/** A new instance of a compiled kernel module: the one place kernels are instantiated in a browser
 * (this runtime's models and the Pyodide host of the Python package alike). Returns its exports and
 * `memory`; with `threads` > 1 (a -threads module) also starts the pool's Workers: `ready` resolves
 * to how many threads run once they have started, `close()` ends them. */
export function instantiateModule(module, { threads = 1 } = {}) {
  // A threaded module imports its (shared) memory; a single-threaded one exports its own.
  const shared = WebAssembly.Module.imports(module).some((i) => i.kind === "memory");
  const memory = shared ? new WebAssembly.Memory({ ...SHARED_MEMORY_PAGES, shared: true }) : undefined;
  // The page's own instance first: its start function copies the data segments into the memory
  // (later instances skip it; one arriving meanwhile would have to wait, which a page may not).
  const exports = new WebAssembly.Instance(module, shared ? { env: { memory } } : {}).exports;
  const kernels = { ...exports, memory: memory || exports.memory, threads: 1, ready: Promise.resolve(1), close() {} };
  if (threads <= 1) return kernels;
  if (exports.qnn_set_threads(threads) !== 0) throw new RangeError(`threads=${threads}: at most ${MAX_THREADS}`);
  workerURL = workerURL || URL.createObjectURL(new Blob([WORKER_SOURCE], { type: "text/javascript" }));
  const workers = [];
  const started = [];
  for (let thread = 1; thread < threads; thread++) {
    const stack = exports.qnn_alloc(WORKER_STACK_BYTES);
    if (stack === 0) throw new ModelError("out of WebAssembly memory for a worker's stack");
    const worker = new Worker(workerURL);
    workers.push(worker);
    started.push(new Promise((resolve) => {
      worker.onmessage = ({ data }) => resolve(data.ready !== undefined);
      worker.onerror = () => resolve(false);
    }));
    worker.postMessage({ module, memory, thread, stackTop: stack + WORKER_STACK_BYTES });
  }
  kernels.threads = threads;
  // Tasks are claimed by whichever thread is there: workers still starting only mean fewer hands.
  kernels.ready = Promise.all(started).then((ok) => 1 + ok.filter(Boolean).length);
  kernels.close = () => {
    exports.qnn_stop_workers();
    for (const w of workers) w.terminate();
    kernels.threads = 1;
  };
  return kernels;
}

/** Kernels from a module's bytes, synchronously (what qnnweb's Python host in Pyodide calls: its
 * qnnweb.load is synchronous; modules this small compile synchronously on any thread). */
export function instantiateKernelsFromBytes(bytes, threads = 1) {
  return instantiateModule(new WebAssembly.Module(bytes), { threads });
}

async function bytesOf(source) {
  if (typeof source === "string" || source instanceof URL) source = fetch(source);
  if (source instanceof Promise) source = await source; // a fetch the page started early
  if (source instanceof Response) {
    if (!source.ok) {
      // the qnnweb server says why in a JSON `detail` (e.g. 422: the model cannot be compiled)
      const detail = await source.json().then((d) => d.detail, () => source.statusText);
      throw new ModelError(`${source.url}: HTTP ${source.status}: ${detail}`);
    }
    return new Uint8Array(await source.arrayBuffer());
  }
  if (source instanceof ArrayBuffer) return new Uint8Array(source);
  if (ArrayBuffer.isView(source)) return new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
  throw new TypeError("qnnweb.load takes a URL, a Response (or a promise of one), an ArrayBuffer or a typed array");
}

let crcTable = null;

// zlib's CRC-32 (a table-driven loop: ~20 ms for EfficientNet-Lite0's 4.8 MB on a cold page; the
// slicing-by-8 form was no faster there, the function runs once, before V8 optimizes it)
function crc32(bytes) {
  if (crcTable === null) {
    crcTable = new Int32Array(256);
    for (let n = 0; n < 256; n++) {
      let c = n;
      for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
      crcTable[n] = c;
    }
  }
  let c = -1;
  for (let i = 0; i < bytes.length; i++) c = crcTable[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return (c ^ -1) >>> 0;
}

/** The header and metadata of a .qnn file, checked (ModelError says what is wrong). */
export function parseCompiled(bytes) {
  if (bytes.length < HEADER_BYTES || String.fromCharCode(...bytes.subarray(0, 4)) !== "QNNW") {
    throw new ModelError("not a compiled qnnweb model (no 'QNNW' header)");
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const [version, abi, crc, metaBytes, bodyBytes] = [4, 8, 12, 16, 20].map((at) => view.getUint32(at, true));
  if (version < STATELESS_FORMAT_VERSION || version > FORMAT_VERSION) {
    throw new ModelError(`compiled model format version ${version}; this runtime reads versions ` +
      `${STATELESS_FORMAT_VERSION} to ${FORMAT_VERSION}: compile the model again with qnnweb.compile`);
  }
  if (abi !== ABI_VERSION) {
    throw new ModelError(`the compiled model was made for kernel ABI version ${abi}; this runtime's kernels are ` +
      `version ${ABI_VERSION}: compile the model again with qnnweb.compile`);
  }
  if (HEADER_BYTES + metaBytes + bodyBytes !== bytes.length) {
    throw new ModelError(`compiled model truncated or padded: the header says ${HEADER_BYTES + metaBytes + bodyBytes} ` +
      `bytes, the file has ${bytes.length}`);
  }
  if (crc32(bytes.subarray(16)) !== crc) throw new ModelError("compiled model corrupt: its checksum does not match its bytes");
  let meta;
  try {
    let end = HEADER_BYTES + metaBytes;
    while (end > HEADER_BYTES && bytes[end - 1] === 0) end--;
    meta = JSON.parse(new TextDecoder().decode(bytes.subarray(HEADER_BYTES, end)));
  } catch (err) {
    throw new ModelError(`compiled model corrupt: bad metadata (${err.message})`);
  }
  return { meta, body: bytes.subarray(HEADER_BYTES + metaBytes) };
}

function cString(exports, address) {
  const bytes = new Uint8Array(exports.memory.buffer, address, 256);
  const end = bytes.indexOf(0);
  // a copy: TextDecoder refuses views of a SharedArrayBuffer (threaded modules)
  return new TextDecoder().decode(bytes.slice(0, end < 0 ? 256 : end));
}

function tensorInfo(t) {
  const size = t.shape.reduce((a, b) => a * b, 1);
  return { ...t, size, nbytes: size * DTYPES[t.dtype].BYTES_PER_ELEMENT };
}

function buildPlan(exports, meta, body) {
  const errorText = () => cString(exports, exports.qnn_error_message());
  if (exports.qnn_abi_version() !== ABI_VERSION) {
    throw new ModelError(`the kernel module implements ABI version ${exports.qnn_abi_version()}, this runtime ` +
      `reads version ${ABI_VERSION}`);
  }
  const plan = exports.qnn_plan_create(meta.steps.length, meta.arena_bytes);
  if (plan === 0) throw new ModelError(`the model does not fit in WebAssembly memory: ${errorText()}`);
  const [constantsBytes, recordsBytes] = meta.staging;
  const staging = exports.qnn_alloc(constantsBytes + recordsBytes);
  if (staging === 0) throw new ModelError("out of WebAssembly memory for the weight staging buffer");
  let before = 0;
  for (const [cAt, cBytes, rAt, rBytes, count, relAt, relCount] of meta.batches) {
    if (Math.max(cAt + cBytes, rAt + rBytes, relAt + 4 * relCount) > body.length || cBytes > constantsBytes ||
        rBytes > recordsBytes || rBytes % 4 !== 0) {
      throw new ModelError("compiled model corrupt: a batch lies outside the file or its staging buffer");
    }
    const memory = exports.memory.buffer;
    new Uint8Array(memory, staging, cBytes).set(body.subarray(cAt, cAt + cBytes));
    const records = new Int32Array(memory, staging + constantsBytes, rBytes / 4);
    records.set(new Int32Array(body.buffer.slice(body.byteOffset + rAt, body.byteOffset + rAt + rBytes)));
    const relocations = new Uint32Array(body.buffer.slice(body.byteOffset + relAt, body.byteOffset + relAt + 4 * relCount));
    for (const w of relocations) {
      if (w >= records.length) throw new ModelError("compiled model corrupt: a relocation lies outside its records");
      records[w] += staging; // constant fields hold offsets into the batch's constants
    }
    let added;
    try {
      added = exports.qnn_plan_add_records(plan, staging + constantsBytes, count);
    } catch (err) {
      throw new ModelError(`compiled model corrupt: the kernels trapped while loading it (${err.message})`);
    }
    if (added !== count) {
      const [kind, index, opType, output, outputShape] = meta.steps[before + added];
      throw new ModelError(`op ${index} ${opType}: the kernels refused its ${kind} record ` +
                           `(output '${output}' [${outputShape.join(", ")}]): ${errorText()}`);
    }
    before += count;
  }
  if (before !== meta.steps.length) throw new ModelError("compiled model corrupt: fewer records than steps");
  return plan;
}

/** A loaded model: one plan in one kernel instance. */
export class Model {
  constructor(exports, meta, body, variant) {
    this.exports = exports; // the kernels: exports, memory, threads, close() (instantiateModule)
    this.variant = variant;
    this.metadata = meta.metadata || {};
    this.inputs = meta.inputs.map(tensorInfo);
    this.outputs = meta.outputs.map(tensorInfo);
    for (const t of [...this.inputs, ...this.outputs]) {
      if (!DTYPES[t.dtype] || t.offset < 0 || t.offset + t.nbytes > meta.arena_bytes) {
        throw new ModelError(`compiled model corrupt: tensor '${t.name}' lies outside the arena`);
      }
    }
    this._meta = meta;
    this._state = (meta.state || []).map(({ name, offset, initial }) => {
      const bytes = Uint8Array.from(atob(initial), (c) => c.charCodeAt(0));
      if (!(offset >= 0 && offset + bytes.length <= meta.arena_bytes)) {
        throw new ModelError(`compiled model corrupt: state '${name}' lies outside the arena`);
      }
      return { offset, bytes };
    });
    this.plan = buildPlan(exports, meta, body);
    this.arena = exports.qnn_plan_arena(this.plan);
    this.lastRunMs = null;
    this.loadTimes = null;
    this.reset();
  }

  /** Starts a new stream: a streaming model (resource variables, e.g. a wake-word model) forgets
   * what earlier runs left in its state, as if just loaded: the initial bytes are written again
   * where the Python frontend's Model.reset() writes them. Other models have nothing to reset. */
  reset() {
    const memory = this.exports.memory.buffer;
    for (const { offset, bytes } of this._state) new Uint8Array(memory, this.arena + offset, bytes.length).set(bytes);
  }

  /** Typed arrays given per tensor of `tensors` (the model's inputs or outputs): one, an array of them,
   * or {name: typed array}; in the tensors' order. */
  _byName(given, tensors, what) {
    if (ArrayBuffer.isView(given)) return [given];
    if (Array.isArray(given)) return given;
    if (given && typeof given === "object") {
      const unknown = Object.keys(given).filter((k) => !tensors.some((t) => t.name === k));
      if (unknown.length) throw new TypeError(`unknown ${what}(s) ${unknown.join(", ")}; the model's ${what}s: ${tensors.map((t) => t.name).join(", ")}`);
      return tensors.map((t) => {
        if (!(t.name in given)) throw new TypeError(`${what} '${t.name}' is missing`);
        return given[t.name];
      });
    }
    throw new TypeError(`run() takes a typed array, an array of them, or {${what} name: typed array} per ${what}`);
  }

  /** The typed arrays for `tensors`, checked: each of its tensor's type (or, raw, a Uint8Array) and size. */
  _checked(given, tensors, what) {
    const list = this._byName(given, tensors, what);
    if (list.length !== tensors.length) {
      throw new TypeError(`the model has ${tensors.length} ${what}(s), got ${list.length}`);
    }
    list.forEach((x, i) => {
      const t = tensors[i];
      const Type = DTYPES[t.dtype];
      const raw = x instanceof Uint8Array && t.dtype !== "uint8";
      if (!ArrayBuffer.isView(x) || (!(x instanceof Type) && !raw)) {
        throw new TypeError(`${what} '${t.name}': expected a ${Type.name} (${t.dtype} [${t.shape}]), got ${x && x.constructor ? x.constructor.name : typeof x}`);
      }
      if (x.byteLength !== t.nbytes) {
        throw new RangeError(`${what} '${t.name}': expected ${t.size} ${t.dtype} values (${t.nbytes} bytes, shape [${t.shape}]), got ${x.byteLength} bytes`);
      }
      if (t.index_rows) checkIds(t, new Type(x.buffer, x.byteOffset, t.size));
    });
    return list;
  }

  /** One inference: one typed array per input (its dtype, or raw bytes in a Uint8Array); returns one
   * typed array per output: new ones, or, given `outputs` (as the inputs: one, a list, or by name), those,
   * filled (a page running many inferences saves allocating and faulting in fresh output memory). */
  run(inputs, outputs) {
    const list = this._checked(inputs, this.inputs, "input");
    const targets = outputs === undefined ? null : this._checked(outputs, this.outputs, "output");
    const memory = this.exports.memory.buffer;
    list.forEach((x, i) => {
      const t = this.inputs[i];
      new Uint8Array(memory, this.arena + t.offset, t.nbytes).set(new Uint8Array(x.buffer, x.byteOffset, x.byteLength));
    });
    const start = performance.now();
    const status = this.exports.qnn_run(this.plan);
    this.lastRunMs = performance.now() - start;
    if (status !== 0) throw new Error(`qnn_run failed: ${cString(this.exports, this.exports.qnn_error_message())}`);
    const buffer = this.exports.memory.buffer;
    return this.outputs.map((t, i) => {
      const result = targets ? targets[i] : new DTYPES[t.dtype](t.size); // plain ArrayBuffers, also when the memory is shared
      new Uint8Array(result.buffer, result.byteOffset, result.byteLength).set(new Uint8Array(buffer, this.arena + t.offset, t.nbytes));
      return result;
    });
  }

  /** Ends the model's worker threads (it still runs afterwards, on one thread). */
  close() {
    this.exports.close();
  }

  info() {
    const strip = ({ size, nbytes, offset, ...t }) => t;
    return {
      format: this._meta.describe.format,
      inputs: this.inputs.map(strip),
      outputs: this.outputs.map(strip),
      ops: this._meta.describe.ops,
      variant: this.variant,
      host: "browser (qnnweb.js)",
      threads: this.exports.threads,
      threads_note: this.threadsNote || null, // why fewer threads run than were asked for
      kernels: {
        gemm: cString(this.exports, this.exports.qnn_gemm_kernel_name()),
        dwconv: cString(this.exports, this.exports.qnn_dwconv_kernel_name()),
      },
      arena_bytes: this._meta.arena_bytes,
      weight_bytes: this.exports.qnn_plan_packed_bytes(this.plan),
      memory_bytes: this.exports.memory.buffer.byteLength,
      metadata: this.metadata,
      load_ms: this.loadTimes || null,
    };
  }
}

/** Load a compiled model (URL, Response, ArrayBuffer or typed array). Options: `variant` forces
 * one ("relaxed", "simd128", "scalar"; an error if this engine cannot run it), `threads` (default
 * defaultThreads(); info().threads says how many run and threads_note why fewer), `kernelsURL` is
 * where qnnweb-VARIANT[-threads].wasm are served (default defaultKernelsURL()). The
 * kernel download starts while the model downloads. */
export async function load(source, { variant = null, threads = null, kernelsURL = defaultKernelsURL() } = {}) {
  const supported = supportedVariants();
  if (variant !== null && !VARIANTS.includes(variant)) {
    throw new TypeError(`unknown kernel variant '${variant}'; choose one of ${VARIANTS.join(", ")}`);
  }
  if (variant !== null && !supported.includes(variant)) {
    throw new Error(`this WebAssembly engine does not support the ${variant} kernels (it supports: ${supported.join(", ")})`);
  }
  const chosen = variant || supported[0];
  let { threads: count, note } = threadSupport(threads === null ? defaultThreads() : threads);
  const t0 = performance.now();
  let modulePromise = kernelModule(chosen, kernelsURL, count > 1);
  if (count > 1) {
    modulePromise = modulePromise.catch((err) => {
      note = `${count} threads asked, 1 runs: ${err.message}`;
      count = 1;
      return kernelModule(chosen, kernelsURL);
    });
  }
  // The kernels (and their Workers, which take 50-200 ms to start) while the model downloads.
  const kernelsPromise = modulePromise.then((module) => instantiateModule(module, { threads: count }));
  kernelsPromise.catch(() => {}); // reported below, after the model's own errors
  let bytes, meta, body, t1, t2;
  try {
    bytes = await bytesOf(source);
    t1 = performance.now();
    ({ meta, body } = parseCompiled(bytes));
    t2 = performance.now();
  } catch (err) {
    kernelsPromise.then((k) => k.close(), () => {});
    throw err;
  }
  const kernels = await kernelsPromise;
  const t3 = performance.now();
  let model;
  try {
    model = new Model(kernels, meta, body, chosen);
  } catch (err) {
    kernels.close();
    if (err instanceof ModelError) throw err;
    throw new ModelError(`compiled model corrupt: ${err.message}`);
  }
  // the Workers have been starting since the model download began; a load never waits for them forever
  let timer;
  const timeout = new Promise((resolve) => { timer = setTimeout(() => resolve(null), WORKER_START_TIMEOUT_MS); });
  const running = await Promise.race([kernels.ready, timeout]);
  clearTimeout(timer);
  if (running === null) {
    note = `${count} threads asked: the Workers had not started after ${WORKER_START_TIMEOUT_MS / 1000} s ` +
      "(each joins when it starts)";
  } else if (running < count) {
    note = `${count} threads asked, ${running} started (a Worker failed to start)`;
    kernels.threads = running;
  }
  model.threadsNote = note;
  // where load time went (ms): the model's download, its checks, waiting for the kernels (compiled
  // and instantiated while the model downloads), adding the records (validation and packing, in C)
  model.loadTimes = { download: t1 - t0, parse: t2 - t1, kernels_wait: t3 - t2, plan: performance.now() - t3 };
  return model;
}
