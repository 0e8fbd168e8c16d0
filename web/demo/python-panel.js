// The page's Python panel: the Python worker's state (body's data-python and the panel's status), the
// example script (web/examples/classify.py) in an editable box, its Run button, and Stop, which ends a run
// that does not end (a new Python starts). A failed run shows the traceback from the user's code on, styled
// as an error.
import { $, fmtMs } from "./ui.js";
import { pythonReady, runPython, stopPython } from "./workers.js";

const body = document.body;

// The panel follows one start of Python (the first, or the one after Stop).
function followStart(started) {
  const status = $("python-status");
  body.dataset.python = "loading";
  $("python-run").disabled = true;
  started.then(
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
}

// The output box: the run's stdout, then (after a failure) the error in its own styled element.
function showOutput(stdout, error = null) {
  const out = $("python-output");
  out.replaceChildren(stdout);
  if (error !== null) {
    const traceback = document.createElement("span");
    traceback.className = "python-error";
    traceback.textContent = error;
    out.append(stdout ? "\n" : "", traceback);
  }
}

export function watchPython() {
  followStart(pythonReady());
  fetch(new URL("../examples/classify.py", import.meta.url)).then((r) => r.text()).then((text) => {
    if (!$("python-source").value) $("python-source").value = text;
  });
  $("python-run").addEventListener("click", async () => {
    $("python-run").disabled = true;
    $("python-stop").disabled = false;
    showOutput("running in Python (Pyodide, worker)…");
    const t0 = performance.now();
    try {
      const stdout = await runPython($("python-source").value);
      showOutput(`${stdout}\n[Python (Pyodide in a worker): ${fmtMs(performance.now() - t0)}]`);
      $("python-run").disabled = false;
    } catch (err) {
      if (err.name === "StoppedError") return; // Stop said so, and Python starts again
      showOutput(err.stdout || "", err.message);
      $("python-run").disabled = false;
    } finally {
      $("python-stop").disabled = true;
    }
  });
  $("python-stop").addEventListener("click", () => {
    $("python-stop").disabled = true;
    showOutput("Stopped: Python starts again in a new worker (what the script defined is gone).");
    followStart(stopPython());
  });
}
