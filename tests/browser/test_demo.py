"""The demo page end to end in headless Chromium: the page loads the server's compiled model in
web/qnnweb.js (in a worker) and runs it on a sample photo with the forced kernel variant, while
Pyodide starts in another worker; the main thread never blocks.

One page per variant; every model/photo combination runs in it.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
from browser_pages import PREFIX, DemoPage, camera_demo
from PIL import Image

VARIANTS = ["scalar", "simd128", "relaxed"]

KNOWN_ANSWERS = [
    # model, photo, expected top-1, input size
    ("visual_wake_words", "grace_hopper.jpg", "person", 96),
    ("image_classification", "chelsea.png", "cat", 32),
]


@pytest.mark.parametrize("model,photo,expected,size", KNOWN_ANSWERS, ids=[f"{m}-{p}" for m, p, _, _ in KNOWN_ANSWERS])
def test_known_answer(variant_page, demo_folders, model: str, photo: str, expected: str, size: int) -> None:
    variant, demo = variant_page
    state = demo.run(model, photo)
    assert state == "done", f"{model} on {photo} with {variant}: {demo.error_text()!r}"
    results = demo.results()
    assert results, "no results shown"
    assert results[0][0] == expected, f"{model} on {photo} with {variant}: top classes {results}"
    assert 0.0 <= results[-1][1] <= results[0][1] <= 1.0

    # the page says which variant ran, and it is the one asked for
    assert demo.text("#variant").strip() == variant
    assert demo.results_meta() == {"model": model, "photo": photo, "variant": variant, "engine": "qnnweb.js",
                                   "task": "classification"}
    kernels = demo.page.eval_on_selector_all("#kernels li code", "els => els.map(e => e.textContent)")
    assert kernels and all(k for k in kernels), f"kernel names not shown: {kernels}"
    if variant != "scalar":
        assert any(variant in k for k in kernels), f"{variant} page shows kernels {kernels}"
    latency = demo.page.eval_on_selector("#latency", "el => el.dataset.ms")
    assert latency is not None and float(latency) > 0
    assert "ms" in demo.text("#latency")

    # the photo went in resized exactly as the model tests resize it (Pillow's bilinear)
    got = np.array(demo.page.evaluate("Array.from(window.qnnwebDemo.lastInput)"), dtype=np.int16)
    want = np.asarray(Image.open(demo_folders["data"] / "samples" / photo).convert("RGB").resize((size, size), Image.BILINEAR))
    assert got.size == size * size * 3
    assert np.abs(got.reshape(size, size, 3) - want.astype(np.int16)).max() <= 2


def test_corrupt_model_shows_a_readable_error(variant_page) -> None:
    """A model that cannot be loaded: the server's reason, in one line. (The list offers corrupt.tflite
    disabled, as the server marks it unusable: chosen here by script, as a model the listing called
    usable and whose compiled file fails all the same.)"""
    variant, demo = variant_page
    demo.page.eval_on_selector("#model-select", "s => { s.value = 'corrupt'; }")
    demo.page.select_option("#photo-select", "grace_hopper.jpg")
    demo.page.click("#run")
    state = demo.wait_idle()
    assert state == "error"
    error = demo.page.locator("#error")
    assert error.is_visible()
    message = error.inner_text()
    assert "corrupt.tflite" in message
    assert "ModelError" in message or "not a model" in message, message
    assert "Traceback" not in message.split("details")[0], "the summary should be one readable line"
    assert demo.results() == []
    assert demo.text("#variant").strip() == "–", "nothing stale from the previous model"

    # the page recovers: the next run works and clears the error
    assert demo.run("visual_wake_words", "grace_hopper.jpg") == "done"
    assert not demo.page.locator("#error").is_visible()
    assert demo.results()[0][0] == "person"


def test_everything_is_same_origin(variant_page) -> None:
    _, demo = variant_page
    assert demo.foreign_requests == []
    assert demo.page.evaluate("crossOriginIsolated") is True


def test_auto_variant_and_own_photo(open_demo, demo_folders) -> None:
    demo = open_demo("")
    # EfficientNet-Lite0 int8 is the default model, and the page runs it at once on the first photo
    assert demo.page.input_value("#model-select") == "efficientnet_lite0_u8s8"
    assert demo.results_meta()["model"] == "efficientnet_lite0_u8s8"
    assert demo.results_meta()["photo"] == "chelsea.png"
    assert len(demo.results()) == 5
    # the user's own photo through the file input
    demo.page.select_option("#model-select", "visual_wake_words")
    demo.page.set_input_files("#photo-file", str(demo_folders["data"] / "samples" / "grace_hopper.jpg"))
    assert demo.wait_idle() == "done", demo.error_text()
    assert demo.results()[0][0] == "person"
    assert demo.results_meta()["photo"] == "grace_hopper.jpg"
    assert demo.text("#variant").strip() in VARIANTS
    # switching the kernel select reloads the model with that variant
    demo.page.select_option("#variant-select", "scalar")
    assert demo.wait_idle() == "done", demo.error_text()
    assert demo.text("#variant").strip() == "scalar"
    assert "variant=scalar" in demo.page.url
    # threads: by default min(4, cores) on this isolated page; the select reloads with its count and
    # the same answer comes out (the same bytes: the scores shown are identical)
    cores = demo.page.evaluate("navigator.hardwareConcurrency")
    assert demo.text("#threads").strip() == str(min(4, cores)) and demo.text("#threads-note").strip() == ""
    default_top = demo.top()
    demo.page.select_option("#threads-select", "1")
    assert demo.wait_idle() == "done", demo.error_text()
    assert demo.text("#threads").strip() == "1" and "threads=1" in demo.page.url
    assert demo.top() == default_top
    assert demo.console_errors == [], demo.console_errors


@pytest.mark.parametrize("query, named", [("variant=fast", "variant=fast"), ("threads=two", "threads=two"),
                                          ("model=effnet", "model=effnet: no such model"),
                                          ("model=corrupt", "model=corrupt: unusable (ModelError: not a model"),
                                          ("photo=cat.png", "photo=cat.png: no such sample photo")])
def test_bad_variant_or_threads_parameter_is_ignored_with_a_notice(browser, server_url, query, named) -> None:
    """A mistyped parameter does not stop the page nor is silently replaced: it starts with qnnweb's own
    choice (the default model, the first photo), says what it ignored, drops the parameter from the URL
    and shows a result."""
    page = browser.new_page()
    try:
        page.goto(f"{server_url}/?{query}")
        page.wait_for_function("document.body.dataset.started === '1'", timeout=60_000)
        assert named in page.inner_text("#notice") and page.is_visible("#notice")
        assert query.split("=")[0] + "=" not in page.url
        assert page.eval_on_selector("#model-select", "s => s.options.length") > 0
        page.wait_for_function("window.qnnwebDemo && window.qnnwebDemo.firstResultMs !== null", timeout=60_000)
        assert page.eval_on_selector("#progress", "p => p.value") == 1
    finally:
        page.close()


DOCS_PAGES = [  # path, the title's selector, an operation's selector and its text
    ("/docs", ".swagger-ui .information-container .title", ".opblock-summary-path", "/api/models"),
    ("/redoc", ".api-content h1", ".api-content h2", "List Models"),
]


@pytest.mark.parametrize("path,title,operation,text", DOCS_PAGES, ids=[p[0] for p in DOCS_PAGES])
def test_docs_render_offline(browser, server_url, path, title, operation, text) -> None:
    """Swagger UI and Redoc render the API from the server alone: every request the page makes stays on
    its origin (Redoc's sidebar footer loaded Redocly's logo from a CDN)."""
    page = browser.new_page()
    requests = []
    page.on("request", lambda request: requests.append(request.url))
    try:
        page.goto(f"{server_url}{path}")
        page.wait_for_selector(title, timeout=30_000)
        assert "qnnweb" in page.inner_text(title)
        assert page.locator(operation, has_text=text).count() >= 1
        page.wait_for_load_state("networkidle")  # what the rendered page asks for too (Redoc's footer)
        assert [url for url in requests if not url.startswith((f"{server_url}/", "blob:", "data:"))] == []
        assert f"{server_url}/openapi.json" in requests
    finally:
        page.close()


def test_first_result_without_python_and_without_long_tasks(browser, server_url) -> None:
    """A first visit: the first answer comes from qnnweb.js before Python is ready, and the main
    thread has no task over 200 ms from navigation to that answer (Pyodide and inference run in
    workers); then Python becomes ready and runs qnnweb in the page's Python panel."""
    context = browser.new_context()
    page = context.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{server_url}/?model=efficientnet_lite0_u8s8&photo=coffee.png")
        page.wait_for_function("window.qnnwebDemo && window.qnnwebDemo.firstResultMs !== null", timeout=60_000)
        demo = page.evaluate("({first: window.qnnwebDemo.firstResultMs, long: window.qnnwebDemo.longTasks, "
                             "python: document.body.dataset.python})")
        assert page.eval_on_selector("#results", "el => el.dataset.engine") == "qnnweb.js"
        assert page.inner_text("#results li .label").startswith("espresso") or \
            page.eval_on_selector("#results li", "el => el.dataset.label") == "espresso"
        assert demo["python"] == "loading", "the first result should not wait for Python"
        before = [t for t in demo["long"] if t["start"] < demo["first"]]
        assert all(t["ms"] <= 200 for t in before), f"long tasks before the first result: {before}"
        assert "Engine" in page.inner_text(".facts") and "qnnweb.js" in page.inner_text("#engine")

        # Python comes up in its worker and runs what the panel holds
        page.wait_for_function("document.body.dataset.python !== 'loading'", timeout=180_000)
        assert page.evaluate("document.body.dataset.python") == "ready", page.inner_text("#python-status")
        page.fill("#python-source", "import json, sys, qnnweb\nprint('qnnweb', qnnweb.__version__, qnnweb.VARIANTS[0])\n"
                  "print('files', json.__file__, qnnweb.__file__)\n"
                  "print('readers', [m for m in sys.modules if m.split('.')[0] in ('tflite', 'google')])")
        page.click("#python-run")
        page.wait_for_function("document.querySelector('#python-output').textContent.includes('[Python')",
                               timeout=60_000)
        out = page.inner_text("#python-output")
        assert "qnnweb 0.1.0 relaxed" in out and "Pyodide in a worker" in out, out
        # the stdlib and the wheels as bytecode Pyodide made at build time; no model readers imported
        files = next(line for line in out.splitlines() if line.startswith("files")).split()[1:]
        assert files[0].endswith(".zip/json/__init__.pyc") and files[1].endswith("qnnweb/__init__.pyc"), files
        assert "readers []" in out, out
        long_after = [t for t in page.evaluate("window.qnnwebDemo.longTasks") if t["ms"] > 200]
        assert not long_after, f"long tasks on the main thread while Python loaded and ran: {long_after}"
    finally:
        context.close()
    assert not errors, errors


