// Types of qnnweb-audio.js (the npm package's "qnnweb/audio"): microWakeWord's audio frontend, the
// JavaScript twin of the Python package's qnnweb.audio. Written by hand: keep in step with the module.

/** The sample rate the frontend takes: 16 kHz, 16-bit, mono. */
export const SAMPLE_RATE: 16000;
/** Samples in one analysis window (30 ms). */
export const WINDOW_SAMPLES: 480;
/** Samples between frames (10 ms). */
export const STEP_SAMPLES: 160;
/** Values in one frame (mel channels). */
export const FEATURES: 40;
/** Each frame value is the frontend's uint16 output times this (5 / 128), as pymicro-features gives it. */
export const FEATURE_SCALE: 0.0390625;

/** The constant tables a MicroFrontend builds at construction (the same numbers as qnnweb.audio.tables). */
export interface FrontendTables {
  /** The Hann window in 1/4096. */
  window: number[];
  /** Per channel 0..FEATURES: [first FFT bin, weights, unweights] in 1/4096. */
  filterbank: [number, number[], number[]][];
  /** One past the last FFT bin the filterbank reads. */
  filterbankEnd: number;
  /** [even smoothing, odd smoothing, min signal remaining] in 1/16384. */
  noiseReduction: [number, number, number];
  /** PCAN's gain table (int16). */
  pcanGainLut: number[];
  /** kissfft's twiddles, [re, im] in Q15. */
  fftTwiddles: [number, number][];
  /** kiss_fftr's split twiddles, [re, im] in Q15. */
  realFftTwiddles: [number, number][];
}

/** The constant tables, as plain arrays: for tests and inspection. */
export function frontendTables(): FrontendTables;

/** microWakeWord's features of 16 kHz 16-bit mono audio, streaming: the values pymicro-features gives. */
export class MicroFrontend {
  constructor();
  /** The frames `samples` complete (one per STEP_SAMPLES once WINDOW_SAMPLES are in), each FEATURES
   * values; the samples not yet in a frame are kept for the next call. Throws a RangeError for a value
   * that is not an integer in [-32768, 32767], a TypeError for something that is not an array. */
  process(samples: Int16Array | ArrayLike<number>): Float32Array[];
  /** Start over: an empty window and no noise estimate. */
  reset(): void;
}
