"""The frontend's constant tables, built from its configuration as TFLite Micro's microfrontend
``*_util.c`` builds them at start-up: in float32 (each step rounded with ``float32``, as C's float
arithmetic does, and ``cosf``/``log1pf``/``powf`` taken as the double function rounded to float32) for
the window, the mel filterbank and the PCAN gain table, in double for kissfft's twiddles. ``log1pf`` is
the exception: pymicro-features calls the C library's at run time, which is not correctly rounded, and
the filterbank weights follow its last bit (2 of 472 differ with a correctly rounded log1p), so
``log1pf`` below is fdlibm's float algorithm, step by step: glibc's (2.36, Debian 12's, checked bit for
bit) and newlib's. A libm with another log1pf gives pymicro-features two other weights.

The configuration is pymicro-features' (what pymicro-wakeword feeds microWakeWord models): 16 kHz,
30 ms windows every 10 ms, 40 channels from 125 to 7500 Hz, noise reduction, PCAN, log scale."""

import math

from ..numerics.float32 import float32, float32_bits as _float32_bits, float32_from_bits as _float32_from_bits
from .fixed_point import int16

SAMPLE_RATE = 16000
WINDOW_SAMPLES = 30 * SAMPLE_RATE // 1000  # 480
STEP_SAMPLES = 10 * SAMPLE_RATE // 1000  # 160: one feature frame per step once the first window is full
FEATURES = 40  # filterbank channels: the values of one frame

FFT_SIZE = 512  # the power of two >= WINDOW_SAMPLES
COMPLEX_FFT_SIZE = FFT_SIZE // 2  # kiss_fftr packs the real input into a complex FFT of half the size
WINDOW_BITS = 12
FILTERBANK_BITS = 12
LOWER_BAND_LIMIT = 125.0
UPPER_BAND_LIMIT = 7500.0
NOISE_REDUCTION_BITS = 14
SMOOTHING_BITS = 10
PCAN_STRENGTH = 0.95
PCAN_OFFSET = 80.0
PCAN_GAIN_BITS = 21
PCAN_SNR_BITS = 12
PCAN_OUTPUT_BITS = 6
WIDE_DYNAMIC_FUNCTION_BITS = 32
LOG_SCALE_SHIFT = 6
# frontend.c: MostSignificantBit32(fft_size) - 1 - kFilterbankBits / 2
CORRECTION_BITS = FFT_SIZE.bit_length() - 1 - FILTERBANK_BITS // 2  # 3

# log_lut.c: log2(1 + x) - x at the ends of 128 segments of [0, 1), in 1/65536 (and a spare 0, as there)
LOG_LUT = (
    0, 224, 442, 654, 861, 1063, 1259, 1450, 1636, 1817, 1992, 2163, 2329, 2490, 2646, 2797, 2944, 3087, 3224,
    3358, 3487, 3611, 3732, 3848, 3960, 4068, 4172, 4272, 4368, 4460, 4549, 4633, 4714, 4791, 4864, 4934, 5001,
    5063, 5123, 5178, 5231, 5280, 5326, 5368, 5408, 5444, 5477, 5507, 5533, 5557, 5578, 5595, 5610, 5622, 5631,
    5637, 5640, 5641, 5638, 5633, 5626, 5615, 5602, 5586, 5568, 5547, 5524, 5498, 5470, 5439, 5406, 5370, 5332,
    5291, 5249, 5203, 5156, 5106, 5054, 5000, 4944, 4885, 4825, 4762, 4697, 4630, 4561, 4490, 4416, 4341, 4264,
    4184, 4103, 4020, 3935, 3848, 3759, 3668, 3575, 3481, 3384, 3286, 3186, 3084, 2981, 2875, 2768, 2659, 2549,
    2437, 2323, 2207, 2090, 1971, 1851, 1729, 1605, 1480, 1353, 1224, 1094, 963, 830, 695, 559, 421, 282, 142,
    0, 0,
)


