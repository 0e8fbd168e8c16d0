"""The demo page in headless Chromium (Playwright, sync API) against a real qnnweb server.

The server runs uvicorn in a background thread on a free 127.0.0.1 port and serves the real
data dir (wheels, samples, Pyodide) with a temporary models folder: copies of the prepared
models plus ``corrupt.tflite`` (garbage bytes). Nothing is skipped: a missing browser, data
dir or Pyodide is a failure that says what to run.
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("QNNWEB_DATA_DIR", REPO / "data"))
PYODIDE_DIR = Path(os.environ.get("QNNWEB_PYODIDE_DIR", REPO / ".cache" / "pyodide"))
CHROMIUM = Path(os.environ.get("QNNWEB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
MODELS = ["visual_wake_words", "image_classification"]
PHOTOS = ["grace_hopper.jpg", "chelsea.png"]
CORRUPT = b"this is not a TFLite model, just garbage bytes\x00\xff" * 64


def _require(path: Path, what: str) -> Path:
    if not path.exists():
        pytest.fail(f"{what}: {path} is missing. {HOW_TO_FIX}", pytrace=False)
    return path


HOW_TO_FIX = "Run ./build.sh setup && ./build.sh build (or set QNNWEB_DATA_DIR / QNNWEB_PYODIDE_DIR / QNNWEB_CHROMIUM)."


@pytest.fixture(scope="session")
def demo_folders(tmp_path_factory) -> dict[str, Path]:
    """The real data dir, checked, and a temporary models folder with a corrupt model added."""
    _require(CHROMIUM, "Chromium (apt-get install chromium)")
    _require(PYODIDE_DIR / "pyodide.mjs", "Pyodide (npm pyodide@314.0.7 unpacked)")
    _require(PYODIDE_DIR / "pyodide.asm.wasm", "Pyodide")
    _require(DATA_DIR / "wheels" / "manifest.json", "the wheels manifest")
    for photo in PHOTOS:
        _require(DATA_DIR / "samples" / photo, "sample photo")
    models = tmp_path_factory.mktemp("models")
    for name in MODELS:
        for ext in (".tflite", ".json"):
            shutil.copy(_require(DATA_DIR / "models" / (name + ext), "demo model"), models / (name + ext))
    (models / "corrupt.tflite").write_bytes(CORRUPT)
    return {"data": DATA_DIR, "models": models, "pyodide": PYODIDE_DIR}


@pytest.fixture(scope="session")
def server_url(demo_folders) -> str:
    import uvicorn

    from qnnweb_server import Settings, create_app

    settings = Settings(
        data_dir=demo_folders["data"], models_dir=demo_folders["models"], pyodide_dir=demo_folders["pyodide"]
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="qnnweb-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the qnnweb test server did not start", pytrace=False)
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    _require(CHROMIUM, "Chromium (apt-get install chromium)")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


class DemoPage:
    """One loaded demo page (Pyodide started once) plus helpers to drive it."""

    LOAD_TIMEOUT_MS = 180_000
    RUN_TIMEOUT_MS = 120_000

    def __init__(self, page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.console_errors: list[str] = []
        self.foreign_requests: list[str] = []
        page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        page.on("pageerror", lambda e: self.console_errors.append(str(e)))
        page.on("request", self._check_origin)

    def _check_origin(self, request) -> None:
        url = request.url
        if not (url.startswith(self.base_url + "/") or url.startswith(("blob:", "data:"))):
            self.foreign_requests.append(url)

    def open(self, query: str = "") -> "DemoPage":
        self.page.goto(f"{self.base_url}/{query}")
        self.page.wait_for_function(
            "['ready', 'error'].includes(document.body.dataset.state)", timeout=self.LOAD_TIMEOUT_MS
        )
        state = self.state()
        if state != "ready":
            pytest.fail(f"the demo page did not start: {self.error_text()!r} (status {self.text('#status')!r})")
        return self

    def state(self) -> str:
        return self.page.evaluate("document.body.dataset.state")

    def text(self, selector: str) -> str:
        return self.page.inner_text(selector)

    def error_text(self) -> str:
        el = self.page.locator("#error")
        return el.inner_text() if el.is_visible() else ""

    def wait_idle(self) -> str:
        self.page.wait_for_function(
            "['done', 'error'].includes(document.body.dataset.state) && document.body.dataset.pending === '0'",
            timeout=self.RUN_TIMEOUT_MS,
        )
        return self.state()

    def run(self, model: str, photo: str | None = None) -> str:
        self.page.select_option("#model-select", model)
        if photo is not None:
            self.page.select_option("#photo-select", photo)
        self.page.click("#run")
        return self.wait_idle()

    def results(self) -> list[tuple[str, float]]:
        return [
            (label, float(score))
            for label, score in self.page.eval_on_selector_all(
                "#results li", "els => els.map(e => [e.dataset.label, e.dataset.score])"
            )
        ]

    def results_meta(self) -> dict[str, str]:
        return self.page.eval_on_selector("#results", "el => ({...el.dataset})")


@pytest.fixture(scope="session")
def open_demo(browser, server_url):
    """open_demo(query) -> a DemoPage, ready; pages are closed at the end of the session."""
    pages = []

    def open_(query: str = "") -> DemoPage:
        context = browser.new_context()
        demo = DemoPage(context.new_page(), server_url)
        pages.append(context)
        return demo.open(query)

    yield open_
    for context in pages:
        context.close()
