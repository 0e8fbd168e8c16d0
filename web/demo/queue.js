// The page's task queue: every run the user asks for (a photo, a benchmark, a camera frame) is a task,
// and tasks run one at a time, in order. body's data-state / data-pending / data-runs say where the
// queue stands (the tests wait on them); a failed task's error is shown, the next task clears it.
import { $, clearError, showError } from "./ui.js";

const body = document.body;
let queue = Promise.resolve();
let pending = 0;
let runs = 0;

// The page state reflects the last finished task. A task's error may carry its own context (the
// error box's first words); else `label` says what failed.
export function enqueue(label, task) {
  pending += 1;
  body.dataset.pending = String(pending);
  body.dataset.state = "running";
  queue = queue.then(async () => {
    let ok = true;
    clearError();
    try {
      await task();
    } catch (err) {
      ok = false;
      showError(err.context || label, err);
      $("status").textContent = `${err.context || label}: see above.`;
    }
    pending -= 1;
    runs += 1;
    body.dataset.pending = String(pending);
    body.dataset.runs = String(runs);
    if (pending === 0) body.dataset.state = ok ? "done" : "error";
  });
  return queue;
}
