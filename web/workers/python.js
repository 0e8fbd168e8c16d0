// The demo page's Python: Pyodide with the qnnweb wheels, in a worker so that its few seconds of
// start-up never block the page. Posts {type: "ready", version} (or {type: "failed", error}) once
// qnnweb imports; then {id, op: "run", source, globals} gets {id, ok, stdout[, error]}.
import { startPyodide } from "../pyodide-start.js";

let pyodide = null;

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
      await pyodide.runPythonAsync(source, { globals: ns });
    } finally {
      pyodide.setStdout();
      pyodide.setStderr();
      ns.destroy();
    }
    postMessage({ id, ok: true, stdout: lines.join("\n") });
  } catch (err) {
    postMessage({ id, ok: false, stdout: lines.join("\n"), error: String(err && err.message ? err.message : err) });
  }
};
