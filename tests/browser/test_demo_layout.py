"""The demo page on a phone (390x844, an iPhone 12-14's viewport): while a model loads the status line
has the content's whole width, and after a run the results are on screen without scrolling (the photo first
when the answer is drawn on it); the model list shows short names that fit; wider, the photo and the results
side by side."""

from __future__ import annotations

import pytest
from browser_pages import DemoPage
from models import prepare_onnx_models

PHONE = {"width": 390, "height": 844}


def is_compiled_model(url: str) -> bool:
    return ".qnn?" in url


def box(page, selector: str) -> dict[str, float]:
    return page.eval_on_selector(selector, "el => el.getBoundingClientRect().toJSON()")


def test_a_phone_shows_the_status_line_and_the_results_without_scrolling(browser, server_url) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    held = []  # the compiled model's request (from the inference worker), held: the page stays loading
    page.route(is_compiled_model, lambda route: held.append(route))
    try:
        page.goto(f"{server_url}/?model=image_classification&photo=chelsea.png")
        for _ in range(600):
            if held:
                break
            page.wait_for_timeout(100)
        assert held and page.text_content("#status").startswith("Loading"), page.text_content("#status")
        content = box(page, "main")
        assert page.is_visible("#progress")
        assert abs(box(page, "#status")["width"] - content["width"]) <= 1, (box(page, "#status"), content)

        for route in held:
            route.continue_()
        page.unroute(is_compiled_model)
        DemoPage(page, server_url).wait_idle()
        assert page.eval_on_selector("#results li", "li => li.dataset.label") == "cat"
        assert page.evaluate("scrollY") == 0
        results, first = box(page, "#results"), box(page, "#results li")
        assert 0 <= results["top"] and first["bottom"] <= PHONE["height"], (results, first)
        assert abs(box(page, "#status")["width"] - content["width"]) <= 1

        # wider, the photo is on the left again, the results beside it, the run's facts below them
        page.set_viewport_size({"width": 1280, "height": 900})
        photo, output, info = box(page, ".photo"), box(page, ".output"), box(page, ".run-info")
        assert photo["right"] < output["left"] and output["top"] == photo["top"], (photo, output)
        assert info["left"] == output["left"] and info["top"] > output["bottom"], (output, info)
    finally:
        context.close()


def efficientnets_as_the_tool_lists_them(route) -> None:
    """The server's listing with the other two EfficientNet-Lite0 forms added (copies of the u8s8 record with
    the titles tools/models/prepare_onnx_models.py gives them; their files are not in the test server's folder)."""
    data = route.fetch().json()
    u8s8 = next(m for m in data["models"] if m["name"] == "efficientnet_lite0_u8s8")
    for name in ("efficientnet_lite0_s8s8", "efficientnet_lite0_qop_u8s8"):
        made = prepare_onnx_models.MODELS[name]
        data["models"].append({**u8s8, "name": name, "title": made["title"], "short_title": made["short_title"]})
    route.fulfill(status=200, json=data)


def option_texts(page) -> dict[str, dict]:
    """Each model option's text and its width in the model list's font, and the list's room for text."""
    return page.eval_on_selector("#model-select", """select => {
        const style = getComputedStyle(select);
        const ctx = document.createElement('canvas').getContext('2d');
        ctx.font = `${style.fontSize} ${style.fontFamily}`;
        const room = select.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight) - 20;
        return Object.fromEntries([...select.options].map(o => [o.value,
            {text: o.textContent, width: ctx.measureText(o.textContent).width, room}]));
    }""")


def test_a_phone_shows_short_model_names_that_fit_the_list(browser, server_url) -> None:
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    page.route("**/api/models", efficientnets_as_the_tool_lists_them)
    try:
        DemoPage(page, server_url).open("?autorun=0")
        options = option_texts(page)
        for name, o in options.items():
            assert o["width"] <= o["room"], (name, o)  # the whole text shows in the closed list
        nets = [options[n]["text"] for n in ("efficientnet_lite0_u8s8", "efficientnet_lite0_s8s8",
                                             "efficientnet_lite0_qop_u8s8")]
        assert nets == ["EfficientNet-Lite0 QDQ u8 · classification", "EfficientNet-Lite0 QDQ s8 · classification",
                        "EfficientNet-Lite0 QOp u8 · classification"], nets
        # no short_title: the title without its last bracket
        assert options["visual_wake_words"]["text"] == "Person or not (96×96) · classification"
        assert options["okay_nabu"]["text"] == "Wake word: \u201cOkay Nabu\u201d · wake-word"

        page.set_viewport_size({"width": 1280, "height": 800})  # wider: the full titles again, and the sizes
        assert option_texts(page)["efficientnet_lite0_s8s8"]["text"].startswith(
            "EfficientNet-Lite0, ImageNet (ONNX QDQ, int8 activations) · classification · ")
    finally:
        context.close()


@pytest.mark.parametrize(("model", "photo", "first"), [
    ("face_detection_short_range", "grace_hopper.jpg", ".photo"),
    ("efficientnet_lite0_segmentation", "chelsea.png", ".photo"),
    ("image_classification", "chelsea.png", ".output"),
])
def test_a_phone_shows_the_drawn_answer_first(browser, server_url, model, photo, first) -> None:
    """Boxes or a mask drawn on the photo: the photo comes first (its top above the fold); classes: the list."""
    context = browser.new_context(viewport=PHONE)
    page = context.new_page()
    try:
        DemoPage(page, server_url).open(f"?model={model}&photo={photo}")
        photo_box, output = box(page, ".photo"), box(page, ".output")
        above, below = (photo_box, output) if first == ".photo" else (output, photo_box)
        assert above["bottom"] < below["top"], (above, below)
        assert page.evaluate("scrollY") == 0 and above["top"] < PHONE["height"] - 150, above
    finally:
        context.close()
