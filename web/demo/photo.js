// The photo a model runs on: the sample thumbnails, the user's own photo (file input or dropped on the
// page), the chosen photo's bytes, and photoToRGB: the photo decoded, resized and cropped to what the
// model sees (Pillow's arithmetic, web/qnnweb-image.js; in the inference worker) and drawn beside it.
// photoMapper maps the model's coordinates back to the photo's pixels.
import { page } from "./state.js";
import { $, paintRGB } from "./ui.js";
import { infer } from "./workers.js";

// A camera frame as Pillow would read it: no colour management, no premultiplied alpha.
const DECODE = { colorSpaceConversion: "none", premultiplyAlpha: "none" };

const body = document.body;

// One button per sample photo; a click picks it and calls run().
export function fillThumbs(samples, run) {
  const box = $("thumbs");
  box.replaceChildren();
  for (const s of samples) {
    const b = document.createElement("button");
    b.type = "button";
    b.className = "thumb";
    b.dataset.photo = s.name;
    b.title = s.name;
    b.setAttribute("aria-label", `Sample photo: ${photoTitle(s.name)}`);
    b.setAttribute("aria-pressed", "false");
    b.disabled = true;
    const img = document.createElement("img");
    img.src = s.url;
    img.alt = ""; // the button's label names the photo
    img.loading = "lazy";
    b.append(img);
    b.addEventListener("click", () => {
      $("photo-select").value = s.name;
      sampleChosen();
      run();
    });
    box.append(b);
  }
}

// A sample photo's name for people: "grace_hopper.jpg" -> "grace hopper".
function photoTitle(fileName) {
  return fileName.replace(/\.[^.]+$/, "").replaceAll("_", " ");
}

// The thumbnail of the photo the photo list shows is marked, for the eye and for screen readers.
export function markThumb() {
  const value = $("photo-select").value;
  for (const b of document.querySelectorAll("#thumbs .thumb")) {
    const chosen = b.dataset.photo === value;
    b.classList.toggle("active", chosen);
    b.setAttribute("aria-pressed", String(chosen));
  }
}

// A sample photo chosen (thumbnail or list): its thumbnail marked and the file input emptied: it would
// still name the user's old file, and picking that file again would fire no change event.
export function sampleChosen() {
  markThumb();
  if (!$("photo-select").value.startsWith("upload:")) $("photo-file").value = "";
}

// The user's own photo, picked with the file input or dropped anywhere on the page: run() runs it.
export function watchPhotoInputs(run) {
  $("photo-file").addEventListener("change", () => usePhotoFile($("photo-file").files[0], run));
  document.addEventListener("dragover", (e) => {
    if (![...e.dataTransfer.types].includes("Files")) return;
    e.preventDefault();
    body.classList.add("dropping");
  });
  document.addEventListener("dragleave", (e) => {
    if (e.relatedTarget === null) body.classList.remove("dropping");
  });
  document.addEventListener("drop", (e) => {
    body.classList.remove("dropping");
    const file = [...(e.dataTransfer.files || [])][0];
    if (!file) return;
    e.preventDefault();
    usePhotoFile(file, run);
  });
}

// The user's own photo: listed first in the photo list, and run.
function usePhotoFile(file, run) {
  if (!file) return;
  page.upload = { name: file.name, blob: file };
  const select = $("photo-select");
  let opt = select.querySelector('option[data-upload="1"]');
  if (!opt) {
    opt = document.createElement("option");
    opt.dataset.upload = "1";
    select.prepend(opt);
  }
  opt.value = "upload:" + file.name;
  opt.textContent = `your photo: ${file.name}`;
  select.value = opt.value;
  markThumb();
  run();
}

// The chosen photo: {name, blob} (a sample is fetched).
export async function photoBlob() {
  const value = $("photo-select").value;
  if (value.startsWith("upload:") && page.upload) return { name: page.upload.name, blob: page.upload.blob };
  const url = page.samples.get(value);
  if (!url) throw new Error("pick a photo");
  const res = await fetch(url);
  if (!res.ok) throw new Error(`${url}: HTTP ${res.status}`);
  return { name: value, blob: await res.blob() };
}

// A model input's size and layout, from its shape; an input that is not an RGB image is an error.
export function inputSize(tensor) {
  const s = tensor.shape;
  if (s.length === 4 && s[1] === 3 && s[3] !== 3) return { h: s[2], w: s[3], layout: "NCHW" };
  if (s.length === 4 && s[3] === 3) return { h: s[1], w: s[2], layout: "NHWC" };
  if (s.length === 3 && s[2] === 3) return { h: s[0], w: s[1], layout: "HWC" };
  throw new Error(`input shape [${s}] is not an RGB image`);
}

// The photo decoded without colour management (as Pillow reads it), resized and cropped as the model's
// metadata says, all in the inference worker (a big photo's decoding would block the page: a camera frame
// is copied here, the worker gets it as a bitmap); what the model sees is drawn beside the photo. Returns
// {rgb: H*W*3 RGB bytes, plan (where in the photo the model looks), photoSize: [W, H]}.
// plan: where to look (default: the sidecar's preprocessing).
export async function photoToRGB(name, source, pre, w, h, plan = null) {
  const image = source instanceof Blob ? source : await createImageBitmap(source, DECODE);
  let result;
  try {
    result = await infer({ op: "pixels", image, pre, w, h, plan }, image instanceof Blob ? [] : [image]);
  } catch (err) {
    if (err.name === "DecodeError") throw new Error(`${name} is ${err.message}`);
    throw err;
  }
  const { rgb, plan: used, photoSize } = result;
  paintRGB($("input-canvas"), rgb, w, h);
  window.qnnwebDemo.lastInput = rgb;
  window.qnnwebDemo.lastPreprocess = { photo: photoSize, ...used };
  return result;
}

// Model input coordinates (normalized to the crop window the model saw) -> photo pixels.
export function photoMapper(plan, [W, H]) {
  return (u, v) => [((plan.x0 + u * plan.cw) * W) / plan.rw, ((plan.y0 + v * plan.ch) * H) / plan.rh];
}

// After a failed run no photo is shown (nor what the model saw): nothing on screen belongs to an
// earlier run.
export function clearPhoto() {
  const img = $("photo");
  if (img.dataset.objectUrl) URL.revokeObjectURL(img.dataset.objectUrl);
  delete img.dataset.objectUrl;
  img.removeAttribute("src");
  $("photo-name").textContent = "";
  const seen = $("input-canvas");
  seen.getContext("2d").clearRect(0, 0, seen.width, seen.height);
}

export function showPhoto(name, blob) {
  const img = $("photo");
  if (img.dataset.objectUrl) URL.revokeObjectURL(img.dataset.objectUrl);
  const url = URL.createObjectURL(blob);
  img.dataset.objectUrl = url;
  img.decoding = "async"; // a big photo is decoded for the screen off the main thread too
  img.src = url;
  $("photo-name").textContent = name;
}
