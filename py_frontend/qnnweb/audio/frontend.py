"""The microfrontend's per-frame pipeline (frontend.c FrontendProcessSamples) and the streaming
MicroFrontend around it. Integer arithmetic as the C's: uint32 values wrap where the C's do (``& M32``),
uint64 intermediates need no mask (every product here stays below 2^64)."""

import array
import math

from .fixed_point import UINT32_MASK as M32
from .fixed_point import int16, int32
from .kiss_fft import RealFft
from .tables import (CORRECTION_BITS, FEATURES, FFT_SIZE, LOG_LUT, LOG_SCALE_SHIFT, NOISE_REDUCTION_BITS,
                     PCAN_OUTPUT_BITS, PCAN_SNR_BITS, SMOOTHING_BITS, STEP_SAMPLES, WINDOW_BITS,
                     WINDOW_SAMPLES, filterbank, noise_reduction_constants, pcan_gain_lut, pcan_snr_shift,
                     window_coefficients)

# pymicro-features hands each uint16 feature to Python as value * 0.0390625 in float32: exact (5 / 128;
# a uint16 times 5 fits float32's 24-bit significand), so the same product in double is the same number
FEATURE_SCALE = 0.0390625


def rounded_sqrt(n):
    """filterbank.c Sqrt64 (Sqrt32 below 2^32): the integer square root rounded to nearest (up when the
    remainder exceeds the root), except at the type's largest value (0xFFFF, 0xFFFFFFFF)."""
    root = math.isqrt(n)
    largest = 0xFFFF if n >> 32 == 0 else 0xFFFFFFFF
    return root + 1 if n - root * root > root and root != largest else root


def wide_dynamic_function(x, lut):
    """pcan_gain_control.c: the PCAN gain for noise estimate x, a quadratic in x's octave (int16)."""
    if x <= 2:
        return lut[x]
    interval = x.bit_length()
    base = 4 * interval - 6
    frac = ((x << (11 - interval)) if interval < 11 else (x >> (interval - 11))) & 0x3FF
    result = (lut[base + 2] * frac) >> 5
    result = int32(result + int32(lut[base + 1] << 5))
    result = int32(result * frac)
    result = int32(result + (1 << 14)) >> 15
    return int16(result + lut[base])


def pcan_shrink(x):
    if x < (2 << PCAN_SNR_BITS):
        return (x * x) >> (2 + 2 * PCAN_SNR_BITS - PCAN_OUTPUT_BITS)
    return (x >> (PCAN_SNR_BITS - PCAN_OUTPUT_BITS)) - (1 << PCAN_OUTPUT_BITS)


def log_scale(x):
    """log_scale.c Log: 2^scale_shift * ln(x) in Q16 steps, from log2 by a 128-segment table."""
    integer = x.bit_length() - 1
    frac = x - (1 << integer)
    frac = frac << (16 - integer) if integer < 16 else frac >> (integer - 16)
    segment = frac >> 9
    c0, c1 = LOG_LUT[segment], LOG_LUT[segment + 1]
    fraction = (frac + c0 + (((c1 - c0) * (frac - (segment << 9))) >> 16)) & M32
    log2 = ((integer << 16) + fraction) & M32
    loge = ((45426 * log2 + 32768) >> 16) & M32  # 45426 = 65536 * ln 2
    return ((((loge << LOG_SCALE_SHIFT) & M32) + 32768) & M32) >> 16