def window_coefficients():
    """window_util.c: a Hann window in 1/4096 (int16), computed in float32."""
    arg = float32(float32(float32(math.pi) * 2.0) / float32(WINDOW_SAMPLES))
    coefficients = []
    for i in range(WINDOW_SAMPLES):
        cos = float32(math.cos(float32(arg * float32(i + 0.5))))
        value = float32(0.5 - float32(0.5 * cos))
        coefficients.append(math.floor(float32(float32(value * (1 << WINDOW_BITS)) + 0.5)))
    return coefficients


_LN2_HI, _LN2_LO = _float32_from_bits(0x3F317180), _float32_from_bits(0x3717F7D1)
_LOG1P_POLY = [_float32_from_bits(b) for b in (0x3F2AAAAB, 0x3ECCCCCD, 0x3E924925, 0x3E638E29, 0x3E3A3325,
                                                0x3E1CD04F, 0x3E178897)]


def log1pf(x):
    """fdlibm's s_log1pf.c for a float32 x >= 0 (all the filterbank needs), every operation rounded to
    float32: k = the power of two of 1 + x, f = the rest - 1, s = f / (2 + f), then a polynomial in s^2."""
    if x < 0 or not math.isfinite(x):
        raise ValueError(f"log1pf is ported for finite x >= 0 only, got {x}")
    f32 = float32
    hx = _float32_bits(x)
    if hx < 0x3ED413D7:  # x < 0.41422: log1p(x) straight from f = x
        if hx < 0x31000000:  # x < 2^-29
            return x if hx < 0x24800000 else f32(x - f32(f32(x * x) * 0.5))
        k, f, hu, c = 0, x, 1, 0.0
    else:
        u = f32(1.0 + x)
        hu = _float32_bits(u)
        k = (hu >> 23) - 127
        c = f32(1.0 - f32(u - x)) if k > 0 else f32(x - f32(u - 1.0))  # what rounding 1 + x lost
        c = f32(c / u)
        hu &= 0x7FFFFF
        if hu < 0x3504F7:
            u = _float32_from_bits(hu | 0x3F800000)
        else:
            k += 1
            u = _float32_from_bits(hu | 0x3F000000)
            hu = (0x800000 - hu) >> 2
        f = f32(u - 1.0)
    hfsq = f32(f32(0.5 * f) * f)
    if hu == 0:  # |f| < 2^-20
        if f == 0:
            return 0.0 if k == 0 else f32(f32(k * _LN2_HI) + f32(c + f32(k * _LN2_LO)))
        r = f32(hfsq * f32(1.0 - f32(float32(0.66666666666666666) * f)))
        return f32(f - r) if k == 0 else f32(f32(k * _LN2_HI) - f32(f32(r - f32(f32(k * _LN2_LO) + c)) - f))
    s = f32(f / f32(2.0 + f))
    z = f32(s * s)
    r = _LOG1P_POLY[-1]
    for coefficient in reversed(_LOG1P_POLY[:-1]):
        r = f32(coefficient + f32(z * r))
    r = f32(z * r)
    if k == 0:
        return f32(f - f32(hfsq - f32(s * f32(hfsq + r))))
    return f32(f32(k * _LN2_HI) - f32(f32(hfsq - f32(f32(s * f32(hfsq + r)) + f32(f32(k * _LN2_LO) + c))) - f))


def _freq_to_mel(freq):
    return float32(1127.0 * log1pf(float32(freq / 700.0)))


def filterbank():
    """filterbank_util.c's triangular mel filters as (channels, end_index): channels[c] =
    (first FFT bin, weights, unweights) for c in 0..FEATURES (one more than FEATURES: each channel also
    gets the previous one's unweighted energy, and channel 0's own sum is dropped). The C pads each
    channel's bins to 4-aligned blocks of zero weight; those add nothing, so they are left out here."""
    channels_plus_1 = FEATURES + 1
    mel_low = _freq_to_mel(float32(LOWER_BAND_LIMIT))
    mel_spacing = float32(float32(_freq_to_mel(float32(UPPER_BAND_LIMIT)) - mel_low) / float32(channels_plus_1))
    centers = [float32(mel_low + float32(mel_spacing * (i + 1))) for i in range(channels_plus_1)]
    spectrum_size = FFT_SIZE // 2 + 1
    hz_per_bin = float32(float32(0.5 * SAMPLE_RATE) / float32(spectrum_size - 1))
    start = int(float32(1.5 + float32(float32(LOWER_BAND_LIMIT) / hz_per_bin)))
    channels = []
    for chan in range(channels_plus_1):
        end = start
        while _freq_to_mel(float32(end * hz_per_bin)) <= centers[chan]:
            end += 1
        below = mel_low if chan == 0 else centers[chan - 1]
        weights, unweights = [], []
        for frequency in range(start, end):
            weight = float32(float32(centers[chan] - _freq_to_mel(float32(frequency * hz_per_bin)))
                             / float32(centers[chan] - below))
            weights.append(math.floor(float32(float32(weight * (1 << FILTERBANK_BITS)) + 0.5)))
            unweights.append(math.floor(float32(float32(float32(1.0 - weight) * (1 << FILTERBANK_BITS)) + 0.5)))
        channels.append((start, weights, unweights))
        start = end
    if start >= spectrum_size:
        raise ValueError(f"the filterbank reaches FFT bin {start}, past the spectrum's {spectrum_size}")
    return channels, start


