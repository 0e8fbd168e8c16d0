"""The demo page on a phone (390x844, an iPhone 12-14's viewport): while a model loads the status line
has the content's whole width, and after a run the results are on screen without scrolling; wider, the
photo and the results side by side."""

from __future__ import annotations

from browser_pages import DemoPage

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
