"""The ``qnnweb`` command and the built packages, run as a user runs them: in subprocesses."""

import pytest
from built_files import DATA_DIR, require


@pytest.fixture(scope="session")
def models():
    return lambda name: require(DATA_DIR / "models" / name)


@pytest.fixture(scope="session")
def samples():
    return lambda name: require(DATA_DIR / "samples" / name)
