// microWakeWord's audio frontend: the JavaScript twin of the Python package's qnnweb.audio (same
// integer arithmetic, same values). 16 kHz 16-bit mono samples in, one frame of 40 log-mel values per
// 10 ms out: TensorFlow Lite Micro's microfrontend (window, int16 kissfft, mel filterbank, noise
// reduction, PCAN gain control, log scale) as pymicro-features configures it for pymicro-wakeword,
// whose values these are, bit for bit.
//
//   import { MicroFrontend } from "qnnweb/audio";
//   const frontend = new MicroFrontend();
//   for (const frame of frontend.process(samples)) { ... }  // samples: an Int16Array at 16 kHz;
//                                                           // frame: a Float32Array of 40 values
//
// Numbers: int16 and uint32 values wrap as the C's do ((x << 16) >> 16, x >>> 0, Math.imul); the
// uint64 intermediates stay below 2^53 (so a double holds them exactly) except, in principle, PCAN's
// signal * gain, which falls back to BigInt past 2^53.

export const SAMPLE_RATE = 16000;
export const WINDOW_SAMPLES = 480; // 30 ms
export const STEP_SAMPLES = 160; // 10 ms: one frame per step once the first window is full
export const FEATURES = 40;
// pymicro-features hands each uint16 feature on as value * 0.0390625 (exact: 5 / 128)
export const FEATURE_SCALE = 0.0390625;

const FFT_SIZE = 512;
const COMPLEX_FFT_SIZE = FFT_SIZE / 2; // kiss_fftr packs the real input into a complex FFT of half the size
const WINDOW_BITS = 12;
const FILTERBANK_BITS = 12;
const LOWER_BAND_LIMIT = 125.0;
const UPPER_BAND_LIMIT = 7500.0;
const NOISE_REDUCTION_BITS = 14;
const SMOOTHING_BITS = 10;
const PCAN_STRENGTH = 0.95;
const PCAN_OFFSET = 80.0;
const PCAN_GAIN_BITS = 21;
const PCAN_SNR_BITS = 12;
const PCAN_OUTPUT_BITS = 6;
const WIDE_DYNAMIC_FUNCTION_BITS = 32;
const LOG_SCALE_SHIFT = 6;
const CORRECTION_BITS = 9 - FILTERBANK_BITS / 2; // MostSignificantBit32(FFT_SIZE) - 1 - kFilterbankBits / 2

// log_lut.c: log2(1 + x) - x at the ends of 128 segments of [0, 1), in 1/65536 (and a spare 0, as there)
const LOG_LUT = [
  0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944, 3087, 3224,
  3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791, 4864, 4934, 5001,
  5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631,
  5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332,
  5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264,
  4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549,
  2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142,
  0, 0,
];

const int16 = (x) => (x << 16) >> 16;
const q15 = (x) => int16((x + 0x4000) >> 15); // kissfft's sround(): a Q30 product back to an int16
const f32 = Math.fround;

// ---------------------------------------------------------------- the tables, built as *_util.c builds them

// Float32 steps rounded with Math.fround, as C's float arithmetic; cosf and powf as the double
// function rounded to float32. log1pf is ported instead (fdlibm's, glibc's and newlib's): pymicro-features
// calls the C library's, which is not correctly rounded, and the filterbank weights follow its last bit
// (2 of 472 differ with a correctly rounded log1p).

const bitsView = new DataView(new ArrayBuffer(4));
function float32Bits(x) {
  bitsView.setFloat32(0, x, true);
  return bitsView.getUint32(0, true);
}
function float32FromBits(bits) {
  bitsView.setUint32(0, bits, true);
  return bitsView.getFloat32(0, true);
}

const LN2_HI = float32FromBits(0x3f317180);
const LN2_LO = float32FromBits(0x3717f7d1);
const LOG1P_POLY = [0x3f2aaaab, 0x3ecccccd, 0x3e924925, 0x3e638e29, 0x3e3a3325, 0x3e1cd04f, 0x3e178897]
  .map(float32FromBits);

