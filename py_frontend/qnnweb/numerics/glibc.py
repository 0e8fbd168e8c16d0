"""glibc's float functions that LiteRT's builtin kernels call through the system's libm, as glibc up to 2.40
computes them (sysdeps/ieee754/flt-32: erfcf, expm1f and tanhf are Sun's fdlibm converted to float, every
operation in float32; expf is ARM's, in double). They are not correctly rounded, and TFLite's int8 tables
follow their last bit: GELU's erfcf or tanhf, EXP's and SOFTMAX's expf.

Pure Python: it runs in Pyodide, where there is no numpy."""

import math
import struct

from .float32 import float32, float32_bits as _bits, float32_from_bits as _from_bits


# expf's data (e_exp2f_data.c): 2^(i/32) as double bits minus i << 47, and its scaled constants
_EXP_TABLE = [0x3ff0000000000000, 0x3fefd9b0d3158574, 0x3fefb5586cf9890f, 0x3fef9301d0125b51,
              0x3fef72b83c7d517b, 0x3fef54873168b9aa, 0x3fef387a6e756238, 0x3fef1e9df51fdee1,
              0x3fef06fe0a31b715, 0x3feef1a7373aa9cb, 0x3feedea64c123422, 0x3feece086061892d,
              0x3feebfdad5362a27, 0x3feeb42b569d4f82, 0x3feeab07dd485429, 0x3feea47eb03a5585,
              0x3feea09e667f3bcd, 0x3fee9f75e8ec5f74, 0x3feea11473eb0187, 0x3feea589994cce13,
              0x3feeace5422aa0db, 0x3feeb737b0cdc5e5, 0x3feec49182a3f090, 0x3feed503b23e255d,
              0x3feee89f995ad3ad, 0x3feeff76f2fb5e47, 0x3fef199bdd85529c, 0x3fef3720dcef9069,
              0x3fef5818dcfba487, 0x3fef7c97337b9b5f, 0x3fefa4afa2a490da, 0x3fefd0765b6e4540]
_EXP_SHIFT = float.fromhex("0x1.8p+52")
_EXP_INV_LN2 = float.fromhex("0x1.71547652b82fep+0") * 32
_EXP_POLY = [float.fromhex("0x1.c6af84b912394p-5") / 32 ** 3, float.fromhex("0x1.ebfce50fac4f3p-3") / 32 ** 2,
             float.fromhex("0x1.62e42ff0c52d6p-1") / 32]
_EXP_OVERFLOW, _EXP_UNDERFLOW = float.fromhex("0x1.62e42ep6"), float.fromhex("-0x1.9fe368p6")
_D = struct.Struct("<d")
_Q = struct.Struct("<Q")


def expf(x):
    """glibc's expf (e_expf.c, from ARM's optimized routines; not correctly rounded): x * 32 / ln 2 = k + r,
    2^(k/32) from the table times a cubic in r, in double, rounded once to float32. Its x86-64 FMA build
    fuses the cubic's steps; both forms gave libm's every result on 200,000 random inputs of [-80, 80]."""
    if x > _EXP_OVERFLOW:
        return math.inf
    if x < _EXP_UNDERFLOW:
        return 0.0
    if x != x:
        return x
    z = _EXP_INV_LN2 * x
    kd = z + _EXP_SHIFT
    ki = _Q.unpack(_D.pack(kd))[0]
    kd -= _EXP_SHIFT
    r = z - kd
    s = _D.unpack(_Q.pack((_EXP_TABLE[ki % 32] + (ki << 47)) & 0xFFFFFFFFFFFFFFFF))[0]
    c0, c1, c2 = _EXP_POLY
    y = (c0 * r + c1) * (r * r) + (c2 * r + 1.0)
    return float32(y * s)


def _poly(s, coefficients):
    """c0 + s * (c1 + s * (... + s * cn)), every step in float32, from the innermost term out."""
    acc = coefficients[-1]
    for c in reversed(coefficients[:-1]):
        acc = float32(c + float32(s * acc))
    return acc


def _floats(*words):
    return [_from_bits(w) for w in words]


