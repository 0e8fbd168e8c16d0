// The camera: its frames go through the selected model one after another (each a queued task, so the
// controls still work between frames), with the frame rate and the model's latency shown live.
import { clearPhoto } from "./photo.js";
import { enqueue } from "./queue.js";
import { clearShown } from "./run-info.js";
import { page } from "./state.js";
import { $, showError } from "./ui.js";

const body = document.body;

// runOnce(photo): the page's run of the selected model, here on {name: "camera", frame: the video}.
export async function startCamera(runOnce) {
  let stream;
  try {
    if (!navigator.mediaDevices || !navigator.mediaDevices.getUserMedia) {
      throw new Error("this browser gives pages no camera (it needs https or localhost)");
    }
    stream = await navigator.mediaDevices.getUserMedia({ video: { facingMode: "user" }, audio: false });
  } catch (err) {
    showError("Camera unavailable", err);
    return;
  }
  const video = $("camera-video");
  video.srcObject = stream;
  await video.play();
  clearPhoto();
  $("photo").hidden = true;
  video.hidden = false;
  $("photo-name").textContent = "camera";
  const camera = { stream, frames: 0, times: [] };
  page.camera = camera;
  body.dataset.camera = "on";
  $("camera").textContent = "Stop camera";
  while (page.camera === camera) {
    await enqueue("Camera frame failed", () => cameraFrame(camera, runOnce));
    if (body.dataset.state === "error") stopCamera({ clear: false }); // the error stays on screen
    await new Promise((r) => requestAnimationFrame(r)); // let the page paint the frame's result
  }
}

async function cameraFrame(camera, runOnce) {
  if (page.camera !== camera) return; // stopped while this frame waited in the queue
  await runOnce({ name: "camera", frame: $("camera-video") });
  if (page.camera !== camera) return;
  camera.frames += 1;
  const now = performance.now();
  camera.times.push(now);
  while (camera.times.length > 1 && now - camera.times[0] > 2000) camera.times.shift();
  const span = (camera.times[camera.times.length - 1] - camera.times[0]) / 1000;
  const fps = span > 0 ? (camera.times.length - 1) / span : 0;
  const stats = $("camera-stats");
  stats.textContent = `${fps.toFixed(1)} frames/s · model ${$("latency").textContent}`;
  stats.dataset.fps = String(fps);
  stats.dataset.frames = String(camera.frames);
}

// clear: also take the last frame's results off the screen (after a frame still running), unless a
// photo's run replaces them anyway.
export function stopCamera({ clear = true } = {}) {
  if (!page.camera) return;
  for (const track of page.camera.stream.getTracks()) track.stop();
  page.camera = null;
  const video = $("camera-video");
  video.srcObject = null;
  video.hidden = true;
  $("photo").hidden = false;
  body.dataset.camera = "off";
  $("camera").textContent = "Camera";
  $("camera-stats").textContent = "";
  if (clear) enqueue("Camera", async () => clearShown());
}

// Run the last input BENCH_RUNS more times (after a fresh run if the selection changed), one at a