/** fdlibm's s_log1pf.c (glibc's and newlib's log1pf) for a float32 x >= 0, every step in float32. */
function log1pf(x) {
  const hx = float32Bits(x);
  let k, f, hu, c;
  if (hx < 0x3ed413d7) { // x < 0.41422: log1p(x) straight from f = x
    if (hx < 0x31000000) return hx < 0x24800000 ? x : f32(x - f32(f32(x * x) * 0.5));
    [k, f, hu, c] = [0, x, 1, 0];
  } else {
    let u = f32(1 + x);
    hu = float32Bits(u);
    k = (hu >>> 23) - 127;
    c = k > 0 ? f32(1 - f32(u - x)) : f32(x - f32(u - 1)); // what rounding 1 + x lost
    c = f32(c / u);
    hu &= 0x7fffff;
    if (hu < 0x3504f7) {
      u = float32FromBits(hu | 0x3f800000);
    } else {
      k += 1;
      u = float32FromBits(hu | 0x3f000000);
      hu = (0x800000 - hu) >> 2;
    }
    f = f32(u - 1);
  }
  const hfsq = f32(f32(0.5 * f) * f);
  if (hu === 0) { // |f| < 2^-20
    if (f === 0) return k === 0 ? 0 : f32(f32(k * LN2_HI) + f32(c + f32(k * LN2_LO)));
    const r = f32(hfsq * f32(1 - f32(f32(0.66666666666666666) * f)));
    return k === 0 ? f32(f - r) : f32(f32(k * LN2_HI) - f32(f32(r - f32(f32(k * LN2_LO) + c)) - f));
  }
  const s = f32(f / f32(2 + f));
  const z = f32(s * s);
  let r = LOG1P_POLY[6];
  for (let i = 5; i >= 0; i--) r = f32(LOG1P_POLY[i] + f32(z * r));
  r = f32(z * r);
  if (k === 0) return f32(f - f32(hfsq - f32(s * f32(hfsq + r))));
  return f32(f32(k * LN2_HI) - f32(f32(hfsq - f32(f32(s * f32(hfsq + r)) + f32(f32(k * LN2_LO) + c))) - f));
}

const freqToMel = (freq) => f32(1127 * log1pf(f32(freq / 700)));

function windowCoefficients() {
  const arg = f32(f32(f32(Math.PI) * 2) / WINDOW_SAMPLES);
  const coefficients = [];
  for (let i = 0; i < WINDOW_SAMPLES; i++) {
    const value = f32(0.5 - f32(0.5 * f32(Math.cos(f32(arg * f32(i + 0.5))))));
    coefficients.push(Math.floor(f32(f32(value * (1 << WINDOW_BITS)) + 0.5)));
  }
  return coefficients;
}

// Per channel 0..FEATURES: {start, weights, unweights} over its FFT bins (the C's zero-weight padding
// adds nothing and is left out); each channel also gets the previous one's unweighted energy, and
// channel 0's own sum is dropped.
function filterbank() {
  const channelsPlus1 = FEATURES + 1;
  const melLow = freqToMel(LOWER_BAND_LIMIT);
  const melSpacing = f32(f32(freqToMel(UPPER_BAND_LIMIT) - melLow) / channelsPlus1);
  const centers = [];
  for (let i = 0; i < channelsPlus1; i++) centers.push(f32(melLow + f32(melSpacing * (i + 1))));
  const spectrumSize = FFT_SIZE / 2 + 1;
  const hzPerBin = f32(f32(0.5 * SAMPLE_RATE) / (spectrumSize - 1));
  let start = Math.trunc(f32(1.5 + f32(LOWER_BAND_LIMIT / hzPerBin)));
  const channels = [];
  for (let chan = 0; chan < channelsPlus1; chan++) {
    let end = start;
    while (freqToMel(f32(end * hzPerBin)) <= centers[chan]) end++;
    const below = chan === 0 ? melLow : centers[chan - 1];
    const weights = [];
    const unweights = [];
    for (let frequency = start; frequency < end; frequency++) {
      const weight = f32(f32(centers[chan] - freqToMel(f32(frequency * hzPerBin))) / f32(centers[chan] - below));
      weights.push(Math.floor(f32(f32(weight * (1 << FILTERBANK_BITS)) + 0.5)));
      unweights.push(Math.floor(f32(f32(f32(1 - weight) * (1 << FILTERBANK_BITS)) + 0.5)));
    }
    channels.push({ start, weights, unweights });
    start = end;
  }
  if (start >= spectrumSize) {
    throw new Error(`the filterbank reaches FFT bin ${start}, past the spectrum's ${spectrumSize}`);
  }
  return { channels, end: start };
}

// (even smoothing, odd smoothing, min signal remaining) in 1/16384
const noiseReductionConstants = () =>
  [0.025, 0.06, 0.05].map((x) => Math.trunc(f32(f32(x) * (1 << NOISE_REDUCTION_BITS))));

