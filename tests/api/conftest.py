"""The ``qnnweb`` command and the built packages, run as a user runs them: in subprocesses."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("QNNWEB_DATA_DIR", REPO / "data"))


def require(path, how="run ./build.sh build"):
    if not path.exists():
        pytest.fail(f"{path} is missing: {how}")
    return path


@pytest.fixture(scope="session")
def models():
    return lambda name: require(DATA_DIR / "models" / name)


@pytest.fixture(scope="session")
def samples():
    return lambda name: require(DATA_DIR / "samples" / name)
