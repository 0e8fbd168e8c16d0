// The page's Python panel: the Python worker's state (body's data-python and the panel's status), the
// example script (web/examples/classify.py) in an editable box, and its Run button.
import { $, errorText, fmtMs } from "./ui.js";
import { pythonReady, runPython } from "./workers.js";

const body = document.body;

export function watchPython() {
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
  fetch(new URL("../examples/classify.py", import.meta.url)).then((r) => r.text()).then((text) => {
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