function pcanGain(inputBits, x) {
  const xFloat = f32(f32(x) / (2 ** inputBits));
  const power = f32(Math.pow(f32(xFloat + PCAN_OFFSET), -f32(PCAN_STRENGTH)));
  const gain = f32(f32(2 ** PCAN_GAIN_BITS) * power);
  return gain > 0x7fff ? 0x7fff : Math.trunc(f32(gain + 0.5));
}

// The gain for x = 0, 1, then per interval [2^(n-1), 2^n) a quadratic (y0, a1, a2) at 4n - 6.
function pcanGainLut() {
  const inputBits = SMOOTHING_BITS - CORRECTION_BITS;
  const lut = new Array(4 * WIDE_DYNAMIC_FUNCTION_BITS - 3).fill(0);
  lut[0] = pcanGain(inputBits, 0);
  lut[1] = pcanGain(inputBits, 1);
  for (let interval = 2; interval <= WIDE_DYNAMIC_FUNCTION_BITS; interval++) {
    const x0 = 2 ** (interval - 1);
    const x1 = x0 + Math.floor(x0 / 2);
    const x2 = interval === WIDE_DYNAMIC_FUNCTION_BITS ? x0 + (x0 - 1) : 2 * x0;
    const [y0, y1, y2] = [x0, x1, x2].map((x) => pcanGain(inputBits, x));
    const a1 = 4 * (y1 - y0) - (y2 - y0);
    const base = 4 * interval - 6;
    lut[base] = y0;
    lut[base + 1] = int16(a1);
    lut[base + 2] = int16(y2 - y0 - a1);
  }
  return lut;
}

// kissfft's twiddles in Q15: floor(.5 + 32767 * cos(phase)), in double
const kissCexp = (phase) => [Math.floor(0.5 + 32767 * Math.cos(phase)), Math.floor(0.5 + 32767 * Math.sin(phase))];

function fftTwiddles() {
  const pi = 3.141592653589793238462643383279502884197169399375105820974944;
  return Array.from({ length: COMPLEX_FFT_SIZE }, (_, i) => kissCexp((-2 * pi * i) / COMPLEX_FFT_SIZE));
}

function realFftTwiddles() {
  const pi = 3.14159265358979323846264338327;
  return Array.from({ length: COMPLEX_FFT_SIZE / 2 }, (_, i) => kissCexp(-pi * ((i + 1) / COMPLEX_FFT_SIZE + 0.5)));
}

/** The constant tables the frontend computes at construction, as plain arrays (the Python twin's
 * qnnweb.audio.tables gives the same numbers): for tests and inspection. */
export function frontendTables() {
  const { channels, end } = filterbank();
  return {
    window: windowCoefficients(),
    filterbank: channels.map(({ start, weights, unweights }) => [start, weights, unweights]),
    filterbankEnd: end,
    noiseReduction: noiseReductionConstants(),
    pcanGainLut: pcanGainLut(),
    fftTwiddles: fftTwiddles(),
    realFftTwiddles: realFftTwiddles(),
  };
}

// ---------------------------------------------------------------- kissfft, int16 (FIXED_POINT=16)

// 256 = 4^4 points: four radix-4 passes (kf_factor's plan), run pass by pass instead of kf_work's
// recursion (the blocks of one pass are independent), on the input in base-4 digit-reversed order.
class RealFft {
  constructor() {
    const n = COMPLEX_FFT_SIZE;
    const twiddles = fftTwiddles();
    this.order = Int32Array.from({ length: n }, (_, slot) => {
      let result = 0;
      for (let x = slot, m = n; m > 1; x = Math.floor(x / 4), m /= 4) result = result * 4 + (x % 4);
      return result;
    });
    this.passes = []; // innermost first: [m, Int32Array of (k, w1r, w1i, w2r, w2i, w3r, w3i) per column]
    for (let fstride = n / 4, m = 1; m < n; fstride /= 4, m *= 4) {
      const columns = new Int32Array(7 * m);
      for (let k = 0; k < m; k++) {
        columns.set([k, ...twiddles[k * fstride], ...twiddles[2 * k * fstride], ...twiddles[3 * k * fstride]], 7 * k);
      }
      this.passes.push([m, columns]);
    }
    this.split = realFftTwiddles();
    this.re = new Int16Array(n);
    this.im = new Int16Array(n);
    this.outRe = new Int16Array(n + 1);
    this.outIm = new Int16Array(n + 1);
  }

