"""Notes beside a model's answers, from its sidecar: a tiny model's (``note``, set by tools/models), a
speed_only model's (random weights), the segmentation model's (ImageNet has no class for people); none for
a model whose answers need none."""

from __future__ import annotations

import pytest
from browser_pages import DemoPage


@pytest.fixture(scope="module")
def demo(browser, server_url):
    """A demo page whose listing marks the CIFAR-10 model speed_only (the random-weight MobileNetV2 is not in
    the test server's folder)."""
    context = browser.new_context()
    page = context.new_page()

    def listing(route):
        data = route.fetch().json()
        for m in data["models"]:
            if m["name"] == "image_classification":
                m["speed_only"], m["note"] = True, None
        route.fulfill(status=200, json=data)

    page.route("**/api/models", listing)
    yield DemoPage(page, server_url).open("?autorun=0")
    context.close()


def shown_note(demo) -> str | None:
    return demo.text("#result-note") if demo.page.is_visible("#result-note") else None


@pytest.mark.parametrize(("model", "photo", "note"), [
    ("visual_wake_words", "grace_hopper.jpg", "A tiny model that sees 96×96 pixels: a quick guess, often wrong."),
    ("efficientnet_lite0_segmentation", "astronaut.png",
     "ImageNet has no class for people: this model does not mark them (at most their suit or uniform)."),
    ("image_classification", "chelsea.png", "Random weights: its answers mean nothing, only its speed does."),
    ("efficientnet_lite0_u8s8", "chelsea.png", None),
])
def test_a_note_beside_the_answers_when_the_sidecar_says(demo, model, photo, note) -> None:
    assert demo.run(model, photo) == "done", demo.error_text()
    assert demo.results()
    assert shown_note(demo) == note
    if note:
        assert demo.page.get_attribute("#result-note", "role") == "note"
        output, note_box = (demo.page.eval_on_selector(s, "el => el.getBoundingClientRect().toJSON()")
                            for s in (".output", "#result-note"))
        assert output["left"] <= note_box["left"] and note_box["bottom"] <= output["bottom"]  # beside the results