def test_the_demo_works_under_a_path_prefix(open_prefixed_demo) -> None:
    """Behind a proxy that serves qnnweb under a path prefix: the page, its workers, the kernels, the
    compiled model, Pyodide, the wheels and the Python example all load from under the prefix (a
    request outside it would fail behind such a proxy), and give the answers they give at the root."""
    demo = open_prefixed_demo("?variant=simd128")
    assert demo.run("visual_wake_words", "grace_hopper.jpg") == "done", demo.error_text()
    assert demo.results()[0][0] == "person"
    source = demo.page.evaluate("fetch('static/examples/classify.py').then(r => r.text())")
    out = demo.run_python(source)
    assert "top-5 for coffee.png:" in out and "1. espresso" in out, out
    assert demo.foreign_requests == [], demo.foreign_requests
    assert demo.console_errors == [], demo.console_errors
    # the versioned (immutable) URLs: kernels under their digest, Pyodide under its version; and Python
    # restored from the snapshot /api/wheels names (the wheels themselves are in it)
    versioned = [r"/kernels/[0-9a-f]{64}/qnnweb-simd128(-threads)?\.wasm$", r"/pyodide/\d+\.\d+\.\d+/pyodide\.asm\.wasm$",
                 r"/pyodide/qnnweb-snapshot\.bin$"]
    for pattern in versioned:
        assert any(re.search(PREFIX + pattern, url) for url in demo.requests), (pattern, demo.requests)