# s_erff.c's coefficients (its float constants' bit patterns), lowest degree first; each S / Q starts with 1
_ERX = _from_bits(0x3f58560b)                       # erf(1) rounded to float's upper bits
_PP = _floats(0x3e0375d4, 0xbea66beb, 0xbce9528f, 0xbbbd1489, 0xb7c756b1)              # erf on [0, 0.84375]
_QQ = [1.0] + _floats(0x3ecbbbce, 0x3d852a63, 0x3ba68116, 0x390aee49, 0xb684e21a)
_PA = _floats(0xbb1acdc6, 0x3ed46805, 0xbebe9208, 0x3ea2fe54, 0xbde31cc2, 0x3d1151b3, 0xbb0df9c0)   # [0.84375, 1.25]
_QA = [1.0] + _floats(0x3dd9f331, 0x3f0a5785, 0x3d931ae7, 0x3e013307, 0x3c5f6e13, 0x3c445aa3)
_RA = _floats(0xbc21a093, 0xbf31a0b7, 0xc128f022, 0xc2798057, 0xc322658c, 0xc3389ae7, 0xc2a2932b,
              0xc11d077e)                                                               # erfc on [1.25, 1 / 0.35]
_SA = [1.0] + _floats(0x419d35ce, 0x4309a863, 0x43d9486f, 0x442158c9, 0x43d6810b, 0x42d9451f, 0x40d23f7c,
                      0xbd777f97)
_RB = _floats(0xbc21a092, 0xbf4c9dd4, 0xc18e104b, 0xc320a2ea, 0xc41f6441, 0xc480230b, 0xc3f1c275)  # [1 / 0.35, 28]
_SB = [1.0] + _floats(0x41f2b459, 0x43a2e571, 0x44c01759, 0x4547fdbb, 0x451f90ce, 0x43ed43a7, 0xc1b38712)
_TINY = float32(1e-30)


def erfcf(x):
    """glibc's erfcf (s_erff.c's __erfcf) of a float32 ``x``."""
    hx = _bits(x)
    ix = hx & 0x7fffffff
    negative = hx >= 0x80000000
    if ix >= 0x7f800000:
        return (2.0 if negative else 0.0) if math.isinf(x) else x
    if ix < 0x3f580000:                          # |x| < 0.84375
        if ix < 0x23800000:                      # |x| < 2^-56
            return float32(1.0 - x)
        z = float32(x * x)
        y = float32(_poly(z, _PP) / _poly(z, _QQ))
        if negative or hx < 0x3e800000:          # x < 1/4 (glibc compares the signed word)
            return float32(1.0 - float32(x + float32(x * y)))
        r = float32(float32(x * y) + float32(x - 0.5))
        return float32(0.5 - r)
    if ix < 0x3fa00000:                          # 0.84375 <= |x| < 1.25
        s = float32(abs(x) - 1.0)
        ratio = float32(_poly(s, _PA) / _poly(s, _QA))
        if not negative:
            return float32(float32(1.0 - _ERX) - ratio)
        return float32(1.0 + float32(_ERX + ratio))
    if ix >= 0x41e00000:                         # |x| >= 28
        return float32(2.0 - _TINY) if negative else 0.0
    x = abs(x)
    s = float32(1.0 / float32(x * x))
    if ix < 0x4036db6d:                          # |x| < 1 / 0.35
        big_r, big_s = _poly(s, _RA), _poly(s, _SA)
    else:
        if negative and ix >= 0x40c00000:        # x < -6
            return float32(2.0 - _TINY)
        big_r, big_s = _poly(s, _RB), _poly(s, _SB)
    z = _from_bits(_bits(x) & 0xffffe000)
    r = float32(expf(float32(float32(-z * z) - 0.5625)) *
                expf(float32(float32(float32(z - x) * float32(z + x)) + float32(big_r / big_s))))
    quotient = float32(r / x)
    return quotient if not negative else float32(2.0 - quotient)


