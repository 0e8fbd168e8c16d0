"""Fixtures of the server tests (see server_folders.py)."""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

with warnings.catch_warnings():  # starlette's "install httpx2" notice
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from qnnweb_server import Settings, create_app
from qnnweb_server.api.deps import get_describer
from server_folders import FakeDescriber, make_folders


@pytest.fixture
def folders(tmp_path: Path) -> Settings:
    return make_folders(tmp_path)


@pytest.fixture
def describer() -> FakeDescriber:
    return FakeDescriber()


@pytest.fixture
def app(folders: Settings, describer: FakeDescriber):
    app = create_app(folders)
    app.dependency_overrides[get_describer] = lambda: describer
    return app


@pytest.fixture
def client(app) -> TestClient:
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c