def test_arrow_keys_in_the_model_list_load_one_model(open_demo) -> None:
    """Stepping through the model list with the keyboard loads the model the choice rests on, not every
    model passed over (each is megabytes)."""
    demo = open_demo("")
    options = demo.page.eval_on_selector("#model-select",
                                         "s => [...s.options].filter(o => !o.disabled).map(o => o.value)")
    assert len(options) >= 3, options
    demo.page.select_option("#model-select", options[0])
    demo.page.click("#run")
    demo.wait_idle()
    before = len(demo.requests)
    demo.page.focus("#model-select")
    for _ in range(2):
        demo.page.keyboard.press("ArrowDown")
    demo.page.wait_for_timeout(1500)
    demo.wait_idle()
    compiled = {u for u in demo.requests[before:] if u.split("?")[0].endswith(".qnn")}
    assert len(compiled) <= 1, compiled
    assert demo.results_meta().get("model") == demo.page.eval_on_selector("#model-select", "s => s.value")


def test_undecodable_photo_and_a_dropped_photo(open_demo, demo_folders) -> None:
    """A file that is not an image: a readable error, no photo, nothing of the previous result left on
    screen, and the status line says the run failed. Then a photo dropped on the page runs like one
    picked with the file input."""
    demo = open_demo("?model=visual_wake_words&photo=grace_hopper.jpg")
    assert demo.results()[0][0] == "person"
    demo.page.set_input_files("#photo-file", files=[{"name": "holiday.jpg", "mimeType": "image/jpeg",
                                                     "buffer": b"this is not a JPEG" * 50}])
    assert demo.wait_idle() == "error"
    assert "holiday.jpg is not an image this browser can decode" in demo.error_text()
    assert demo.page.get_attribute("#photo", "src") is None and demo.text("#photo-name") == ""
    assert demo.results() == [] and demo.text("#latency").strip() == "–"
    assert "Run failed" in demo.text("#status")
    drawn = demo.page.evaluate("""() => {
      const c = document.getElementById('input-canvas');
      return c.getContext('2d').getImageData(0, 0, c.width, c.height).data.some((v) => v !== 0);
    }""")
    assert not drawn, "the model-sees canvas still shows the previous photo"

    # drag and drop: a DataTransfer holding the photo, dropped on the photo panel
    photo = (demo_folders["data"] / "samples" / "chelsea.png").read_bytes()
    demo.page.evaluate("""async (bytes) => {
      const file = new File([new Uint8Array(bytes)], "my cat.png", { type: "image/png" });
      const data = new DataTransfer();
      data.items.add(file);
      const target = document.querySelector(".photo");
      for (const type of ["dragenter", "dragover", "drop"]) {
        target.dispatchEvent(new DragEvent(type, { dataTransfer: data, bubbles: true, cancelable: true }));
      }
    }""", list(photo))
    assert demo.wait_idle() == "done", demo.error_text()
    assert demo.results_meta()["photo"] == "my cat.png" and demo.text("#photo-name") == "my cat.png"
    assert demo.page.input_value("#photo-select") == "upload:my cat.png"
    assert demo.page.get_attribute("#photo", "src").startswith("blob:")
    assert not demo.page.evaluate("document.body.classList.contains('dropping')")


