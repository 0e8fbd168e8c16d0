"""Real models and photos, as ./build.sh build prepares them in the data dir: fixtures for every test
folder (tests/conftest.py loads this module as a plugin)."""

import os
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

REPO = Path(__file__).resolve().parents[1]
DATA_DIR = Path(os.environ.get("QNNWEB_DATA_DIR", REPO / "data"))
PHOTOS = ["grace_hopper.jpg", "chelsea.png", "coffee.png", "astronaut.png", "rocket.jpg"]


def _require(path):
    if not path.exists():
        pytest.fail(f"{path} is missing: run ./build.sh build (it prepares models and sample photos)")
    return path


@pytest.fixture(scope="session")
def model_path():
    return lambda name: _require(DATA_DIR / "models" / f"{name}.tflite")


@pytest.fixture(scope="session")
def data_dir():
    return DATA_DIR


@pytest.fixture(scope="session")
def photos():
    return PHOTOS


@pytest.fixture(scope="session")
def photo():
    """photo(name, (height, width)) -> uint8 RGB array [1, H, W, 3], bilinear resize (as the demo)."""
    def load(name, size):
        image = Image.open(_require(DATA_DIR / "samples" / name)).convert("RGB")
        return np.asarray(image.resize((size[1], size[0]), Image.BILINEAR), dtype=np.uint8)[None]

    return load
