// A landmark model fed by a detector (its sidecar's postprocess.roi; Face Mesh after BlazeFace, as
// MediaPipe runs them): the detector runs first, on the same photo, and its best face gives the square
// of the photo the landmark model sees.
import { getModel } from "./models.js";
import { inputSize, photoMapper, photoToRGB } from "./photo.js";
import { page } from "./state.js";
import { detections } from "./tasks.js";
import { infer } from "./workers.js";

// The square of the photo a landmark model should see: the detector named by the sidecar's
// postprocess.roi finds the best face; its box, squared and scaled by roi.scale (MediaPipe: 1.5), kept
// inside the photo. Returns {plan (photoToRGB's), detection, box: [x0, y0, x1, y1] in photo pixels}, or
// null when the detector finds nothing.
export async function detectorROI(record, name, source, w, h) {
  const spec = record.postprocess.roi;
  const detector = page.models.get(spec.detector);
  if (!detector) throw new Error(`${record.file}: its sidecar's detector ${spec.detector} is not on this server`);
  const { key, info } = await getModel(spec.detector);
  const input = inputSize(info.inputs[0]);
  const pre = detector.preprocess || {};
  const seen = await photoToRGB(name, source, pre, input.w, input.h);
  const { rgb, photoSize } = seen;
  const result = await infer({ op: "run", key, rgb, mean: pre.mean || [0, 0, 0], std: pre.std || [1, 1, 1] });
  const [best] = detections(detector, result.outputs);
  if (!best) return null;
  const at = photoMapper(seen.plan, photoSize);
  const [W, H] = photoSize;
  const [x0, y0] = at(best.box[1], best.box[0]);
  const [x1, y1] = at(best.box[3], best.box[2]);
  const side = Math.min(Math.max(x1 - x0, y1 - y0) * (spec.scale ?? 1.5), W, H);
  const left = Math.max(0, Math.min(W - side, (x0 + x1) / 2 - side / 2));
  const top = Math.max(0, Math.min(H - side, (y0 + y1) / 2 - side / 2));
  // the photo scaled so that the square is w x h, then that window of it
  const s = w / side;
  const rw = Math.max(w, Math.round(W * s)), rh = Math.max(h, Math.round(H * s));
  const px = Math.min(rw - w, Math.round(left * s)), py = Math.min(rh - h, Math.round(top * s));
  const plan = { rw, rh, x0: px, y0: py, cw: w, ch: h,
    text: `the face ${spec.detector} found: a ${Math.round(side)} px square at (${Math.round(left)}, ${Math.round(top)}), ` +
          `resized to ${w}×${h}` };
  return { plan, detection: best, box: [x0, y0, x1, y1] };
}

