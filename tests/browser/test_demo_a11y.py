"""The demo page for keyboard and screen-reader users: readable buttons in light and dark mode (WCAG
contrast), named and marked sample thumbnails, result canvases with a text alternative, a visible
keyboard focus outline."""

from __future__ import annotations

import re

import pytest

from browser_pages import DemoPage, contrast_ratio


@pytest.fixture(scope="module")
def demo(browser, server_url):
    """One demo page for the module (Pyodide started once), its first run over."""
    context = browser.new_context()
    yield DemoPage(context.new_page(), server_url).open("?model=image_classification&photo=chelsea.png")
    context.close()


def contrast(page, selector: str) -> float:
    """The contrast of an element's text on its own background."""
    return contrast_ratio(*page.eval_on_selector(
        selector, "el => [getComputedStyle(el).color, getComputedStyle(el).backgroundColor]"))


@pytest.mark.parametrize("scheme", ["light", "dark"])
@pytest.mark.parametrize("button", ["#run", "#bench"])
def test_buttons_text_has_at_least_4_5_to_1_contrast(demo, scheme, button) -> None:
    demo.page.emulate_media(color_scheme=scheme)
    try:
        assert demo.page.is_enabled(button)
        assert contrast(demo.page, button) >= 4.5, (scheme, button)
    finally:
        demo.page.emulate_media(color_scheme="light")


def pressed_thumbs(page) -> list[str]:
    return page.eval_on_selector_all('#thumbs .thumb[aria-pressed="true"]', "els => els.map(e => e.dataset.photo)")


def test_thumbnails_have_human_names_and_the_chosen_one_is_pressed(demo) -> None:
    page = demo.page
    names = page.eval_on_selector_all(
        "#thumbs .thumb", "els => els.map(e => [e.dataset.photo, e.getAttribute('aria-label')])")
    names = [tuple(n) for n in names]
    assert ("chelsea.png", "Sample photo: chelsea") in names
    assert ("grace_hopper.jpg", "Sample photo: grace hopper") in names
    assert all(not re.search(r"\.(png|jpe?g)\b", label) for _, label in names), names
    assert page.eval_on_selector_all('#thumbs .thumb:not([aria-pressed="false"]):not([aria-pressed="true"])',
                                     "els => els.length") == 0
    assert pressed_thumbs(page) == ["chelsea.png"]

    page.click('#thumbs .thumb[data-photo="dog.jpg"]')
    demo.wait_idle()
    assert pressed_thumbs(page) == ["dog.jpg"]
    assert page.input_value("#photo-select") == "dog.jpg"


def canvas_alternative(page, selector: str) -> dict:
    return page.eval_on_selector(selector, "c => ({role: c.getAttribute('role'), label: c.getAttribute('aria-label'), "
                                           "hidden: c.getAttribute('aria-hidden')})")


@pytest.mark.parametrize(("model", "photo", "canvas", "label"), [
    ("face_detection_short_range", "grace_hopper.jpg", "#overlay", r"1 face found, outlined on the photo"),
    ("face_landmark", "grace_hopper.jpg", "#overlay", r"468 landmarks drawn on the face"),
    ("efficientnet_lite0_segmentation", "chelsea.png", "#overlay", r"segmentation: .*\bcat \d+ %.*"),
    ("espcn_x2", "chelsea.png", "#result-canvas", r"the model's output image, \d+×\d+ pixels"),
])
def test_result_canvases_say_what_the_run_drew(demo, model, photo, canvas, label) -> None:
    assert demo.run(model, photo) == "done", demo.error_text()
    shown = canvas_alternative(demo.page, canvas)
    assert shown["role"] == "img" and shown["hidden"] is None, shown
    assert re.fullmatch(label, shown["label"]), shown

    # a classifier draws nothing on the photo: the overlay's text of the last run goes with its drawing
    assert demo.run("image_classification", "chelsea.png") == "done", demo.error_text()
    assert canvas_alternative(demo.page, "#overlay") == {"role": "img", "label": None, "hidden": "true"}


@pytest.mark.parametrize(("start", "key", "target"), [
    ("#threads-select", "Tab", "#run"),
    ("#thumbs .thumb:nth-child(2)", "Shift+Tab", "#thumbs .thumb:nth-child(1)"),
])
def test_keyboard_focus_has_a_clear_outline_in_the_accent_colour(demo, start, key, target) -> None:
    page = demo.page
    page.focus(start)
    page.keyboard.press(key)
    assert page.eval_on_selector(target, "el => el === document.activeElement"), target
    style = page.eval_on_selector(target, """el => {
        const s = getComputedStyle(el);
        return {width: s.outlineWidth, style: s.outlineStyle, colour: s.outlineColor, offset: s.outlineOffset,
                accent: getComputedStyle(document.documentElement).getPropertyValue('--accent').trim()};
    }""")
    assert style["style"] == "solid" and 2 <= float(style["width"].removesuffix("px")) <= 3, style
    assert float(style["offset"].removesuffix("px")) > 0, style
    accent = tuple(int(style["accent"][i:i + 2], 16) for i in (1, 3, 5))
    assert tuple(int(c) for c in re.findall(r"\d+", style["colour"])[:3]) == accent, style
