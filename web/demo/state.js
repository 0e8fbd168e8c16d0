// The demo page's state, in one object that its modules share: what the server offers, what the user
// chose, what is loaded in the inference worker and what ran last.

export const page = {
  models: new Map(), // name -> record from /api/models
  loaded: new Map(), // `${name}|${variant}|${threads}` -> {key, info}: a model loaded in the inference worker
  samples: new Map(), // name -> url
  upload: null, // {name, blob} of the user's own photo
  variant: null, // null = let qnnweb pick
  threads: null, // null = the runtime's default
  kernelsURL: null, // /api/models' kernels_url: the kernel modules under their digest (immutable)
  history: new Map(), // `${name}|${photo}|${variant}|${threads}` -> latencies (ms) of the last runs
  last: null, // {key, modelKey, name, photo, variant, threads}: the last run, which a benchmark repeats
  camera: null, // {stream, frames, times} while the camera runs
  listening: null, // while a wake-word model hears the microphone: its stream, AudioContext, outputs (demo/wakeword.js)
};
