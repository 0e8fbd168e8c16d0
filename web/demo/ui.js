// The demo page's small DOM helpers: $, the status line and its progress bar, the error box, <select>
// filling, the URL's query parameters and the number formats the page shows.

export const $ = (id) => document.getElementById(id);

// A canvas's text alternative (it is role="img"): what the last run drew on it, in a few words; null
// when nothing is drawn (screen readers then skip it).
export function describeCanvas(canvas, text) {
  if (text === null) {
    canvas.removeAttribute("aria-label");
    canvas.setAttribute("aria-hidden", "true");
  } else {
    canvas.setAttribute("aria-label", text);
    canvas.removeAttribute("aria-hidden");
  }
}

// RGB bytes (width x height) on a canvas of their size.
export function paintRGB(canvas, rgb, width, height) {
  canvas.width = width;
  canvas.height = height;
  const pixels = new ImageData(width, height);
  for (let i = 0, j = 0; j < rgb.length; i += 4, j += 3) {
    pixels.data[i] = rgb[j];
    pixels.data[i + 1] = rgb[j + 1];
    pixels.data[i + 2] = rgb[j + 2];
    pixels.data[i + 3] = 255;
  }
  canvas.getContext("2d").putImageData(pixels, 0, 0);
}

export function setStatus(text, fraction = null) {
  $("status").textContent = text;
  const bar = $("progress");
  if (fraction === null) bar.removeAttribute("value");
  else bar.value = Math.max(0, Math.min(1, fraction));
}

export function doneLoading(text) {
  $("status").textContent = text;
  $("progress").value = 1;
  $("loader").classList.add("idle");
}

export function errorText(err) {
  // Pyodide's PythonError carries the whole traceback: the last line is the readable part.
  const msg = String(err && err.message ? err.message : err).trim();
  const lines = msg.split("\n").map((l) => l.trim()).filter(Boolean);
  return { summary: lines.length ? lines[lines.length - 1] : "unknown error", details: msg };
}

export function showError(context, err) {
  const { summary, details } = errorText(err);
  const box = $("error");
  box.replaceChildren();
  const strong = document.createElement("strong");
  strong.textContent = context + ": ";
  box.append(strong, document.createTextNode(summary));
  if (details !== summary) {
    const more = document.createElement("details");
    const s = document.createElement("summary");
    s.textContent = "details";
    const pre = document.createElement("pre");
    pre.textContent = details;
    more.append(s, pre);
    box.append(more);
  }
  box.hidden = false;
  console.error(context, err);
}

// A note the page shows above the panels (#notice, a status region): a parameter it ignored, the camera it stopped.
export function showNotice(text) {
  $("notice").textContent = text;
  $("notice").hidden = false;
}

export function clearError() {
  $("error").hidden = true;
  $("error").replaceChildren();
}

export function fillSelect(select, items) {
  select.replaceChildren();
  for (const { value, text, title = "", disabled = false } of items) {
    const opt = document.createElement("option");
    opt.value = value;
    opt.textContent = text;
    opt.title = title;
    opt.disabled = disabled;
    select.append(opt);
  }
}

// value null: the parameter leaves the URL (without a new history entry).
export function setQueryParam(name, value) {
  const url = new URL(location.href);
  if (value === null) url.searchParams.delete(name);
  else url.searchParams.set(name, value);
  history.replaceState(null, "", url);
}

export function fmtMs(ms) {
  // two decimals under 1 ms: a wake-word model's call takes a few hundredths
  return `${ms.toFixed(ms >= 100 ? 0 : ms >= 1 ? 1 : 2)} ms`;
}

export function kb(bytes) {
  return bytes >= 1e6 ? `${(bytes / 1e6).toFixed(1)} MB` : `${Math.round(bytes / 1e3)} KB`;
}

export function threadsText(n) {
  return n === 1 ? "1 thread" : `${n} threads`;
}
