"""microWakeWord's audio frontend without numpy (runs in Pyodide): ``MicroFrontend`` turns 16 kHz
16-bit mono audio into the 40-value log-mel frames (one per 10 ms) that pymicro-features computes, the
same values. web/qnnweb-audio.js is its JavaScript twin."""

from .frontend import FEATURE_SCALE, MicroFrontend
from .tables import FEATURES, SAMPLE_RATE, STEP_SAMPLES, WINDOW_SAMPLES

__all__ = ["MicroFrontend", "FEATURES", "FEATURE_SCALE", "SAMPLE_RATE", "STEP_SAMPLES", "WINDOW_SAMPLES"]
