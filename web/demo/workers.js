// The demo page's two workers and the one way it talks to them: the inference worker
// (workers/inference.js: qnnweb.js runs the compiled models) and the Python worker (workers/python.js:
// Pyodide with qnnweb), both started as this module loads. infer() and runPython() post a message and
// resolve to the answer; stopPython() ends a Python run that does not end (the worker terminated, a new one
// started).

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
    /** The worker ended at once: every call waiting on it rejects with `reason`. */
    terminate(reason) {
      worker.terminate();
      for (const { reject } of waiting.values()) reject(reason);
      waiting.clear();
    },
    call(message, transfer = []) {
      const id = next++;
      return new Promise((resolve, reject) => {
        waiting.set(id, { resolve, reject });
        worker.postMessage({ ...message, id }, transfer);
      });
    },
  };
}

const inference = workerClient(new URL("../workers/inference.js", import.meta.url));

/** One op in the inference worker ({op: "load" | "classify" | "run" | "rerun", ...}: see
 * workers/inference.js); resolves to its result. */
export const infer = async (message, transfer) => (await inference.call(message, transfer)).result;

// Python starts at once, in its own worker; runPython waits for it.
let python = null;
let ready = null;

// A new Python worker; `ready` resolves to Pyodide's version once qnnweb imports in it.
function startPython() {
  ready = new Promise((resolve, reject) => {
    python = workerClient(new URL("../workers/python.js", import.meta.url));
    python.worker.addEventListener("message", ({ data }) => {
      if (data.type === "ready") resolve(data.version);
      if (data.type === "failed") reject(new Error(data.error));
    });
  });
  ready.catch(() => {}); // shown in the Python panel
  return ready;
}
startPython();

/** Resolves to Pyodide's version once qnnweb imports in the current Python worker. */
export const pythonReady = () => ready;

/** Run Python source in the Python worker (Pyodide, qnnweb installed); resolves to its stdout. */
export async function runPython(source, globals = {}) {
  await ready;
  return (await python.call({ op: "run", source, globals })).stdout;
}

/** Stop whatever Python runs (a `while True: pass` never yields to a message): the worker is terminated, its
 * runs reject with a StoppedError, and a new worker starts Python again (from the server's snapshot, as the
 * first did). Resolves to the new Python's version. */
export function stopPython() {
  const stopped = new Error("stopped");
  stopped.name = "StoppedError";
  python.terminate(stopped);
  return startPython();
}
