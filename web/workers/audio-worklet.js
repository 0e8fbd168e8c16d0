// The demo's AudioWorklet (ctx.audioWorklet.addModule): the microphone's samples, at the AudioContext's rate
// (channel 0), resampled to 16 kHz int16, what microWakeWord's audio frontend takes; posted to the page in
// chunks of CHUNK samples (the buffer transferred).
//
// Resampling by linear interpolation. Input sample i sits at time i / sampleRate, output sample k at k / 16000,
// i.e. at input position t_k = k * step, step = sampleRate / 16000 (3 at 48 kHz, 2.75625 at 44.1 kHz). With
// i = floor(t_k) and f = t_k - i: y_k = x_i + f * (x_{i+1} - x_i). Positions count from the start of the current
// render quantum: `next` is t of the next output sample, in (-1, step - 1] when a quantum starts, and x_{-1} (the
// last sample of the quantum before, `last`) serves an output that falls between two quanta; after a quantum of
// n samples, next -= n. No low-pass filter before the decimation: what lies between 8 kHz and half the input
// rate folds into the band (microWakeWord's features stop at 7.5 kHz; speech has little energy up there).
// Float [-1, 1] to int16: round(y * 32768), clamped to [-32768, 32767].
const RATE = 16000;
const CHUNK = 480; // 30 ms at 16 kHz: three 10 ms feature steps, one model call

class Resample16k extends AudioWorkletProcessor {
  constructor() {
    super();
    this.step = sampleRate / RATE; // sampleRate: the AudioContext's, a global of the worklet scope
    this.next = 0;
    this.last = 0;
    this.chunk = new Int16Array(CHUNK);
    this.filled = 0;
  }

  process(inputs) {
    const x = inputs[0] && inputs[0][0];
    if (!x) return true; // nothing connected (yet)
    const n = x.length;
    while (this.next <= n - 1) {
      const i = Math.floor(this.next);
      const f = this.next - i; // 0 when i = n - 1: x_{i+1} is not needed
      const a = i < 0 ? this.last : x[i];
      const y = f === 0 ? a : a + f * (x[i + 1] - a);
      this.chunk[this.filled++] = Math.max(-32768, Math.min(32767, Math.round(y * 32768)));
      if (this.filled === CHUNK) {
        this.port.postMessage(this.chunk, [this.chunk.buffer]);
        this.chunk = new Int16Array(CHUNK);
        this.filled = 0;
      }
      this.next += this.step;
    }
    this.last = x[n - 1];
    this.next -= n;
    return true;
  }
}

registerProcessor("resample-16k", Resample16k);
