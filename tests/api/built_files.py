"""Where the files ./build.sh build leaves are (the repository's data/, dist/, .cache/)."""

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("QNNWEB_DATA_DIR", REPO / "data"))


def require(path, how="run ./build.sh build"):
    if not path.exists():
        pytest.fail(f"{path} is missing: {how}")
    return path