  /** kiss_fftr of FFT_SIZE int16 samples: fills outRe / outIm (FFT_SIZE / 2 + 1 each). */
  spectrum(samples) {
    const { re, im, order } = this;
    const n = COMPLEX_FFT_SIZE;
    for (let slot = 0; slot < n; slot++) {
      re[slot] = samples[2 * order[slot]];
      im[slot] = samples[2 * order[slot] + 1];
    }
    for (const [m, columns] of this.passes) {
      for (let base = 0; base < n; base += 4 * m) butterflies4(re, im, base, m, columns);
    }
    this.splitReal();
  }

  // kiss_fftr's second half: C_FIXDIV by 2 (x * 16383 in Q15), HALF_OF (>> 1, always fits an int16)
  splitReal() {
    const { re, im, outRe, outIm, split } = this;
    const n = COMPLEX_FFT_SIZE;
    const dcR = (re[0] * 16383 + 0x4000) >> 15;
    const dcI = (im[0] * 16383 + 0x4000) >> 15;
    outRe[0] = int16(dcR + dcI);
    outRe[n] = int16(dcR - dcI);
    outIm[0] = outIm[n] = 0;
    for (let k = 1; k <= n / 2; k++) {
      const pr = (re[k] * 16383 + 0x4000) >> 15;
      const pi = (im[k] * 16383 + 0x4000) >> 15;
      const qr = (re[n - k] * 16383 + 0x4000) >> 15;
      const qi = (int16(-im[n - k]) * 16383 + 0x4000) >> 15;
      const f1r = int16(pr + qr);
      const f1i = int16(pi + qi);
      const f2r = int16(pr - qr);
      const f2i = int16(pi - qi);
      const [wr, wi] = split[k - 1];
      const tr = q15(f2r * wr - f2i * wi);
      const ti = q15(f2r * wi + f2i * wr);
      outRe[k] = (f1r + tr) >> 1;
      outIm[k] = (f1i + ti) >> 1;
      outRe[n - k] = (f1r - tr) >> 1;
      outIm[n - k] = (ti - f1i) >> 1;
    }
  }
}

// kf_bfly4 (forward): C_FIXDIV by 4 (x * 8191 in Q15, always fits an int16), three twiddle products,
// the radix-4 sums, each stored as an int16 (re and im are Int16Arrays: their stores wrap as the C's).
function butterflies4(re, im, base, m, columns) {
  for (let col = 0; col < 7 * m; col += 7) {
    const a = base + columns[col];
    const b = a + m;
    const c = b + m;
    const d = c + m;
    let ar = (re[a] * 8191 + 0x4000) >> 15;
    let ai = (im[a] * 8191 + 0x4000) >> 15;
    const br = (re[b] * 8191 + 0x4000) >> 15;
    const bi = (im[b] * 8191 + 0x4000) >> 15;
    const cr = (re[c] * 8191 + 0x4000) >> 15;
    const ci = (im[c] * 8191 + 0x4000) >> 15;
    const dr = (re[d] * 8191 + 0x4000) >> 15;
    const di = (im[d] * 8191 + 0x4000) >> 15;
    const w1r = columns[col + 1];
    const w1i = columns[col + 2];
    const w2r = columns[col + 3];
    const w2i = columns[col + 4];
    const w3r = columns[col + 5];
    const w3i = columns[col + 6];
    const s0r = q15(br * w1r - bi * w1i);
    const s0i = q15(br * w1i + bi * w1r);
    const s1r = q15(cr * w2r - ci * w2i);
    const s1i = q15(cr * w2i + ci * w2r);
    const s2r = q15(dr * w3r - di * w3i);
    const s2i = q15(dr * w3i + di * w3r);
    const s5r = int16(ar - s1r);
    const s5i = int16(ai - s1i);
    ar = int16(ar + s1r);
    ai = int16(ai + s1i);
    const s3r = int16(s0r + s2r);
    const s3i = int16(s0i + s2i);
    const s4r = int16(s0r - s2r);
    const s4i = int16(s0i - s2i);
    re[c] = ar - s3r;
    im[c] = ai - s3i;
    re[a] = ar + s3r;
    im[a] = ai + s3i;
    re[b] = s5r + s4i;
    im[b] = s5i - s4r;
    re[d] = s5r - s4i;
    im[d] = s5i + s4r;
  }
}

// ---------------------------------------------------------------- the per-frame stages

