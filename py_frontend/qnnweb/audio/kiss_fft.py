"""kissfft's fixed-point (int16, FIXED_POINT=16) real FFT as TFLite Micro's microfrontend builds it
(kiss_fft_int16.cc): every value an int16, every product a Q15 multiply rounded with
``(x + 2^14) >> 15``, every stage's inputs divided by its radix first, and every store wrapping to 16
bits as the C's int16 fields do. The complex FFT of COMPLEX_FFT_SIZE = 256 = 4^4 points is four
radix-4 stages (kf_factor's plan for it), run stage by stage instead of kf_work's recursion: the
blocks of one stage are independent, so the order changes nothing."""

from .tables import COMPLEX_FFT_SIZE, FFT_SIZE, fft_twiddles, real_fft_twiddles


def _radix4_stages(n):
    """(fstride, m) of each radix-4 butterfly pass, innermost first, and the input index of each output
    slot (kf_work's decimation: base-4 digit reversal)."""
    if n < 4 or n & (n - 1) or n.bit_length() % 2 == 0:
        raise ValueError(f"this kissfft port runs radix-4 stages only: {n} points is not a power of 4")
    stages, fstride, m = [], 1, n // 4
    while m >= 1:
        stages.append((fstride, m))
        fstride, m = fstride * 4, m // 4
    return stages[::-1], [_reverse_base4(slot, n) for slot in range(n)]


def _reverse_base4(x, n):
    result = 0
    while n > 1:
        result, x, n = result * 4 + x % 4, x // 4, n // 4
    return result


class RealFft:
    """kiss_fftr for FFT_SIZE int16 inputs: ``spectrum(samples)`` -> (real, imag), FFT_SIZE / 2 + 1 each."""

    def __init__(self):
        twiddles = fft_twiddles()
        stages, self._order = _radix4_stages(COMPLEX_FFT_SIZE)
        # per pass: (m, [(k, w1, w2, w3) for each butterfly column]) with w = (re, im) of twiddles k, 2k, 3k
        self._passes = [(m, [(k, *twiddles[k * fstride], *twiddles[2 * k * fstride], *twiddles[3 * k * fstride])
                             for k in range(m)]) for fstride, m in stages]
        self._split = real_fft_twiddles()

    def spectrum(self, samples):
        n = COMPLEX_FFT_SIZE
        if len(samples) != FFT_SIZE:
            raise ValueError(f"the FFT takes {FFT_SIZE} samples, got {len(samples)}")
        # the real input read as n complex values (even samples real, odd imaginary), decimated
        re = [samples[2 * i] for i in self._order]
        im = [samples[2 * i + 1] for i in self._order]
        for m, columns in self._passes:
            for base in range(0, n, 4 * m):
                _butterflies4(re, im, base, m, columns)
        return _split_real(re, im, self._split)


def _butterflies4(re, im, base, m, columns):
    """kf_bfly4 (forward) on the block at ``base``: C_FIXDIV by 4 (x * 8191 in Q15), three twiddle
    products, then the radix-4 sums. Only the eight results can leave the int16 range: the divided
    inputs are within 8191, a product with a Q15 twiddle within 2 * 8191, and the scratch sums within
    3 * 8191 and 4 * 8191, so those C stores wrap nothing and are left plain here (the wrap is written
    out, not called: this loop is most of the frontend's time)."""
    for k, w1r, w1i, w2r, w2i, w3r, w3i in columns:
        a = base + k
        b, c, d = a + m, a + 2 * m, a + 3 * m
        ar, ai = (re[a] * 8191 + 0x4000) >> 15, (im[a] * 8191 + 0x4000) >> 15
        br, bi = (re[b] * 8191 + 0x4000) >> 15, (im[b] * 8191 + 0x4000) >> 15
        cr, ci = (re[c] * 8191 + 0x4000) >> 15, (im[c] * 8191 + 0x4000) >> 15
        dr, di = (re[d] * 8191 + 0x4000) >> 15, (im[d] * 8191 + 0x4000) >> 15
        s0r, s0i = (br * w1r - bi * w1i + 0x4000) >> 15, (br * w1i + bi * w1r + 0x4000) >> 15
        s1r, s1i = (cr * w2r - ci * w2i + 0x4000) >> 15, (cr * w2i + ci * w2r + 0x4000) >> 15
        s2r, s2i = (dr * w3r - di * w3i + 0x4000) >> 15, (dr * w3i + di * w3r + 0x4000) >> 15
        s5r, s5i = ar - s1r, ai - s1i
        ar, ai = ar + s1r, ai + s1i
        s3r, s3i = s0r + s2r, s0i + s2i
        s4r, s4i = s0r - s2r, s0i - s2i
        re[c], im[c] = ((ar - s3r + 0x8000) & 0xFFFF) - 0x8000, ((ai - s3i + 0x8000) & 0xFFFF) - 0x8000
        re[a], im[a] = ((ar + s3r + 0x8000) & 0xFFFF) - 0x8000, ((ai + s3i + 0x8000) & 0xFFFF) - 0x8000
        re[b], im[b] = ((s5r + s4i + 0x8000) & 0xFFFF) - 0x8000, ((s5i - s4r + 0x8000) & 0xFFFF) - 0x8000
        re[d], im[d] = ((s5r - s4i + 0x8000) & 0xFFFF) - 0x8000, ((s5i + s4r + 0x8000) & 0xFFFF) - 0x8000


def _split_real(re, im, split):
    """kiss_fftr's second half: the packed complex spectrum Z into the real input's X[0..n], with
    C_FIXDIV by 2 (x * 16383 in Q15: within 16383, so the sums of two fit an int16) and HALF_OF
    (>> 1 of two int16, which fits one)."""
    n = len(re)
    out_re, out_im = [0] * (n + 1), [0] * (n + 1)
    dc_r, dc_i = (re[0] * 16383 + 0x4000) >> 15, (im[0] * 16383 + 0x4000) >> 15
    out_re[0], out_re[n] = dc_r + dc_i, dc_r - dc_i
    for k in range(1, n // 2 + 1):
        pr, pi = (re[k] * 16383 + 0x4000) >> 15, (im[k] * 16383 + 0x4000) >> 15
        conjugate = -im[n - k] if im[n - k] != -0x8000 else -0x8000  # negated into an int16
        qr, qi = (re[n - k] * 16383 + 0x4000) >> 15, (conjugate * 16383 + 0x4000) >> 15
        f1r, f1i, f2r, f2i = pr + qr, pi + qi, pr - qr, pi - qi
        wr, wi = split[k - 1]
        # Q15 products of sums up to 2 * 16383: these can wrap
        tr = ((((f2r * wr - f2i * wi + 0x4000) >> 15) + 0x8000) & 0xFFFF) - 0x8000
        ti = ((((f2r * wi + f2i * wr + 0x4000) >> 15) + 0x8000) & 0xFFFF) - 0x8000
        out_re[k], out_im[k] = (f1r + tr) >> 1, (f1i + ti) >> 1
        out_re[n - k], out_im[n - k] = (f1r - tr) >> 1, (ti - f1i) >> 1
    return out_re, out_im
