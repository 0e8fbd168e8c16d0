"""A microWakeWord model's calls as pymicro-wakeword makes them, for the wake-word tests (the models' own,
tests/tflite/test_streaming_wakeword.py, and the demo page's, tests/browser/test_demo_wakeword.py)."""

import numpy as np
from pymicro_wakeword import MicroWakeWordFeatures

from qnnweb_dev.speech import speech_pcm

STRIDE = 3  # feature frames per call: the models' input is [1, 3, 40]


def say(text):
    """16 kHz 16-bit mono PCM of espeak-ng saying ``text``."""
    return speech_pcm(["-v", "en", "-s", "150", text])


def model_calls(audio, input_scale, input_zero_point):
    """The int8 inputs of the calls a stream of audio (16 kHz 16-bit mono PCM bytes) makes, as
    ``MicroWakeWord.process_streaming_prob`` makes them: the package's frontend's 40-value frames,
    quantized in groups of 3."""
    frames = list(MicroWakeWordFeatures().process_streaming(audio))
    return [np.round(np.concatenate(frames[k:k + STRIDE], axis=1) / input_scale + input_zero_point).astype(np.int8)
            for k in range(0, len(frames) - STRIDE + 1, STRIDE)]
