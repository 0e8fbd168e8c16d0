"""A 404 is a small HTML page for a browser (what was not found, a link to the demo) and FastAPI's JSON
for API clients; both keep the status and the cross-origin isolation headers."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from qnnweb_server import create_app
from qnnweb_server.middleware import ISOLATION_HEADERS
from qnnweb_server.not_found import media_quality

BROWSER_ACCEPT = "text/html,application/xhtml+xml,application/xml;q=0.9,image/avif,image/webp,*/*;q=0.8"


def assert_isolated(response) -> None:
    for name, value in ISOLATION_HEADERS.items():
        assert response.headers[name] == value, name


@pytest.mark.parametrize("path", ["/no-such-page", "/static/no-such-file.js", "/samples/missing.png"])
def test_a_browser_gets_a_page_naming_what_was_not_found_with_a_link_home(client, path) -> None:
    response = client.get(path, headers={"Accept": BROWSER_ACCEPT})
    assert response.status_code == 404
    assert response.headers["content-type"].startswith("text/html")
    assert_isolated(response)
    page = response.text
    assert "<title>Not found" in page and f"<code>{path}</code>" in page and '<a href="/">' in page


def test_the_page_escapes_the_path(client) -> None:
    response = client.get("/%3Cscript%3Ealert(1)%3C/script%3E", headers={"Accept": "text/html"})
    assert response.status_code == 404
    assert "<script>" not in response.text and "&lt;script&gt;" in response.text


@pytest.mark.parametrize(("path", "accept"), [
    ("/no-such-page", None),                    # httpx's */*: an API client
    ("/no-such-page", "application/json"),
    ("/no-such-page", "*/*"),
    ("/api/no-such-route", BROWSER_ACCEPT),     # the API is JSON whoever asks
    ("/api/models/no_such_model", BROWSER_ACCEPT),
])
def test_api_clients_and_the_api_keep_json(client, path, accept) -> None:
    response = client.get(path, headers={"Accept": accept} if accept else {})
    assert response.status_code == 404
    assert response.headers["content-type"] == "application/json"
    assert_isolated(response)
    assert "detail" in response.json()


def test_other_errors_keep_json(client) -> None:
    response = client.post("/", headers={"Accept": BROWSER_ACCEPT})
    assert response.status_code == 405
    assert response.headers["content-type"] == "application/json"


@pytest.mark.parametrize(("accept", "html", "json"), [
    (BROWSER_ACCEPT, 1.0, 0.8),
    ("*/*", 1.0, 1.0),
    ("", 0.0, 0.0),
    ("application/json, text/*;q=0.5", 0.5, 1.0),
    ("text/html;q=0.2, text/*;q=0.9, application/json;q=bad", 0.2, 0.0),
])
def test_media_quality_takes_the_most_specific_range(accept, html, json) -> None:
    assert media_quality(accept, "text/html") == html
    assert media_quality(accept, "application/json") == json


def test_behind_a_root_path_the_link_goes_to_the_demo_and_the_api_stays_json(folders) -> None:
    with TestClient(create_app(folders), root_path="/hosted/qnnweb") as client:
        page = client.get("/hosted/qnnweb/samples/missing.png", headers={"Accept": BROWSER_ACCEPT})
        api = client.get("/hosted/qnnweb/api/no-such-route", headers={"Accept": BROWSER_ACCEPT})
    assert page.status_code == 404 and '<a href="/hosted/qnnweb/">' in page.text, page.text
    assert api.status_code == 404 and api.headers["content-type"] == "application/json"
