"""What the browser tests import (a module of its own: ``from conftest import`` would pick whichever
``conftest`` module pytest imported last, e.g. tests/server's)."""

from __future__ import annotations

import os
import re
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from bench.benchmark.common import CHROMIUM, CHROMIUM_ARGS  # (tools/ is on sys.path: tests/conftest.py)

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("QNNWEB_DATA_DIR", REPO / "data"))
PREFIX = "/hosted/qnnweb"  # the path prefix of prefixed_server_url (a reverse proxy's, --root-path)


def open_page(browser, server_url: str, isolated: bool = True):
    """A same-origin page without Pyodide (the health check) to import qnnweb.js into; without
    COOP/COEP when not `isolated`. Returns (context, page, page errors)."""
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    if not isolated:
        def strip(route):
            response = route.fetch()
            headers = {k: v for k, v in response.headers.items() if not k.lower().startswith("cross-origin-")}
            route.fulfill(response=response, headers=headers)

        page.route("**/api/utils/health-check", strip)
    page.goto(f"{server_url}/api/utils/health-check")
    assert page.evaluate("crossOriginIsolated") is isolated
    return context, page, errors


def evaluate_in_fresh_page(browser, server_url: str, script: str, *routes, arg=None):
    """``script`` evaluated (with ``arg``) in a new same-origin page (a new browser context: empty
    caches), with ``routes`` (``page.route`` arguments) in place. Returns (its result, console
    warnings, page errors)."""
    context, page, errors = open_page(browser, server_url)
    warnings: list[str] = []
    page.on("console", lambda m: m.type == "warning" and warnings.append(m.text))
    for route in routes:
        page.route(*route)
    try:
        return page.evaluate(script, arg), warnings, errors
    finally:
        context.close()


def pillow_input(path, pre: dict) -> bytes:
    """The model's metadata, with Pillow: shorter side to pre['resize'] (Image.BILINEAR, which is
    antialiased when shrinking; long side int(resize * long / short)), centre crop pre['crop'] at
    round((size - crop) / 2). H*W*3 RGB bytes."""
    image = Image.open(path).convert("RGB")
    w, h = image.size
    r, crop = pre["resize"], pre["crop"]
    size = (r, int(r * h / w)) if w <= h else (int(r * w / h), r)
    image = image.resize(size, Image.BILINEAR)
    left, top = round((size[0] - crop) / 2), round((size[1] - crop) / 2)
    return np.asarray(image.crop((left, top, left + crop, top + crop)), dtype=np.uint8).tobytes()


def relative_luminance(css_colour: str) -> float:
    """WCAG 2's relative luminance of a computed colour ("rgb(r, g, b)")."""
    r, g, b = (int(c) / 255 for c in re.findall(r"\d+", css_colour)[:3])
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast_ratio(foreground: str, background: str) -> float:
    """WCAG 2's contrast ratio of two computed colours."""
    hi, lo = sorted((relative_luminance(foreground), relative_luminance(background)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


class DemoPage:
    """One loaded demo page (Pyodide started once) plus helpers to drive it."""

    LOAD_TIMEOUT_MS = 180_000
    RUN_TIMEOUT_MS = 120_000

    def __init__(self, page, base_url: str) -> None:
        self.page = page
        self.base_url = base_url
        self.console_errors: list[str] = []
        self.foreign_requests: list[str] = []
        self.requests: list[str] = []  # every URL the page and its workers asked for
        page.on("console", lambda m: m.type == "error" and self.console_errors.append(m.text))
        page.on("pageerror", lambda e: self.console_errors.append(str(e)))
        page.on("request", self._check_origin)

    def _check_origin(self, request) -> None:
        url = request.url
        self.requests.append(url)
        if not (url.startswith(self.base_url + "/") or url.startswith(("blob:", "data:"))):
            self.foreign_requests.append(url)

    def open(self, query: str = "") -> "DemoPage":
        """Open the page and wait until Pyodide is up and the first (automatic) run is over."""
        self.page.goto(f"{self.base_url}/{query}")
        self.page.wait_for_function(
            "document.body.dataset.started === '1' || document.body.dataset.state === 'error'",
            timeout=self.LOAD_TIMEOUT_MS,
        )
        if self.page.evaluate("document.body.dataset.started") != "1":
            pytest.fail(f"the demo page did not start: {self.error_text()!r} (status {self.text('#status')!r})")
        if self.wait_idle() not in ("done", "ready"):
            pytest.fail(f"the demo page's first run failed: {self.error_text()!r}")
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
            "['done', 'error', 'ready'].includes(document.body.dataset.state) && document.body.dataset.pending === '0'",
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

    def top(self) -> list[tuple[int, float]]:
        """The shown top-k as (class index, score), scores exactly as the page computed them."""
        return [
            (int(i), float(s))
            for i, s in self.page.eval_on_selector_all(
                "#results li", "els => els.map(e => [e.dataset.index, e.dataset.score])"
            )
        ]

    def run_python(self, source: str, globals_: dict | None = None) -> str:
        """Run ``source`` with runPythonAsync in the page's Python worker (fresh globals); its stdout."""
        return self.page.evaluate(
            "([source, globals]) => window.qnnwebDemo.runPython(source, globals)", [source, globals_ or {}])


@contextmanager
def camera_demo(browser, server_url: str, query: str):
    """A DemoPage (opened with ``query``) in a Chromium of its own whose fake camera (a launch flag) plays
    a moving test pattern; closed on exit."""
    camera_browser = browser.browser_type.launch(
        executable_path=str(CHROMIUM), headless=True,
        args=CHROMIUM_ARGS + ["--use-fake-device-for-media-stream", "--use-fake-ui-for-media-stream"])
    try:
        context = camera_browser.new_context(permissions=["camera"])
        yield DemoPage(context.new_page(), server_url).open(query)
    finally:
        camera_browser.close()
