"""Cross-origin use, opt-in (``--cors-origin``): the API and the model files get CORS for the listed
origins and CORP ``cross-origin``; everything else, and every server started without it, stays
same-origin."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient
from qnnweb_server import Settings, create_app
from qnnweb_server.api.deps import get_describer
from server_folders import FakeDescriber

ORIGIN = "https://app.example"


@pytest.fixture
def shared(folders: Settings) -> TestClient:
    app = create_app(folders.model_copy(update={"cors_origins": (ORIGIN,)}))
    app.dependency_overrides[get_describer] = FakeDescriber
    with TestClient(app) as c:
        yield c


@pytest.mark.parametrize("url", ["/api/models", "/models/good.tflite", "/api/models/good"])
def test_listed_origin_may_fetch_the_api_and_models(shared: TestClient, url: str) -> None:
    r = shared.get(url, headers={"Origin": ORIGIN})
    assert r.status_code == 200
    assert r.headers["access-control-allow-origin"] == ORIGIN
    assert "etag" in r.headers["access-control-expose-headers"].lower()
    assert r.headers["cross-origin-resource-policy"] == "cross-origin"
    assert r.headers["cross-origin-embedder-policy"] == "require-corp"


def test_preflight_for_a_conditional_download(shared: TestClient) -> None:
    r = shared.options("/models/good.tflite", headers={
        "Origin": ORIGIN, "Access-Control-Request-Method": "GET", "Access-Control-Request-Headers": "if-none-match"})
    assert r.status_code == 200 and r.headers["access-control-allow-origin"] == ORIGIN
    assert "GET" in r.headers["access-control-allow-methods"]


def test_other_origins_and_other_paths_get_no_cors(shared: TestClient) -> None:
    r = shared.get("/api/models", headers={"Origin": "https://evil.example"})
    assert "access-control-allow-origin" not in r.headers
    page = shared.get("/static/app.js", headers={"Origin": ORIGIN})
    assert "access-control-allow-origin" not in page.headers
    assert page.headers["cross-origin-resource-policy"] == "same-origin"


def test_without_the_option_nothing_is_shared(client: TestClient) -> None:
    r = client.get("/models/good.tflite", headers={"Origin": ORIGIN})
    assert "access-control-allow-origin" not in r.headers
    assert r.headers["cross-origin-resource-policy"] == "same-origin"


def test_origins_from_the_environment() -> None:
    s = Settings.from_env({"QNNWEB_CORS_ORIGINS": "https://a.example, https://b.example"})
    assert s.cors_origins == ("https://a.example", "https://b.example")