# s_expm1f.c's constants (bit patterns)
_EXPM1_OVERFLOW = _from_bits(0x42b17180)
_LN2_HI, _LN2_LO, _INV_LN2 = _floats(0x3f317180, 0x3717f7d1, 0x3fb8aa3b)
_EXPM1_Q = [1.0] + _floats(0xbd088889, 0x3ad00d01, 0xb8a670cd, 0x36867e54, 0xb457edbb)


def _scale_by_power_of_2(y, k):
    """y with k added to its exponent field (SET_FLOAT_WORD(y, i + (k << 23)))."""
    return _from_bits((_bits(y) + (k << 23)) & 0xffffffff)


def expm1f(x):
    """glibc's expm1f (s_expm1f.c) of a float32 ``x``."""
    hx = _bits(x)
    negative = hx >= 0x80000000
    hx &= 0x7fffffff
    if hx >= 0x4195b844:                         # |x| >= 27 ln 2
        if hx >= 0x42b17218:
            if hx > 0x7f800000:
                return x
            if hx == 0x7f800000:
                return -1.0 if negative else x
            if x > _EXPM1_OVERFLOW:
                return math.inf
        if negative:
            return -1.0
    c = 0.0
    if hx > 0x3eb17218:                          # |x| > ln 2 / 2: x = k ln 2 + hi - lo
        if hx < 0x3f851592:                      # and < 3 ln 2 / 2
            k = -1 if negative else 1
            hi = float32(x + _LN2_HI) if negative else float32(x - _LN2_HI)
            lo = -_LN2_LO if negative else _LN2_LO
        else:
            k = int(float32(float32(_INV_LN2 * x) + (-0.5 if negative else 0.5)))   # C's truncation
            hi = float32(x - float32(k * _LN2_HI))
            lo = float32(k * _LN2_LO)
        x = float32(hi - lo)
        c = float32(float32(hi - x) - lo)
    elif hx < 0x33000000:                        # |x| < 2^-25
        return x
    else:
        k = 0
    hfx = float32(0.5 * x)
    hxs = float32(x * hfx)
    r1 = _poly(hxs, _EXPM1_Q)
    t = float32(3.0 - float32(r1 * hfx))
    e = float32(hxs * float32(float32(r1 - t) / float32(6.0 - float32(x * t))))
    if k == 0:
        return float32(x - float32(float32(x * e) - hxs))
    e = float32(float32(x * float32(e - c)) - c)
    e = float32(e - hxs)
    if k == -1:
        return float32(float32(0.5 * float32(x - e)) - 0.5)
    if k == 1:
        if x < -0.25:
            return float32(-2.0 * float32(e - float32(x + 0.5)))
        return float32(1.0 + float32(2.0 * float32(x - e)))
    if k <= -2 or k > 56:
        y = _scale_by_power_of_2(float32(1.0 - float32(e - x)), k)
        return float32(y - 1.0)
    if k < 23:
        t = _from_bits(0x3f800000 - (0x1000000 >> k))        # 1 - 2^-k
        return _scale_by_power_of_2(float32(t - float32(e - x)), k)
    t = _from_bits((0x7f - k) << 23)                          # 2^-k
    return _scale_by_power_of_2(float32(float32(x - float32(e + t)) + 1.0), k)


def tanhf(x):
    """glibc's tanhf (s_tanhf.c) of a float32 ``x``."""
    jx = _bits(x)
    ix = jx & 0x7fffffff
    negative = jx >= 0x80000000
    if ix >= 0x7f800000:
        return x if x != x else (-1.0 if negative else 1.0)
    if ix < 0x41b00000:                          # |x| < 22
        if ix == 0:
            return x
        if ix < 0x24000000:                      # |x| < 2^-55
            return float32(x * float32(1.0 + x))
        if ix >= 0x3f800000:                     # |x| >= 1
            t = expm1f(float32(2.0 * abs(x)))
            z = float32(1.0 - float32(2.0 / float32(t + 2.0)))
        else:
            t = expm1f(float32(-2.0 * abs(x)))
            z = float32(-t / float32(t + 2.0))
    else:
        z = float32(1.0 - _TINY)
    return -z if negative else z
