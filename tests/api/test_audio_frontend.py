"""qnnweb.audio.MicroFrontend (pure Python, so it runs in Pyodide) against pymicro-features, the
compiled TFLite Micro microfrontend that pymicro-wakeword feeds microWakeWord models with: the same
feature values, exactly, on speech, silence and noise; streaming in any chunks; reset; its inputs."""

from __future__ import annotations

import ctypes
import ctypes.util
import random
import struct
from array import array

import numpy as np
import pytest
from api.audio_samples import reference_frames, sample_set
from pymicro_wakeword import MicroWakeWordFeatures

from qnnweb.audio import FEATURES, STEP_SAMPLES, WINDOW_SAMPLES, MicroFrontend
from qnnweb.audio.frontend import rounded_sqrt
from qnnweb.audio.tables import log1pf


@pytest.fixture(scope="module")
def samples():
    return sample_set()


@pytest.fixture(scope="module")
def okay_nabu(samples):
    return samples["okay_nabu"]


def test_frames_equal_pymicro_features(samples):
    for name, pcm in samples.items():
        want = reference_frames(pcm)
        got = MicroFrontend().process(pcm)
        assert len(got) == (len(pcm) - WINDOW_SAMPLES) // STEP_SAMPLES + 1 == len(want), name
        assert all(len(frame) == FEATURES for frame in got), name
        assert got == want, name
    assert any(v > 0 for frame in reference_frames(samples["okay_nabu"]) for v in frame)  # not all zeros


def test_same_frames_as_pymicro_wakeword_gives_its_models(okay_nabu):
    features = MicroWakeWordFeatures()
    pcm = array("h", okay_nabu).tobytes()
    want = [f.reshape(-1).tolist() for i in range(0, len(pcm), 1000)
            for f in features.process_streaming(pcm[i:i + 1000])]
    assert MicroFrontend().process(pcm) == want


def test_chunking_changes_nothing(okay_nabu):
    whole = MicroFrontend().process(okay_nabu)
    rng = random.Random(7)
    frontend, chunked, i = MicroFrontend(), [], 0
    while i < len(okay_nabu):
        n = rng.choice([0, 1, 7, 159, 160, 161, 479, 480, 481, 2000])
        chunked += frontend.process(okay_nabu[i:i + n])
        i += n
    assert chunked == whole
    assert MicroFrontend().process(okay_nabu[:WINDOW_SAMPLES - 1]) == []


def test_reset_starts_over(samples, okay_nabu):
    frontend = MicroFrontend()
    frontend.process(samples["full_scale_noise"][:1234])  # a window part-filled, a noise estimate built
    assert frontend.process(okay_nabu) != MicroFrontend().process(okay_nabu)
    frontend.process(samples["full_scale_noise"][:1234])
    frontend.reset()
    assert frontend.process(okay_nabu) == MicroFrontend().process(okay_nabu)


def test_every_form_of_16_bit_samples_gives_the_same_frames(okay_nabu):
    part = okay_nabu[:4000]
    pcm = struct.pack(f"<{len(part)}h", *part)
    want = MicroFrontend().process(part)
    for form in (pcm, bytearray(pcm), memoryview(pcm), array("h", part), tuple(part), np.array(part, np.int16)):
        assert MicroFrontend().process(form) == want, type(form).__name__


@pytest.mark.parametrize("bad, message", [
    (b"\x00\x01\x02", "even number of bytes"),
    (np.zeros(400, np.float32), "buffer of format 'f'"),
    ([0, 40000], r"ints in \[-32768, 32767\]"),
    ([0, 1.5], r"ints in \[-32768, 32767\]"),
    ("not audio", r"ints in \[-32768, 32767\]"),
])
def test_bad_samples_are_refused_by_name(bad, message):
    with pytest.raises(ValueError, match=message):
        MicroFrontend().process(bad)


def _filterbank_c_sqrt(num):
    """filterbank.c Sqrt64 / Sqrt32, line by line: the oracle for rounded_sqrt."""
    if num == 0:
        return 0
    bits = 32 if num >> 32 == 0 else 64
    res = 0
    max_bit_number = (bits - num.bit_length()) | 1
    bit = 1 << (bits - 1 - max_bit_number)
    for _ in range((bits - 1 - max_bit_number) // 2 + 1):
        if num >= res + bit:
            num -= res + bit
            res = (res >> 1) + bit
        else:
            res >>= 1
        bit >>= 2
    if num > res and res != (1 << (bits // 2)) - 1:
        res += 1
    return res


def test_rounded_sqrt_is_filterbank_c_sqrt():
    rng = random.Random(3)
    edges = [0, 1, 2, 3, 4, 0xFFFF * 0xFFFF + 0xFFFF, 0xFFFF * 0xFFFF + 0xFFFF + 1, 2**32 - 1, 2**32, 2**48,
             2**64 - 1]
    values = edges + [rng.getrandbits(rng.randint(1, 64)) for _ in range(20000)]
    assert [rounded_sqrt(v) for v in values] == [_filterbank_c_sqrt(v) for v in values]


def test_log1pf_is_the_c_librarys():
    """The filterbank's mel scale uses log1pf, which pymicro-features takes from the C library at run
    time; the port must give its bits (if this fails, this platform's libm has another log1pf, and
    pymicro-features' filterbank weights differ from TFLite Micro's usual ones)."""
    libm = ctypes.CDLL(ctypes.util.find_library("m"))
    libm.log1pf.restype, libm.log1pf.argtypes = ctypes.c_float, [ctypes.c_float]
    rng = random.Random(11)
    values = [struct.unpack("<f", struct.pack("<f", rng.uniform(0, 16)))[0] for _ in range(50000)]
    values += [0.0, 1e-30, 2.0**-30, 1.0, 3.0, 7.0, 0.41421, 0.41423]
    values = [struct.unpack("<f", struct.pack("<f", v))[0] for v in values]
    assert [log1pf(v) for v in values] == [libm.log1pf(v) for v in values]
