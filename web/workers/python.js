// The demo page's Python: Pyodide with the qnnweb wheels, in a worker so that its few seconds of
// start-up never block the page. Posts {type: "ready", version} (or {type: "failed", error}) once
// qnnweb imports; then {id, op: "run", source, globals} gets {id, ok, stdout[, error]}: a failed run's error
// is the traceback from the user's code on (Pyodide's own frames, which run it, left out).
import { startPyodide } from "../pyodide-start.js";

let pyodide = null;
const USER_FILE = "<exec>"; // the file name the user's source runs as (runPythonAsync's default)

// A Python traceback without the frames above the user's first one (Pyodide's eval_code_async and its
// helpers); any other text as it is.
function fromUserCode(message) {
  const lines = message.split("\n");
  const first = lines.findIndex((line) => line.trimStart().startsWith(`File "${USER_FILE}"`));
  if (!lines[0].startsWith("Traceback") || first < 0) return message;
  return [lines[0], ...lines.slice(first)].join("\n");
}

const ready = (async () => {
  pyodide = await startPyodide();
  // qnnweb.init(): the JavaScript runtime that instantiates the kernels, so qnnweb.load works at once
  await pyodide.runPythonAsync("import qnnweb, qnnweb.image\nawait qnnweb.init()");
  return pyodide.version;
})();

ready.then(
  (version) => postMessage({ type: "ready", version }),
  (err) => postMessage({ type: "failed", error: String(err && err.message ? err.message : err) }),
);

self.onmessage = async ({ data }) => {
  const { id, source, globals } = data;
  const lines = [];
  try {
    await ready;
    const ns = pyodide.globals.get("dict")();
    for (const [k, v] of Object.entries(globals || {})) ns.set(k, v);
    pyodide.setStdout({ batched: (line) => lines.push(line) });
    pyodide.setStderr({ batched: (line) => lines.push(line) });
    try {
      await pyodide.runPythonAsync(source, { globals: ns, filename: USER_FILE });
    } finally {
      pyodide.setStdout();
      pyodide.setStderr();
      ns.destroy();
    }
    postMessage({ id, ok: true, stdout: lines.join("\n") });
  } catch (err) {
    const message = String(err && err.message ? err.message : err);
    postMessage({ id, ok: false, stdout: lines.join("\n"), error: fromUserCode(message) });
  }
};