/** filterbank.c Sqrt64 (Sqrt32 below 2^32) of an integer n < 2^53: the square root rounded to
 * nearest (up when the remainder exceeds the root), except at the type's largest value. */
function roundedSqrt(n) {
  let root = Math.floor(Math.sqrt(n));
  while (root * root > n) root--;
  while ((root + 1) * (root + 1) <= n) root++;
  const largest = n < 2 ** 32 ? 0xffff : 0xffffffff;
  return n - root * root > root && root !== largest ? root + 1 : root;
}

// pcan_gain_control.c WideDynamicFunction: the gain for noise estimate x, a quadratic in x's octave
function wideDynamicFunction(x, lut) {
  if (x <= 2) return lut[x];
  const interval = 32 - Math.clz32(x);
  const base = 4 * interval - 6;
  const frac = (interval < 11 ? x << (11 - interval) : x >>> (interval - 11)) & 0x3ff;
  let result = (lut[base + 2] * frac) >> 5;
  result = (result + ((lut[base + 1] << 5) | 0)) | 0;
  result = Math.imul(result, frac);
  result = ((result + (1 << 14)) | 0) >> 15;
  return int16(result + lut[base]);
}

// (a * b) >> shift as the C's uint64 arithmetic, truncated to uint32 (a, b uint32)
function mulShiftUint32(a, b, shift) {
  const product = a * b;
  if (product <= Number.MAX_SAFE_INTEGER) return Math.floor(product / 2 ** shift) >>> 0;
  return Number((BigInt(a) * BigInt(b)) >> BigInt(shift) & 0xffffffffn);
}

function pcanShrink(x) {
  if (x < 2 << PCAN_SNR_BITS) return (x * x) >>> (2 + 2 * PCAN_SNR_BITS - PCAN_OUTPUT_BITS);
  return (x >>> (PCAN_SNR_BITS - PCAN_OUTPUT_BITS)) - (1 << PCAN_OUTPUT_BITS);
}

// log_scale.c Log: 2^scale_shift * ln(x) in Q16 steps, from log2 by a 128-segment table
function logScale(x) {
  const integer = 31 - Math.clz32(x);
  let frac = x - 2 ** integer;
  frac = integer < 16 ? frac << (16 - integer) : frac >>> (integer - 16);
  const segment = frac >>> 9;
  const c0 = LOG_LUT[segment];
  const c1 = LOG_LUT[segment + 1];
  const fraction = (frac + c0 + (((c1 - c0) * (frac - segment * 512)) >> 16)) >>> 0;
  const log2 = (integer * 65536 + fraction) >>> 0;
  const loge = Math.floor((45426 * log2 + 32768) / 65536) >>> 0; // 45426 = 65536 * ln 2
  return ((((loge << LOG_SCALE_SHIFT) >>> 0) + 32768) >>> 0) >>> 16;
}

/** The features of 16 kHz 16-bit mono audio, streaming: `process(samples)` returns the frames those
 * samples complete (one per 10 ms once the first 30 ms are in; each a Float32Array of FEATURES values,
 * pymicro-features' values) and keeps the rest for the next call, so chunking changes nothing;
 * `reset()` starts over (empty window, no noise estimate). */
export class MicroFrontend {
  constructor() {
    this.coefficients = Int32Array.from(windowCoefficients());
    this.fft = new RealFft();
    const { channels, end } = filterbank();
    this.channels = channels;
    this.energy = new Float64Array(end);
    [this.evenSmoothing, this.oddSmoothing, this.minSignalRemaining] = noiseReductionConstants();
    this.gainLut = Int32Array.from(pcanGainLut());
    this.snrShift = PCAN_GAIN_BITS - CORRECTION_BITS - PCAN_SNR_BITS;
    this.window = new Int16Array(WINDOW_SAMPLES);
    this.fftInput = new Int16Array(FFT_SIZE);
    this.signal = new Float64Array(FEATURES);
    this.noiseEstimate = new Float64Array(FEATURES);
    this.reset();
  }

  reset() {
    this.used = 0;
    this.window.fill(0);
    this.noiseEstimate.fill(0);
  }