class MicroFrontend:
    """microWakeWord's audio features from 16 kHz 16-bit mono samples: TFLite Micro's microfrontend as
    pymicro-features configures it, the same values as ``pymicro_features.MicroFrontend`` gives for the
    same samples. Streaming: ``process(samples)`` returns the frames those samples complete (one per
    10 ms once the first 30 ms are in; each a list of FEATURES floats) and keeps the rest for the next
    call, so chunking changes nothing. ``reset()`` starts over (empty window, no noise estimate).

        frontend = MicroFrontend()
        for chunk in chunks:                 # bytes of 16-bit little-endian PCM, or ints
            for frame in frontend.process(chunk):
                ...                          # 40 floats, a microWakeWord model's input row
    """

    def __init__(self):
        self._coefficients = window_coefficients()
        self._fft = RealFft()
        self._channels, self._end = filterbank()
        self._start = self._channels[0][0]
        self._even_smoothing, self._odd_smoothing, self._min_signal_remaining = noise_reduction_constants()
        self._gain_lut = pcan_gain_lut()
        self._snr_shift = pcan_snr_shift()
        self.reset()

    def reset(self):
        self._window = []
        self._noise_estimate = [0] * FEATURES

    def process(self, samples):
        """The feature frames ``samples`` complete: bytes-like 16-bit little-endian PCM (what
        pymicro-features takes), an ``array('h')``, or a sequence of ints in [-32768, 32767]."""
        frames = []
        window = self._window
        for sample in _int16_samples(samples):
            window.append(sample)
            if len(window) == WINDOW_SAMPLES:
                frames.append([value * FEATURE_SCALE for value in self._frame(window)])
                del window[:STEP_SAMPLES]
        return frames

    def _frame(self, window):
        """FrontendProcessSamples on a full window: FEATURES uint16 log-mel values."""
        # coefficients are at most 4096 = 1 << WINDOW_BITS, so each product fits an int16 as it is
        windowed = [(s * c) >> WINDOW_BITS for s, c in zip(window, self._coefficients)]
        # the C negates an int16 to take |v|: -32768 stays negative, so it never raises the maximum
        most_negative = min((v for v in windowed if v != -0x8000), default=0)
        input_shift = 15 - max(max(windowed), -most_negative, 0).bit_length()
        fft_input = [(((v << input_shift) + 0x8000) & 0xFFFF) - 0x8000 for v in windowed]
        re, im = self._fft.spectrum(fft_input + [0] * (FFT_SIZE - WINDOW_SAMPLES))
        # no component is ever -32768 (kiss_fftr's last step halves sums of two int16 of which at most
        # one can be), so each energy is below 2^31: the C's int32 never goes negative
        energy = [re[i] * re[i] + im[i] * im[i] if i >= self._start else 0 for i in range(self._end)]
        signal, carried = [], 0
        for chan, (start, weights, unweights) in enumerate(self._channels):
            weighted = sum(w * energy[start + j] for j, w in enumerate(weights))
            if chan:  # channel 0 only hands its unweighted energy on
                signal.append(rounded_sqrt(weighted + carried) >> input_shift)
            carried = sum(u * energy[start + j] for j, u in enumerate(unweights))
        self._reduce_noise(signal)
        self._pcan(signal)
        output = []
        for value in signal:
            value = (value << CORRECTION_BITS) & M32
            value = log_scale(value) if value > 1 else 0
            output.append(min(value, 0xFFFF))
        return output

    def _reduce_noise(self, signal):
        """noise_reduction.c: subtract a per-channel running noise estimate, keep at least a floor."""
        one = 1 << NOISE_REDUCTION_BITS
        estimates = self._noise_estimate
        for i, value in enumerate(signal):
            smoothing = self._odd_smoothing if i & 1 else self._even_smoothing
            scaled_up = (value << SMOOTHING_BITS) & M32
            estimate = ((scaled_up * smoothing + estimates[i] * (one - smoothing)) >> NOISE_REDUCTION_BITS) & M32
            estimates[i] = estimate
            estimate = min(estimate, scaled_up)
            floor = (value * self._min_signal_remaining) >> NOISE_REDUCTION_BITS
            signal[i] = max((scaled_up - estimate) >> SMOOTHING_BITS, floor)

    def _pcan(self, signal):
        """pcan_gain_control.c: per-channel gain normalisation by the noise estimate, then shrink."""
        for i, value in enumerate(signal):
            gain = wide_dynamic_function(self._noise_estimate[i], self._gain_lut) & M32
            signal[i] = pcan_shrink(((value * gain) >> self._snr_shift) & M32)


def _int16_samples(samples):
    """``samples`` as an array('h')."""
    try:
        view = memoryview(samples)
    except TypeError:
        view = None
    if view is not None:
        if view.format not in ("B", "b", "c", "h"):
            raise ValueError(f"expected 16-bit PCM (bytes or int16 samples), got a buffer of format {view.format!r}")
        raw = view.cast("B") if view.contiguous else view.tobytes()
        if len(raw) % 2:
            raise ValueError(f"16-bit PCM has an even number of bytes, got {len(raw)}")
        pcm = array.array("h")
        pcm.frombytes(raw)  # little-endian, as WAV files and every machine qnnweb runs on (wasm, x86, arm)
        return pcm
    try:
        return array.array("h", samples)
    except (TypeError, OverflowError) as e:
        raise ValueError(f"expected 16-bit samples (ints in [-32768, 32767]): {e}") from None