def test_camera_frames_run_one_after_another(browser, server_url) -> None:
    """The camera (Chromium's fake device: a moving test pattern) runs the face detector frame after
    frame, with the frame rate shown; the overlay sits on the video; stopping it releases the camera
    and a photo runs again. Its own browser: the fake camera is a launch flag."""
    with camera_demo(browser, server_url, "?model=face_detection_short_range&photo=astronaut.png") as demo:
        assert demo.results_meta()["photo"] == "astronaut.png"
        demo.page.click("#camera")
        demo.page.wait_for_function("+(document.getElementById('camera-stats').dataset.frames || 0) >= 5",
                                    timeout=60_000)
        assert demo.page.evaluate("document.body.dataset.camera") == "on"
        assert demo.results_meta()["photo"] == "camera" and demo.results_meta()["task"] == "detection"
        assert demo.page.is_visible("#camera-video") and not demo.page.is_visible("#photo")
        assert float(demo.page.eval_on_selector("#camera-stats", "el => el.dataset.fps")) > 0
        assert "frames/s" in demo.text("#camera-stats")
        video_size = demo.page.evaluate("[document.getElementById('camera-video').videoWidth, "
                                        "document.getElementById('camera-video').videoHeight]")
        assert demo.page.evaluate("window.qnnwebDemo.lastPreprocess.photo") == video_size
        assert demo.text("#camera") == "Stop camera"

        demo.page.click("#camera")
        demo.wait_idle()
        assert demo.page.evaluate("document.body.dataset.camera") == "off"
        assert demo.page.evaluate("document.getElementById('camera-video').srcObject") is None
        assert demo.text("#camera-stats") == "" and demo.text("#camera") == "Camera"
        assert demo.results() == [] and demo.page.evaluate("window.qnnwebDemo.lastDetections") is None
        assert demo.run("face_detection_short_range", "grace_hopper.jpg") == "done", demo.error_text()
        assert demo.page.is_visible("#photo") and demo.results_meta()["photo"] == "grace_hopper.jpg"
        assert demo.console_errors == [], demo.console_errors


def test_no_camera_is_a_readable_error(open_demo) -> None:
    """A browser without a camera (the session's headless Chromium has none): the page says so and
    stays usable."""
    demo = open_demo("?model=visual_wake_words&photo=grace_hopper.jpg")
    demo.page.click("#camera")
    demo.page.wait_for_selector("#error:not([hidden])")
    assert demo.error_text().startswith("Camera unavailable: ")
    assert demo.page.evaluate("document.body.dataset.camera") != "on" and demo.text("#camera") == "Camera"
    assert demo.run("visual_wake_words", "grace_hopper.jpg") == "done" and demo.results()[0][0] == "person"
