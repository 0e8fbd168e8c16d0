#!/usr/bin/env python3
"""Prepare the demo's wake-word models: the four trained microWakeWord streaming models that PyPI
``pymicro-wakeword==2.5.0`` (Apache-2.0) ships (``okay_nabu``, ``alexa``, ``hey_jarvis``, ``hey_mycroft``).

Each is copied from the installed package to ``<out>/<name>.tflite`` with a sidecar ``<out>/<name>.json``
(task ``wake-word``): the phrase as title, and the package's own detection settings from its config
(``<name>.json``'s ``micro``): ``probability_cutoff`` and ``sliding_window_size``, which the page decides
"detected" with as the package does (the mean of the last ``sliding_window_size`` probabilities above the
cutoff).

Files whose content is unchanged are not rewritten. Run by ``./build.sh build wakeword-models``; needs
pymicro-wakeword (the project's ``[models]`` extra).
"""
from __future__ import annotations

import hashlib
import json
import sys
from importlib import metadata
from pathlib import Path

import pymicro_wakeword

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)
from models.files import main_with_out, write_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PACKAGE_MODELS = Path(pymicro_wakeword.__file__).parent / "models"
NAMES = ["okay_nabu", "alexa", "hey_jarvis", "hey_mycroft"]


def log(msg: str) -> None:
    print(f"[prepare_wakeword_models] {msg}", flush=True)


def sidecar(config: dict, data: bytes, version: str) -> dict:
    """The page's sidecar from the package's config of one model."""
    micro = config["micro"]
    phrase = config["wake_word"]
    return {
        "title": f"Wake word: \u201c{phrase}\u201d (microWakeWord, int8, streaming)",
        "task": "wake-word",
        "description": f"microWakeWord streaming model by {config.get('author', 'its author')}, trained on "
                       f"\u201c{phrase}\u201d ({', '.join(config.get('trained_languages', []))}). It hears 40 "
                       "log-mel features per 10 ms, three frames per call, and keeps its state between calls.",
        "postprocess": {
            "phrase": phrase,
            "probability_cutoff": micro["probability_cutoff"],
            "sliding_window_size": micro["sliding_window_size"],
            "feature_step_ms": micro["feature_step_size"],
        },
        "source": f"PyPI pymicro-wakeword=={version} (Apache-2.0), its models/{config['model']}; "
                  f"microWakeWord by {config.get('author', 'its author')} ({config.get('website', '')})",
        "sha256": hashlib.sha256(data).hexdigest(),
    }


def prepare(out: Path, models: Path = PACKAGE_MODELS) -> None:
    out.mkdir(parents=True, exist_ok=True)
    version = metadata.version("pymicro-wakeword")
    for name in NAMES:
        config = json.loads((models / f"{name}.json").read_text(encoding="utf-8"))
        data = (models / config["model"]).read_bytes()
        if data[4:8] != b"TFL3":
            raise SystemExit(f"{config['model']}: not a TFLite flatbuffer (identifier {data[4:8]!r})")
        side = sidecar(config, data, version)
        changed = write_model(out, name, ".tflite", data, side)
        log(f"{name}.tflite ({len(data)} bytes, cutoff {side['postprocess']['probability_cutoff']}): "
            f"{'written' if changed else 'up to date'}")


def main(argv: list[str] | None = None) -> int:
    return main_with_out(__doc__, prepare, ROOT / "data" / "models", argv)


if __name__ == "__main__":
    raise SystemExit(main())
