"""The demo page in headless Chromium (Playwright, sync API) against a real qnnweb server.

The server runs uvicorn in a background thread on a free 127.0.0.1 port and serves the real
data dir (wheels, samples, Pyodide) with a temporary models folder: copies of the prepared
models (the two TFLite demo models, EfficientNet-Lite0 int8, the page's default, and the face
detector, Face Mesh, the segmentation and the super-resolution models, the okay_nabu wake-word model)
plus ``corrupt.tflite`` (garbage bytes). Nothing is skipped: a missing browser, data dir or Pyodide
is a failure that says what to run.

One demo page per kernel variant (``variant_page``, session-scoped: the page, and the Pyodide of
its Python worker, start once per variant for every test module).
"""

from __future__ import annotations

import os
import shutil
import socket
import threading
import time
from pathlib import Path

import pytest
from browser_pages import DATA_DIR, PREFIX, REPO, DemoPage, open_page  # noqa: F401 (open_page: the tests' helper)

from bench.benchmark.common import CHROMIUM, CHROMIUM_ARGS  # the one Chromium launch setup, the bench's too

HERE = Path(__file__).resolve().parent
PYODIDE_DIR = Path(os.environ.get("QNNWEB_PYODIDE_DIR", REPO / ".cache" / "pyodide"))
VARIANTS = ["scalar", "simd128", "relaxed"]
MODELS = ["visual_wake_words.tflite", "image_classification.tflite", "efficientnet_lite0_u8s8.onnx",
          "face_detection_short_range.tflite", "face_landmark.tflite", "efficientnet_lite0_segmentation.onnx",
          "espcn_x2.onnx", "okay_nabu.tflite"]
PHOTOS = ["grace_hopper.jpg", "chelsea.png", "coffee.png", "astronaut.png"]
CORRUPT = b"this is not a TFLite model, just garbage bytes\x00\xff" * 64


def _require(path: Path, what: str) -> Path:
    if not path.exists():
        pytest.fail(f"{what}: {path} is missing. {HOW_TO_FIX}", pytrace=False)
    return path


HOW_TO_FIX = "Run ./build.sh setup && ./build.sh build (or set QNNWEB_DATA_DIR / QNNWEB_PYODIDE_DIR / QNNWEB_CHROMIUM)."


def pytest_collection_modifyitems(items):
    """Every test of this folder drives Chromium: marked `browser` (./build.sh test -m "not browser")."""
    for item in items:
        if HERE in item.path.parents:
            item.add_marker(pytest.mark.browser)


@pytest.fixture(scope="session")
def demo_folders(tmp_path_factory) -> dict[str, Path]:
    """The real data dir, checked, and a temporary models folder with a corrupt model added."""
    _require(CHROMIUM, "Chromium (apt-get install chromium)")
    _require(PYODIDE_DIR / "pyodide.mjs", "Pyodide (npm pyodide@314.0.7 unpacked)")
    _require(PYODIDE_DIR / "pyodide.asm.wasm", "Pyodide")
    _require(DATA_DIR / "wheels" / "manifest.json", "the wheels manifest")
    _require(DATA_DIR / "wheels" / "pyodide-lock.json", "the Pyodide lock file")
    for photo in PHOTOS:
        _require(DATA_DIR / "samples" / photo, "sample photo")
    models = tmp_path_factory.mktemp("models")
    for file in MODELS:
        for name in (file, Path(file).stem + ".json"):
            shutil.copy(_require(DATA_DIR / "models" / name, "demo model"), models / name)
    (models / "corrupt.tflite").write_bytes(CORRUPT)
    return {"data": DATA_DIR, "models": models, "pyodide": PYODIDE_DIR,
            "compiled": tmp_path_factory.mktemp("compiled")}


def _demo_settings(demo_folders):
    from qnnweb_server import Settings

    return Settings(
        data_dir=demo_folders["data"], models_dir=demo_folders["models"], pyodide_dir=demo_folders["pyodide"],
        wheels_dir=os.environ.get("QNNWEB_WHEELS_DIR") or None, compiled_dir=demo_folders["compiled"],
    )


def _serve(app, path: str = ""):
    """uvicorn serving ``app`` on a free loopback port in a thread; yields its URL (+ ``path``)."""
    import uvicorn

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning")
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, name="qnnweb-test-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            pytest.fail("the qnnweb test server did not start", pytrace=False)
        time.sleep(0.05)
    yield f"http://127.0.0.1:{port}{path}"
    server.should_exit = True
    thread.join(timeout=10)


@pytest.fixture(scope="session")
def server_url(demo_folders) -> str:
    from qnnweb_server import create_app

    yield from _serve(create_app(_demo_settings(demo_folders)))


@pytest.fixture(scope="session")
def prefixed_server_url(demo_folders) -> str:
    """The server as a reverse proxy serving it under PREFIX shows it (``--root-path``): mounted under
    PREFIX, the app gets the same ``root_path`` and the paths after it."""
    from qnnweb_server import create_app
    from starlette.applications import Starlette
    from starlette.routing import Mount

    yield from _serve(Starlette(routes=[Mount(PREFIX, app=create_app(_demo_settings(demo_folders)))]), PREFIX)


@pytest.fixture(scope="session")
def browser():
    from playwright.sync_api import sync_playwright

    _require(CHROMIUM, "Chromium (apt-get install chromium)")
    # With DEBUG=pw:browser, Playwright's driver passes Chromium's own stderr on to ours (pytest shows it
    # beside a failed test): the renderer's last words when a page dies ("Target crashed", seen in 2 CI
    # runs, 2026-12-05). Set only while the driver starts: the tests' other subprocesses keep our env.
    previous = os.environ.get("DEBUG")
    os.environ["DEBUG"] = "pw:browser"
    with sync_playwright() as p:
        if previous is None:
            del os.environ["DEBUG"]
        else:
            os.environ["DEBUG"] = previous
        browser = p.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()


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


@pytest.fixture(scope="module")
def blank_page(browser, server_url):
    """A same-origin page (the health check) to import qnnweb.js into: no Pyodide."""
    context, page, errors = open_page(browser, server_url)
    yield page
    context.close()
    assert not errors, errors


@pytest.fixture
def open_prefixed_demo(browser, prefixed_server_url):
    """open_prefixed_demo(query) -> a DemoPage of the server under PREFIX, ready."""
    context = browser.new_context()
    yield lambda query="": DemoPage(context.new_page(), prefixed_server_url).open(query)
    context.close()


@pytest.fixture(scope="session")
def page_for(open_demo):
    """page_for(variant) -> the session's DemoPage forced to that kernel variant (opened once)."""
    pages = {}

    def get(variant):
        if variant not in pages:
            pages[variant] = open_demo(f"?variant={variant}")
        return pages[variant]

    return get


@pytest.fixture(scope="session", params=VARIANTS)
def variant_page(request, page_for):
    """(variant, DemoPage forced to that kernel variant); one page per variant for the session."""
    return request.param, page_for(request.param)
