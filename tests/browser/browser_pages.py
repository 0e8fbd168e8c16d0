"""What the browser tests import (a module of its own: ``from conftest import`` would pick whichever
``conftest`` module pytest imported last, e.g. tests/server's)."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
from PIL import Image

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
