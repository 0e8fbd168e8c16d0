"""Real speech for the audio tests: espeak-ng says a sentence, sox resamples it to 16 kHz 16-bit mono
(what microWakeWord's frontend and models take). ./build.sh setup installs both tools."""

import shutil
import subprocess
import tempfile
import wave
from pathlib import Path

import pytest

HOW_TO_FIX = "./build.sh setup installs it (apt-get install -y espeak-ng sox)"


def speech_pcm(args):
    """16 kHz 16-bit little-endian mono PCM bytes of espeak-ng run with ``args`` (options, then the text)."""
    for tool in ("espeak-ng", "sox"):
        if shutil.which(tool) is None:
            pytest.fail(f"{tool} is missing: {HOW_TO_FIX}", pytrace=False)
    with tempfile.TemporaryDirectory() as folder:
        spoken, resampled = Path(folder) / "spoken.wav", Path(folder) / "16k.wav"
        subprocess.run(["espeak-ng", "-w", str(spoken), *args], check=True, capture_output=True)
        # -D: no dither (sox's is random), so every run hears the same samples
        subprocess.run(["sox", "-D", str(spoken), "-r", "16000", "-c", "1", "-b", "16", str(resampled)],
                       check=True, capture_output=True)
        with wave.open(str(resampled)) as w:
            assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (16000, 1, 2)
            return w.readframes(w.getnframes())
