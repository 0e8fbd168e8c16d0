"""The demo page's controls follow the user: Run's tooltip names what Run does for the chosen model, the
file input forgets an old file once a sample is picked, the URL names the chosen model and photo, and
the camera keeps running when the model changes."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import pytest
from browser_pages import DemoPage, camera_demo


@pytest.fixture(scope="module")
def demo(open_demo) -> DemoPage:
    return open_demo("?model=visual_wake_words&photo=grace_hopper.jpg&threads=1")


MODEL_SETTLE_MS = 300  # web/app.js: a model choice runs once it has rested this long


def query(demo: DemoPage) -> dict[str, list[str]]:
    return parse_qs(urlsplit(demo.page.url).query)


def choose_wake_word_model(demo: DemoPage) -> None:
    """okay_nabu chosen, and loaded once the choice has rested (MODEL_SETTLE_MS)."""
    demo.page.select_option("#model-select", "okay_nabu")
    demo.page.wait_for_function("document.body.dataset.task === 'wake-word'", timeout=DemoPage.RUN_TIMEOUT_MS)
    assert demo.wait_idle() == "done", demo.error_text()


def runs(demo: DemoPage) -> int:
    return int(demo.page.evaluate("document.body.dataset.runs"))


RUN_TITLES = [
    ("face_detection_short_range", "Detect the faces in the photo"),
    ("face_landmark", "Find the landmarks in the photo"),
    ("efficientnet_lite0_segmentation", "Segment the photo"),
    ("espcn_x2", "Upscale the photo"),
    ("image_classification", "Classify the photo"),
]


def test_run_tooltip_says_what_run_does(demo) -> None:
    assert demo.page.get_attribute("#run", "title") == "Classify the photo"  # the start-up model's
    for model, title in RUN_TITLES:
        demo.page.select_option("#model-select", model)
        assert demo.page.get_attribute("#run", "title").startswith(title), model
    choose_wake_word_model(demo)
    assert not demo.page.is_visible("#run") and demo.page.is_visible("#listen")
    assert demo.run("visual_wake_words", "grace_hopper.jpg") == "done", demo.error_text()


def test_a_sample_pick_empties_the_file_input(demo, demo_folders) -> None:
    """After a sample is picked the file input names no file, and picking the same file again runs it."""
    file = str(demo_folders["data"] / "samples" / "chelsea.png")
    demo.page.set_input_files("#photo-file", file)
    assert demo.wait_idle() == "done", demo.error_text()
    assert demo.page.input_value("#photo-select") == "upload:chelsea.png"
    assert demo.page.input_value("#photo-file").endswith("chelsea.png")

    demo.page.click('#thumbs .thumb[data-photo="coffee.png"]')
    assert demo.wait_idle() == "done", demo.error_text()
    assert demo.results_meta()["photo"] == "coffee.png"
    assert demo.page.input_value("#photo-file") == ""

    before = runs(demo)
    demo.page.set_input_files("#photo-file", file)
    assert demo.wait_idle() == "done", demo.error_text()
    assert runs(demo) == before + 1
    assert demo.page.input_value("#photo-select") == "upload:chelsea.png"
    assert demo.results_meta()["photo"] == "chelsea.png" and demo.text("#photo-name") == "chelsea.png"

    demo.page.select_option("#photo-select", "astronaut.png")  # the list picks a sample too
    assert demo.wait_idle() == "done", demo.error_text()
    assert demo.page.input_value("#photo-file") == ""


def test_the_url_follows_the_model_and_photo(demo, demo_folders) -> None:
    """?model= and ?photo= name what the controls show (other parameters stay); an upload has no ?photo=."""
    assert demo.run("image_classification", "chelsea.png") == "done", demo.error_text()
    assert query(demo) == {"model": ["image_classification"], "photo": ["chelsea.png"], "threads": ["1"]}
    demo.page.click('#thumbs .thumb[data-photo="coffee.png"]')
    assert demo.wait_idle() == "done", demo.error_text()
    assert query(demo)["photo"] == ["coffee.png"]
    demo.page.select_option("#model-select", "visual_wake_words")
    assert demo.wait_idle() == "done", demo.error_text()
    assert query(demo) == {"model": ["visual_wake_words"], "photo": ["coffee.png"], "threads": ["1"]}

    demo.page.set_input_files("#photo-file", str(demo_folders["data"] / "samples" / "dog.jpg"))
    assert demo.wait_idle() == "done", demo.error_text()
    assert query(demo) == {"model": ["visual_wake_words"], "threads": ["1"]}


def test_the_camera_follows_the_model(browser, server_url) -> None:
    """A model chosen while the camera runs: the next frames run it (the camera stays on); a wake-word
    model stops the camera with a note. Its own browser: the fake camera is a launch flag."""
    with camera_demo(browser, server_url, "?model=face_detection_short_range&photo=astronaut.png") as demo:
        frames = "+(document.getElementById('camera-stats').dataset.frames || 0)"
        demo.page.click("#camera")
        demo.page.wait_for_function(f"{frames} >= 2", timeout=60_000)

        demo.page.select_option("#model-select", "image_classification")
        demo.page.wait_for_function("document.getElementById('results').dataset.model === 'image_classification'",
                                    timeout=60_000)
        demo.page.wait_for_timeout(3 * MODEL_SETTLE_MS)  # past the choice's rest, when a run of the photo would come
        assert demo.page.evaluate("document.body.dataset.camera") == "on"
        seen = demo.page.evaluate(frames)
        demo.page.wait_for_function(f"{frames} >= {seen + 2}", timeout=60_000)
        assert demo.results_meta()["photo"] == "camera" and demo.results_meta()["task"] == "classification"
        assert demo.page.is_visible("#camera-video") and demo.text("#camera") == "Stop camera"

        choose_wake_word_model(demo)
        assert demo.page.evaluate("document.body.dataset.camera") == "off"
        assert demo.page.evaluate("document.getElementById('camera-video').srcObject") is None
        assert demo.page.is_visible("#notice") and "camera stopped" in demo.text("#notice")
        assert "okay_nabu" in demo.text("#notice") and demo.page.is_visible("#listen")
        assert demo.console_errors == [], demo.console_errors
