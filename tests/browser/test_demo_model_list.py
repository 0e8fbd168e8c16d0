"""The demo page's model list, from what /api/models says of each model (unusable, speed test only),
and a start-up that fails. Some listings are the server's own answer changed on the way (page.route)."""

from __future__ import annotations

from browser_pages import DemoPage


def open_with_listing(browser, server_url, change=None, status: int = 200):
    """A demo page whose /api/models answer is the server's, passed through ``change(listing)`` (or replaced
    by an error ``status``). Returns (context, page)."""
    context = browser.new_context()
    page = context.new_page()

    def listing(route):
        if status != 200:
            route.fulfill(status=status, json={"detail": "the models folder is being restored"})
            return
        data = route.fetch().json()
        change(data)
        route.fulfill(status=200, json=data)

    page.route("**/api/models", listing)
    page.goto(f"{server_url}/?autorun=0")
    page.wait_for_function("document.body.dataset.started === '1' || document.body.dataset.state === 'error'",
                           timeout=60_000)
    return context, page


def options(page) -> dict[str, dict]:
    return {o["value"]: o for o in page.eval_on_selector_all(
        "#model-select option", "els => els.map(o => ({value: o.value, text: o.textContent, title: o.title, "
                                "disabled: o.disabled}))")}


def test_unusable_models_are_listed_with_the_reason_but_cannot_be_chosen(browser, server_url) -> None:
    reasons = {}

    def remember(data):
        reasons.update({m["name"]: m["error"] for m in data["models"] if m["error"]})

    context, page = open_with_listing(browser, server_url, remember)
    try:
        assert reasons.get("corrupt", "").startswith("ModelError: not a model qnnweb can read"), reasons
        listed = options(page)
        corrupt = listed["corrupt"]
        assert corrupt["disabled"] and corrupt["title"] == reasons["corrupt"]
        assert " · unusable: ModelError: not a model qnnweb can read" in corrupt["text"], corrupt["text"]
        assert not any(o["disabled"] for name, o in listed.items() if name not in reasons)
        assert page.input_value("#model-select") == "efficientnet_lite0_u8s8"
        # the keyboard steps over it: from the model after it, up goes to the usable one before it, if any
        names = list(listed)
        after = names[names.index("corrupt") + 1]
        before = [n for n in names[:names.index(after)] if not listed[n]["disabled"]]
        page.eval_on_selector("#model-select", "(s, name) => { s.value = name; }", after)  # no run
        page.focus("#model-select")
        page.keyboard.press("ArrowUp")
        assert page.input_value("#model-select") == (before[-1] if before else after)
    finally:
        context.close()


def test_speed_only_models_are_labelled_from_the_sidecar_flag(browser, server_url) -> None:
    """The sidecar's ``speed_only`` (random weights) labels the model, whatever its title says (said once)."""
    def mark(data):
        for m in data["models"]:
            if m["name"] == "visual_wake_words":
                m["speed_only"] = True
            if m["name"] == "image_classification":
                m["speed_only"] = True
                m["title"] = "ResNet-8, random weights (speed test only)"

    context, page = open_with_listing(browser, server_url, mark)
    try:
        listed = options(page)
        vww, resnet = listed["visual_wake_words"], listed["image_classification"]
        assert vww["text"].split(" · ")[3:] == ["speed test only"], vww["text"]
        assert "random weights" in vww["title"].lower() and not vww["disabled"]
        assert resnet["text"].count("speed test only") == 1, resnet["text"]
        assert "speed test only" not in listed["efficientnet_lite0_u8s8"]["text"]
    finally:
        context.close()


def test_a_failed_start_stops_the_progress_bar(browser, server_url) -> None:
    context, page = open_with_listing(browser, server_url, status=503)
    try:
        assert page.evaluate("document.body.dataset.state") == "error"
        assert page.text_content("#status") == "Failed to start."
        assert "HTTP 503: the models folder is being restored" in DemoPage(page, server_url).error_text()
        assert not page.eval_on_selector("#progress", "p => p.matches(':indeterminate')")
        assert not page.is_visible("#progress")
    finally:
        context.close()
