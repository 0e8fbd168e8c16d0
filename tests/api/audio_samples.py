"""Audio for the frontend tests (CPython's qnnweb.audio, the browser's qnnweb-audio.js) and the
reference frames pymicro-features gives for it. Speech is espeak-ng's, resampled by sox to 16 kHz
16-bit mono; the rest is made here: silence, noise from faint to full scale, a full-scale square wave,
a chirp, two tones, speech under noise, whispered and clipped speech. Each is 16-bit samples in a list.
The tones sit on the two FFT bins whose filterbank weights follow the last bit of the C library's log1pf
(qnnweb.audio.tables): a frontend with a correctly rounded log1p gets a few of their values wrong."""

from __future__ import annotations

import math
import random
from array import array

from pymicro_features import MicroFrontend as ReferenceFrontend
from qnnweb_dev.speech import speech_pcm

SPEECH = {
    "okay_nabu": ["okay nabu"],
    "hey_jarvis_fast": ["-s", "230", "-p", "70", "hey jarvis, turn on the kitchen lights"],
    "weather_us_voice": ["-v", "en-us", "alexa, what will the weather be like tomorrow morning?"],
    "pangram_slow_low": ["-s", "120", "-p", "20", "the quick brown fox jumps over the lazy dog"],
}


def speech(args: list[str]) -> list[int]:
    """espeak-ng saying ``args`` (options, then the text), as 16 kHz 16-bit samples."""
    return array("h", speech_pcm(args)).tolist()


def clip(values) -> list[int]:
    return [max(-32768, min(32767, round(v))) for v in values]


def sample_set() -> dict[str, list[int]]:
    """name -> samples: the four utterances, then made-up audio (seeded, so the same every run)."""
    rng = random.Random(20261207)
    samples = {name: speech(args) for name, args in SPEECH.items()}
    words = samples["okay_nabu"]
    second = 16000
    samples.update({
        "silence": [0] * second,
        "faint_noise": clip(rng.gauss(0, 3) for _ in range(second)),
        "full_scale_noise": [rng.randint(-32768, 32767) for _ in range(second)],
        "full_scale_square": [32767 if (i // 20) % 2 else -32768 for i in range(second)],
        "chirp": clip(20000 * math.sin(2 * math.pi * (50 + 7900 * i / (2 * second)) * i / second)
                      for i in range(second)),
        "tone_4665_hz": clip(30000 * math.sin(2 * math.pi * 4665 * i / second) for i in range(second // 2)),
        "tone_6906_hz": clip(20000 * math.sin(2 * math.pi * 6906.25 * i / second) for i in range(second // 2)),
        "speech_in_noise": clip(s + rng.gauss(0, 2000) for s in [0] * 4000 + words),
        "whispered_speech": clip(s / 64 for s in words),
        "clipped_speech": clip(s * 8 for s in words),
    })
    # every utterance in a row, half a second of faint noise before each: the noise estimate and PCAN adapt
    conversation = []
    for name in SPEECH:
        conversation += clip(rng.gauss(0, 20) for _ in range(second // 2)) + samples[name]
    samples["conversation"] = conversation
    return samples


def reference_frames(samples: list[int]) -> list[list[float]]:
    """pymicro-features' frames, fed as pymicro-wakeword's MicroWakeWordFeatures feeds it: 10 ms
    (160-sample) chunks, each call consuming what it reports as read."""
    frontend = ReferenceFrontend()
    pcm = array("h", samples).tobytes()
    frames, offset = [], 0
    while offset + 320 <= len(pcm):
        result = frontend.process_samples(pcm[offset:offset + 320])
        offset += 2 * result.samples_read
        if result.features:
            frames.append(result.features)
    return frames
