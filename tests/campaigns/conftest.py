"""The demo models the planner tests compare on (data/models, made by ./build.sh build)."""

import os
from pathlib import Path

import pytest

DATA_DIR = Path(os.environ.get("QNNWEB_DATA_DIR", Path(__file__).resolve().parents[2] / "data"))


@pytest.fixture(scope="session")
def model_path():
    def path(name):
        p = DATA_DIR / "models" / f"{name}.tflite"
        if not p.exists():
            pytest.fail(f"{p} is missing: run ./build.sh build")
        return p

    return path