def noise_reduction_constants():
    """noise_reduction_util.c: (even smoothing, odd smoothing, min signal remaining) in 1/16384."""
    return tuple(int(float32(float32(x) * (1 << NOISE_REDUCTION_BITS))) for x in (0.025, 0.06, 0.05))


def _pcan_gain(input_bits, x):
    """pcan_gain_control_util.c PcanGainLookupFunction: 2^gain_bits * (x + offset)^-strength, int16."""
    x_float = float32(float32(x) / float32(1 << input_bits))
    power = float32(float32(x_float + float32(PCAN_OFFSET)) ** -float32(PCAN_STRENGTH))
    gain = float32(float32(1 << PCAN_GAIN_BITS) * power)
    return 0x7FFF if gain > 0x7FFF else int(float32(gain + 0.5))


def pcan_gain_lut():
    """pcan_gain_control_util.c: the gain for x = 0, 1, then per interval [2^(n-1), 2^n) a quadratic
    (y0, a1, a2) at index 4n - 6 (the fourth slot of each is never read: 0 here)."""
    input_bits = SMOOTHING_BITS - CORRECTION_BITS
    lut = [0] * (4 * WIDE_DYNAMIC_FUNCTION_BITS - 3)
    lut[0] = _pcan_gain(input_bits, 0)
    lut[1] = _pcan_gain(input_bits, 1)
    for interval in range(2, WIDE_DYNAMIC_FUNCTION_BITS + 1):
        x0 = 1 << (interval - 1)
        x1 = x0 + (x0 >> 1)
        x2 = x0 + (x0 - 1) if interval == WIDE_DYNAMIC_FUNCTION_BITS else 2 * x0
        y0, y1, y2 = (_pcan_gain(input_bits, x) for x in (x0, x1, x2))
        a1 = 4 * (y1 - y0) - (y2 - y0)
        base = 4 * interval - 6
        lut[base:base + 3] = [y0, int16(a1), int16(y2 - y0 - a1)]
    return lut


def pcan_snr_shift():
    return PCAN_GAIN_BITS - CORRECTION_BITS - PCAN_SNR_BITS


def _kiss_cexp(phase):
    # _kiss_fft_guts.h with FIXED_POINT 16: floor(.5 + SAMP_MAX * cos(phase)), in double
    return math.floor(0.5 + 32767 * math.cos(phase)), math.floor(0.5 + 32767 * math.sin(phase))


def fft_twiddles():
    """kiss_fft.c kiss_fft_alloc: e^(-2 pi i k / n) in Q15 for the complex FFT of COMPLEX_FFT_SIZE."""
    pi = 3.141592653589793238462643383279502884197169399375105820974944
    return [_kiss_cexp(-2 * pi * i / COMPLEX_FFT_SIZE) for i in range(COMPLEX_FFT_SIZE)]


def real_fft_twiddles():
    """kiss_fftr.c kiss_fftr_alloc: the super twiddles that split the packed complex FFT into the real one."""
    pi = 3.14159265358979323846264338327
    return [_kiss_cexp(-pi * ((i + 1) / COMPLEX_FFT_SIZE + 0.5)) for i in range(COMPLEX_FFT_SIZE // 2)]
