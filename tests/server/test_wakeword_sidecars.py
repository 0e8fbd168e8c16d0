"""The wake-word models' sidecars (``./build.sh build wakeword-models``, tools/models/prepare_wakeword_models.py):
the server accepts them and lists the models with task ``wake-word``, the package's cutoff and sliding window."""

from __future__ import annotations

import json

from fastapi.testclient import TestClient
from models import prepare_wakeword_models
from qnnweb_server import Settings, create_app
from qnnweb_server.core.sidecars import problem
from server_folders import make_folders

PACKAGE_MODELS = prepare_wakeword_models.PACKAGE_MODELS


def test_the_tool_writes_the_packages_settings_and_keeps_unchanged_files(tmp_path) -> None:
    prepare_wakeword_models.prepare(tmp_path)
    names = prepare_wakeword_models.NAMES
    assert sorted(p.name for p in tmp_path.glob("*.tflite")) == sorted(f"{n}.tflite" for n in names)
    for name in names:
        raw = (tmp_path / f"{name}.json").read_bytes()
        assert problem(raw) is None
        side, config = json.loads(raw), json.loads((PACKAGE_MODELS / f"{name}.json").read_text())
        assert side["task"] == "wake-word" and config["wake_word"] in side["title"]
        assert side["postprocess"]["probability_cutoff"] == config["micro"]["probability_cutoff"]
        assert side["postprocess"]["sliding_window_size"] == config["micro"]["sliding_window_size"]
        assert "PyPI pymicro-wakeword==2.5.0 (Apache-2.0)" in side["source"]
        assert (tmp_path / f"{name}.tflite").read_bytes() == (PACKAGE_MODELS / f"{name}.tflite").read_bytes()
    mtimes = {p: p.stat().st_mtime_ns for p in tmp_path.iterdir()}
    prepare_wakeword_models.prepare(tmp_path)
    assert {p: p.stat().st_mtime_ns for p in tmp_path.iterdir()} == mtimes


def test_the_server_lists_a_wake_word_model(tmp_path) -> None:
    settings: Settings = make_folders(tmp_path)
    prepare_wakeword_models.prepare(settings.models_dir)
    with TestClient(create_app(settings)) as client:
        models = {m["name"]: m for m in client.get("/api/models").json()["models"]}
    okay = models["okay_nabu"]
    assert okay["error"] is None and okay["task"] == "wake-word"
    assert okay["postprocess"]["probability_cutoff"] == 0.85 and okay["postprocess"]["sliding_window_size"] == 5
    assert okay["inputs"][0]["shape"] == [1, 3, 40] and okay["outputs"][0]["dtype"] == "uint8"
