// The server's models as the page offers them (an option in the model list each) and loads them: into
// the inference worker, once per model, kernel variant and thread count.
import { page } from "./state.js";
import { $, doneLoading, fillSelect, kb, setStatus, threadsText } from "./ui.js";
import { infer } from "./workers.js";

export const usable = (name) => page.models.has(name) && !page.models.get(name).error;

// What the page says beside a model's answers: that they mean nothing (a speed_only model: random weights),
// and its sidecar's note (a tiny model, what it cannot see); null when neither applies.
export function modelNote(m) {
  const said = [m.speed_only ? "Random weights: its answers mean nothing, only its speed does." : "", m.note || ""];
  return said.filter(Boolean).join(" ") || null;
}

// A model in the list: title · task · size, "speed test only" when its sidecar says its answers mean
// nothing (unless the title says so already), and why the server cannot use it: such a model stays
// listed, but cannot be chosen. `short`: the text for a narrow screen, where the start of the title is
// all that shows: the sidecar's short_title (else the title without its last bracket) · task (· unusable).
export function modelOption(m, short = false) {
  const title = m.title || m.name;
  const parts = short ? [m.short_title || title.replace(/\s*\([^()]*\)$/, ""), m.task || "classification"]
    : [title, m.task || "classification", kb(m.size)];
  if (m.speed_only && !/speed test only/i.test(title) && !short) parts.push("speed test only");
  if (m.error && short) parts.push("unusable");
  else if (m.error) parts.push(`unusable: ${m.error.length > 80 ? m.error.slice(0, 79) + "…" : m.error}`);
  return { value: m.name, text: parts.join(" · "), title: m.error || modelNote(m) || "", disabled: Boolean(m.error) };
}

// On a narrow screen (a phone) the model list's box shows the start of its text only: the short texts there.
const NARROW = matchMedia("(max-width: 600px)");

/** The options of the model list for the screen's width, and again whenever the width crosses NARROW's. */
export function fillModelList(select, models) {
  fillSelect(select, models.map((m) => modelOption(m, NARROW.matches)));
  NARROW.onchange = () => {
    for (const opt of select.options) opt.textContent = modelOption(page.models.get(opt.value), NARROW.matches).text;
  };
}

// The model loaded with the page's variant and thread count: {key (the worker's name for it), info}.
export async function getModel(name) {
  const cacheKey = `${name}|${page.variant || "auto"}|${page.threads || "auto"}`;
  if (page.loaded.has(cacheKey)) return page.loaded.get(cacheKey);
  const record = page.models.get(name);
  if (!record) throw new Error(`unknown model ${name}`);
  $("loader").classList.remove("idle");
  setStatus(`Loading ${record.file} (compiled by the server)…`);
  let entry;
  try {
    entry = await infer({ op: "load", url: record.compiled_url, variant: page.variant, threads: page.threads,
                          kernelsURL: page.kernelsURL });
  } catch (err) {
    doneLoading(`Could not load ${record.file}.`);
    if (err && typeof err === "object") err.context = `Cannot load model ${record.file}`;
    throw err;
  }
  page.loaded.set(cacheKey, entry);
  doneLoading(`Loaded ${record.file} (${entry.info.variant} kernels, ${threadsText(entry.info.threads)}).`);
  return entry;
}
