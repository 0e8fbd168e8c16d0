"""The super-resolution model's result as before / after: its input scaled to the output's size (Pillow's
bilinear) under the model's output, a slider moving the line between them."""

from __future__ import annotations

import numpy as np
import pytest
from browser_pages import DemoPage
from PIL import Image


@pytest.fixture(scope="module")
def demo(browser, server_url):
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    yield DemoPage(context.new_page(), server_url).open("?model=espcn_x2&photo=chelsea.png")
    context.close()


def canvas_rgb(page, selector: str) -> np.ndarray:
    width, height, data = page.eval_on_selector(selector, """c => {
        const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
        return [c.width, c.height, Array.from(d)];
    }""")
    return np.array(data, dtype=np.uint8).reshape(height, width, 4)[..., :3]


def shown_at(page, fraction: float) -> str:
    """The id of the canvas a point at ``fraction`` of the image's width (half its height) hits."""
    return page.eval_on_selector("#compare", """(box, f) => {
        const r = box.getBoundingClientRect();
        return document.elementFromPoint(r.left + f * r.width, r.top + r.height / 2).id;
    }""", fraction)


def test_super_resolution_shows_its_input_scaled_before_its_output(demo) -> None:
    page = demo.page
    assert demo.state() == "done", demo.error_text()
    assert page.is_visible("#before-canvas") and page.is_visible("#result-canvas")
    model_input = np.frombuffer(bytes(page.evaluate("Array.from(window.qnnwebDemo.lastInput)")), np.uint8)
    before, after = canvas_rgb(page, "#before-canvas"), canvas_rgb(page, "#result-canvas")
    assert before.shape == after.shape == (256, 256, 3)
    bilinear = np.asarray(Image.frombytes("RGB", (128, 128), model_input.tobytes()).resize((256, 256), Image.BILINEAR))
    assert np.abs(before.astype(int) - bilinear).max() <= 1
    assert np.abs(before.astype(int) - after).mean() > 1  # the model changed the picture
    assert page.get_attribute("#before-canvas", "aria-label") == "the model's input, 128×128 pixels, scaled to 256×256"
    assert "128×128" in demo.text("#result-image figcaption") and "256×256" in demo.text("#result-image figcaption")
    # both canvases lie in the same box, the slider as wide
    boxes = [page.eval_on_selector(s, "el => el.getBoundingClientRect().toJSON()")
             for s in ("#before-canvas", "#result-canvas", "#compare-slider")]
    assert boxes[0] == boxes[1] and boxes[2]["width"] == boxes[0]["width"], boxes

    # before on the left of the line, after on its right; the slider moves the line
    assert (shown_at(page, 0.25), shown_at(page, 0.75)) == ("before-canvas", "result-canvas")
    page.fill("#compare-slider", "10")
    assert (shown_at(page, 0.05), shown_at(page, 0.25)) == ("before-canvas", "result-canvas")
    page.focus("#compare-slider")
    for _ in range(80):
        page.keyboard.press("ArrowRight")  # the keyboard moves it too
    assert page.input_value("#compare-slider") == "90"
    assert (shown_at(page, 0.75), shown_at(page, 0.95)) == ("before-canvas", "result-canvas")