  /** The feature frames `samples` (an Int16Array, or an array of integers in [-32768, 32767]) complete. */
  process(samples) {
    const pcm = int16Samples(samples);
    const frames = [];
    for (let read = 0; read < pcm.length;) {
      const take = Math.min(WINDOW_SAMPLES - this.used, pcm.length - read);
      this.window.set(pcm.subarray(read, read + take), this.used);
      this.used += take;
      read += take;
      if (this.used === WINDOW_SAMPLES) {
        frames.push(this.frame());
        this.window.copyWithin(0, STEP_SAMPLES);
        this.used -= STEP_SAMPLES;
      }
    }
    return frames;
  }

  // frontend.c FrontendProcessSamples on a full window
  frame() {
    const { window, coefficients, fftInput, fft, energy, signal } = this;
    let maxAbs = 0;
    for (let i = 0; i < WINDOW_SAMPLES; i++) {
      const v = int16((window[i] * coefficients[i]) >> WINDOW_BITS);
      fftInput[i] = v;
      // the C negates an int16 to take |v|: -32768 stays negative, so it never raises the maximum
      if (v !== -0x8000 && Math.abs(v) > maxAbs) maxAbs = Math.abs(v);
    }
    const inputShift = 15 - (32 - Math.clz32(maxAbs));
    for (let i = 0; i < WINDOW_SAMPLES; i++) fftInput[i] = int16((fftInput[i] & 0xffff) << inputShift);
    fftInput.fill(0, WINDOW_SAMPLES);
    fft.spectrum(fftInput);
    const { outRe, outIm } = fft;
    // no component is ever -32768 (kiss_fftr's last step halves sums of two int16 of which at most one
    // can be), so each energy is below 2^31 and each channel's sum below 2^47: exact in a double
    for (let i = this.channels[0].start; i < energy.length; i++) energy[i] = outRe[i] * outRe[i] + outIm[i] * outIm[i];
    let carried = 0;
    this.channels.forEach(({ start, weights, unweights }, chan) => {
      let weighted = 0;
      let unweighted = 0;
      for (let j = 0; j < weights.length; j++) {
        weighted += weights[j] * energy[start + j];
        unweighted += unweights[j] * energy[start + j];
      }
      // channel 0 only hands its unweighted energy on
      if (chan > 0) signal[chan - 1] = roundedSqrt(weighted + carried) >>> inputShift;
      carried = unweighted;
    });
    this.reduceNoise();
    this.pcan();
    const frame = new Float32Array(FEATURES);
    for (let i = 0; i < FEATURES; i++) {
      const value = (signal[i] << CORRECTION_BITS) >>> 0;
      frame[i] = Math.min(value > 1 ? logScale(value) : 0, 0xffff) * FEATURE_SCALE;
    }
    return frame;
  }

  // noise_reduction.c: subtract a per-channel running noise estimate, keep at least a floor
  reduceNoise() {
    const { signal, noiseEstimate } = this;
    const one = 1 << NOISE_REDUCTION_BITS;
    for (let i = 0; i < FEATURES; i++) {
      const smoothing = i & 1 ? this.oddSmoothing : this.evenSmoothing;
      const scaledUp = (signal[i] << SMOOTHING_BITS) >>> 0;
      let estimate = Math.floor((scaledUp * smoothing + noiseEstimate[i] * (one - smoothing)) / one) >>> 0;
      noiseEstimate[i] = estimate;
      estimate = Math.min(estimate, scaledUp);
      const floor = Math.floor((signal[i] * this.minSignalRemaining) / one);
      signal[i] = Math.max((scaledUp - estimate) >>> SMOOTHING_BITS, floor);
    }
  }

  // pcan_gain_control.c: per-channel gain normalisation by the noise estimate, then shrink
  pcan() {
    const { signal, noiseEstimate } = this;
    for (let i = 0; i < FEATURES; i++) {
      const gain = wideDynamicFunction(noiseEstimate[i], this.gainLut) >>> 0;
      signal[i] = pcanShrink(mulShiftUint32(signal[i], gain, this.snrShift));
    }
  }
}

function int16Samples(samples) {
  if (samples instanceof Int16Array) return samples;
  if (samples == null || typeof samples.length !== "number" || typeof samples === "string") {
    throw new TypeError("MicroFrontend.process: expected an Int16Array or an array of 16-bit integer samples");
  }
  const pcm = new Int16Array(samples.length);
  for (let i = 0; i < samples.length; i++) {
    const s = samples[i];
    if (!Number.isInteger(s) || s < -32768 || s > 32767) {
      throw new RangeError(`MicroFrontend.process: sample ${i} is ${s}, not an integer in [-32768, 32767]`);
    }
    pcm[i] = s;
  }
  return pcm;
}
