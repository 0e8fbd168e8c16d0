"""onnxruntime's float32 erf and exp (MlasComputeErf, MlasComputeExp) as its AVX2 machines run them:
MLAS picks its FMA3 kernels wherever the CPU has FMA3, which compute every element, the tail's too, with
the vector code; every multiply-add is one FMA (fma32).

erf (mlas/lib/x86_64/ErfKernelFma3.S, the constants of mlas/lib/erf.cpp) (the constants of mlas/lib/erf.cpp): for |x| < 0.921875 an odd
polynomial in x^2, beyond it 1 - exp(-P(|x|)) with MLAS's own exp, the sign copied back last. The source's clamp of |x| to 3.725 does not show in onnxruntime 1.32's
results (they are those of the unclamped |x|: checked on 610,000 float32 values, every one the same
bits, from 1e-45 to 3e38), so none is applied here."""

import math

from .float32 import float32, fma32

_SPLIT = float32(0.921875)
_SMALL = [float32(c) for c in (-5.99104969e-4, 4.99339588e-3, -2.67667342e-2, 1.12818025e-1, -3.76124859e-1,
                               1.28379151e-1)]
_BIG = [float32(c) for c in (1.72948930e-5, -3.83208680e-4, 3.88393435e-3, -2.42545605e-2, 1.06777847e-1,
                             6.34846687e-1, 1.28717512e-1)]
_EXP_LOWER = float32(-88.3762626647949)
_LOG2_RECIPROCAL = float32(1.44269504088896341)
_LOG2_HI, _LOG2_LO = float32(-6.93145752e-1), float32(-1.42860677e-6)
_EXP_POLY = [float32(c) for c in (1.38319808e-3, 8.37550033e-3, 4.16689515e-2, 1.66664466e-1, 4.99999851e-1, 1.0,
                                  1.0)]
_ROUNDING = float32(1.25829120e+7)   # 1.5 * 2^23: adding it rounds to an integer


def mlas_erf(x):
    """erf of a finite float32 `x`, rounded step by step as MlasErfKernelFma3 rounds it."""
    a = abs(x)
    if a < _SPLIT:
        s = float32(a * a)
        r = _SMALL[0]
        for c in _SMALL[1:]:
            r = fma32(r, s, c)
        r = fma32(r, a, a)
    else:
        r = _BIG[0]
        for c in _BIG[1:]:
            r = fma32(r, a, c)
        e = max(-fma32(r, a, a), _EXP_LOWER)
        n = float32(fma32(_LOG2_RECIPROCAL, e, _ROUNDING) - _ROUNDING)   # round(e / ln 2)
        f = fma32(n, _LOG2_HI, e)
        f = fma32(n, _LOG2_LO, f)
        y = _EXP_POLY[0]
        for c in _EXP_POLY[1:]:
            y = fma32(y, f, c)
        r = float32(1.0 - float32(math.ldexp(y, int(n))))
    return -r if math.copysign(1.0, x) < 0 else r


# exp (mlas/lib/x86_64/TransKernelFma3.S MlasComputeExpF32KernelFma3, the constants of mlas/lib/compute.cpp)
_EXP_RANGE = (float32(-103.9720840454), float32(88.7762626647950))
_EXP_POLYNOMIAL = [float32(float.fromhex(c)) for c in ("0x1.694000p-10", "0x1.125edcp-7", "0x1.555b5ap-5",
                                                       "0x1.555450p-3", "0x1.fffff6p-2", "0x1.000000p+0")]


def mlas_exp(x):
    """exp of a finite float32 `x`, rounded step by step as MlasComputeExpF32KernelFma3 rounds it: x
    clamped, m = round(x / ln 2), r = x - m ln 2 (two FMAs), p(r) by Horner, then 2^m split in a normal
    power (exponent clamped to [-126, 127]) and the overflow power: (p * (r * overflow) + overflow) * normal.
    Checked against onnxruntime 1.32's Exp on 450,000 float32 values from -110 to 95, every one the same bits."""
    x = min(max(x, _EXP_RANGE[0]), _EXP_RANGE[1])
    m = float32(fma32(_LOG2_RECIPROCAL, x, _ROUNDING) - _ROUNDING)
    r = fma32(m, _LOG2_HI, x)
    r = fma32(m, _LOG2_LO, r)
    p = _EXP_POLYNOMIAL[0]
    for c in _EXP_POLYNOMIAL[1:]:
        p = fma32(p, r, c)
    normal = min(max(int(m), -126), 127)
    overflow = math.ldexp(1.0, int(m) - normal)
    p = fma32(p, float32(r * overflow), overflow)
    return float32(p * math.ldexp(1.0, normal))


# softmax (mlas/lib/compute.cpp MlasComputeSoftmaxThreaded with the AMD64 platform's FMA3 kernels:
# MlasReduceMaximumF32KernelAvx, MlasComputeSumExpF32KernelFma3, MlasComputeSoftmaxOutputF32KernelAvx)
_FLOAT32_LOWEST = -float32(3.4028234663852886e38)


def mlas_sum_exp(x, negative_max):
    """exp(x + negative_max) as MlasComputeSumExpF32KernelFma3 computes each element: the sum clamped below
    at -88.376 (maxps, the bound first), m = round(v / ln 2), two FMAs of range reduction, MLAS's exp
    polynomial with its last coefficient applied twice, then times 2^m made from m's bits (0 for m = -127)."""
    v = float32(x + negative_max)
    if v != v:
        return v
    v = _EXP_LOWER if _EXP_LOWER > v else v
    biased = fma32(v, _LOG2_RECIPROCAL, _ROUNDING)
    m = float32(biased - _ROUNDING)
    v = fma32(m, _LOG2_HI, v)
    v = fma32(m, _LOG2_LO, v)
    p = _EXP_POLYNOMIAL[0]
    for c in _EXP_POLYNOMIAL[1:] + [1.0]:
        p = fma32(p, v, c)
    return float32(p * (math.ldexp(1.0, int(m)) if m > -127 else 0.0))


def mlas_softmax(row):
    """onnxruntime's float Softmax of one row (a list of float32 values) on an x86-64 machine with FMA3: the
    maximum from float32's lowest value up, each e = mlas_sum_exp(x, -max) summed in eight lanes (element
    i into lane i % 8, in order), the lanes added pairwise as vhaddps twice does, then each e * (1 / sum)."""
    maximum = _FLOAT32_LOWEST
    for x in row:
        maximum = x if x > maximum else maximum
    e = [mlas_sum_exp(x, -maximum) for x in row]
    lanes = [0.0] * 8
    for i, value in enumerate(e):
        lanes[i % 8] = float32(lanes[i % 8] + value)
    pairs = [float32(lanes[k] + lanes[k + 1]) for k in range(0, 8, 2)]
    total = float32(float32(pairs[0] + pairs[1]) + float32(pairs[2] + pairs[3]))
    scale = float32(1.0 / total) if total != 0 else math.inf
    return [float32(value * scale) for value in e]
