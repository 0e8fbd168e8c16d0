"""The demo page for keyboard and screen-reader users: readable buttons in light and dark mode (WCAG
contrast), named and marked sample thumbnails, result canvases with a text alternative, a visible
keyboard focus outline."""

from __future__ import annotations

import re

import pytest

from browser_pages import DemoPage


@pytest.fixture(scope="module")
def demo(browser, server_url):
    """One demo page for the module (Pyodide started once), its first run over."""
    context = browser.new_context()
    yield DemoPage(context.new_page(), server_url).open("?model=image_classification&photo=chelsea.png")
    context.close()


def relative_luminance(css_colour: str) -> float:
    """WCAG 2's relative luminance of a computed colour ("rgb(r, g, b)")."""
    r, g, b = (int(c) / 255 for c in re.findall(r"\d+", css_colour)[:3])
    linear = [c / 12.92 if c <= 0.04045 else ((c + 0.055) / 1.055) ** 2.4 for c in (r, g, b)]
    return 0.2126 * linear[0] + 0.7152 * linear[1] + 0.0722 * linear[2]


def contrast(page, selector: str) -> float:
    fg, bg = page.eval_on_selector(
        selector, "el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]")
    hi, lo = sorted((relative_luminance(fg), relative_luminance(bg)), reverse=True)
    return (hi + 0.05) / (lo + 0.05)


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("button", ["#run", "#bench"])
def test_buttons_text_has_at_least_4_5_to_1_contrast(demo, scheme, button) -> None:
    demo.page.emulate_media(color_scheme=scheme)
    try:
        assert demo.page.is_enabled(button)
        assert contrast(demo.page, button) >= 4.5, (scheme, button)
    finally:
        demo.page.emulate_media(color_scheme="light")
