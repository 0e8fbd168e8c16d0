"""EfficientNet-Lite0 int8 (ONNX, QDQ u8s8) in the demo page, per kernel variant, against CPython.

For each variant the page (Pyodide + the browser's WebAssembly) must put the float model's top-1
family first (chelsea: a domestic cat, coffee: espresso) and give exactly the numbers CPython
qnnweb (wasmtime, same variant) gives for the same photo prepared with Pillow as the model's
metadata says: the page's input pixels are byte-identical (its resize is a port of Pillow's), the
raw logits identical, the top-5 indices identical and the probabilities within 1e-6 (the softmax
runs in two different libms).

Also the Python example for Pyodide users (web/examples/classify.py), in the page's own Pyodide
and in its stand-alone page.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pytest
from browser_pages import pillow_input

MODEL = "efficientnet_lite0_u8s8"
CAT_FAMILY = {281: "tabby", 282: "tiger cat", 285: "Egyptian cat"}
CASES = [("chelsea.png", CAT_FAMILY), ("coffee.png", {967: "espresso"})]


@pytest.fixture(scope="session")
def sidecar(demo_folders) -> dict:
    return json.loads((demo_folders["models"] / f"{MODEL}.json").read_text())


@pytest.fixture(scope="session")
def cpython_models(demo_folders):
    """variant -> qnnweb.Model in CPython (wasmtime), loaded on first use."""
    import qnnweb

    loaded = {}

    def get(variant: str):
        if variant not in loaded:
            loaded[variant] = qnnweb.load(demo_folders["models"] / f"{MODEL}.onnx", variant=variant)
            assert loaded[variant].variant == variant
        return loaded[variant]

    return get


def cpython_answer(model, rgb: bytes, pre: dict):
    import qnnweb.image

    x = qnnweb.image.rgb_to_input(rgb, model.inputs[0], pre["mean"], pre["std"])
    (out,) = model.run(x)
    raw = qnnweb.image.dequantize(out, model.outputs[0])
    top = qnnweb.image.top_k(out, model.outputs[0], 5, logits=True)
    return raw, top


@pytest.mark.parametrize("photo,family", CASES, ids=[p for p, _ in CASES])
def test_efficientnet_in_the_page_matches_cpython(variant_page, demo_folders, sidecar, cpython_models, photo, family):
    variant, demo = variant_page
    pre = sidecar["preprocess"]
    # the float model's own top-1 is in the family we expect (guards the test's premise)
    assert sidecar["float_top5"][photo][0][0] in family

    state = demo.run(MODEL, photo)
    assert state == "done", f"{MODEL} on {photo} with {variant}: {demo.error_text()!r}"
    assert demo.results_meta() == {"model": MODEL, "photo": photo, "variant": variant, "engine": "qnnweb.js",
                                   "task": "classification"}
    assert demo.text("#variant").strip() == variant
    top = demo.top()
    labels = [label for label, _ in demo.results()]
    assert len(top) == 5
    assert top[0][0] in family, f"{photo} with {variant}: top-5 {list(zip(labels, top))}, want one of {family}"
    assert labels[0] == sidecar["labels"][top[0][0]]
    probs = [p for _, p in top]
    assert probs == sorted(probs, reverse=True) and 0 < probs[0] <= 1 and sum(probs) <= 1 + 1e-9

    # 1. the page's input pixels are exactly Pillow's (same resize, same crop)
    want_rgb = pillow_input(demo_folders["data"] / "samples" / photo, pre)
    got_rgb = bytes(demo.page.evaluate("Array.from(window.qnnwebDemo.lastInput)"))
    assert len(got_rgb) == len(want_rgb) == pre["crop"] * pre["crop"] * 3
    if got_rgb != want_rgb:
        diff = np.abs(np.frombuffer(got_rgb, np.uint8).astype(int) - np.frombuffer(want_rgb, np.uint8))
        pytest.fail(f"{photo}: the page's input differs from Pillow's in {int((diff > 0).sum())} of {diff.size} "
                    f"values (max {int(diff.max())}); preprocess {demo.page.evaluate('window.qnnwebDemo.lastPreprocess')}")

    # 2. the same numbers as CPython qnnweb with the same variant
    raw, want_top = cpython_answer(cpython_models(variant), want_rgb, pre)
    got_raw = demo.page.evaluate("window.qnnwebDemo.lastOutput")
    assert len(got_raw) == len(raw) == 1000
    worst = max(abs(a - b) for a, b in zip(got_raw, raw))
    assert got_raw == raw, f"{photo} with {variant}: logits differ from CPython's (max |diff| {worst})"
    assert [i for i, _ in top] == [i for i, _ in want_top], f"page {top} vs CPython {want_top}"
    for (_, got_p), (_, want_p) in zip(top, want_top):
        assert math.isclose(got_p, want_p, rel_tol=0, abs_tol=1e-6), f"page {top} vs CPython {want_top}"

    # 3. latency of the run, its median over the runs so far (same model and variant)
    assert float(demo.page.eval_on_selector("#latency", "el => el.dataset.ms")) > 0
    n = int(demo.page.eval_on_selector("#latency-median", "el => el.dataset.n"))
    assert 1 <= n <= 10


def test_benchmark_button_shows_the_median_of_the_last_runs(page_for):
    """Exercised once, in the simd128 page."""
    demo = page_for("simd128")
    assert demo.run(MODEL, "coffee.png") == "done", demo.error_text()
    demo.page.click("#bench")
    assert demo.wait_idle() == "done", demo.error_text()
    assert demo.page.eval_on_selector("#latency-median", "el => el.dataset.n") == "10"
    runs = [float(v) for v in demo.text("#latency-runs").split("·")]
    assert len(runs) == 10 and all(v > 0 for v in runs)
    median = float(demo.page.eval_on_selector("#latency-median", "el => el.dataset.ms"))
    assert min(runs) - 0.1 <= median <= max(runs) + 0.1
    assert "ms" in demo.text("#latency-median") and "last 10 runs" in demo.text("#latency-median")
    assert demo.results()[0][0] == "espresso", "the results stay on screen"


def example_faces(demo_folders, photo: str) -> list[str]:
    """The lines the example prints for BlazeFace on ``photo``: CPython qnnweb on Pillow's input, its
    outputs post-processed by qnnweb.vision as the sidecar says."""
    import qnnweb
    from qnnweb import vision
    from qnnweb.image import dequantize, rgb_to_input

    side = json.loads((demo_folders["models"] / "face_detection_short_range.json").read_text())
    pre, post = side["preprocess"], side["postprocess"]
    model = qnnweb.load(demo_folders["models"] / "face_detection_short_range.tflite")
    rgb = pillow_input(demo_folders["data"] / "samples" / photo, pre)
    outs = {t.name: dequantize(v, t) for t, v in zip(model.outputs, model.run(rgb_to_input(rgb, model.inputs[0],
                                                                                          pre["mean"], pre["std"])))}
    faces = vision.ssd_detections(outs, post)
    lines = [f"{len(faces)} face(s) in {photo}:"]
    for face in faces:
        ymin, xmin, ymax, xmax = face.box
        points = " ".join(f"({x:.3f}, {y:.3f})" for x, y in face.keypoints)
        lines.append(f"face {face.score:.2f}: box y {ymin:.3f}-{ymax:.3f} x {xmin:.3f}-{xmax:.3f}, keypoints {points}")
    return lines


def test_example_script_in_the_pages_pyodide(page_for, demo_folders, sidecar):
    """Run once, in the relaxed page's Pyodide: the classification, then the faces BlazeFace finds in
    astronaut.png, post-processed in Pyodide by qnnweb.vision (as CPython does it)."""
    demo = page_for("relaxed")
    source = demo.page.evaluate("fetch('/static/examples/classify.py').then(r => r.text())")
    out = demo.run_python(source)
    lines = out.splitlines()
    assert any("top-5 for coffee.png" in line for line in lines), out
    first = lines[lines.index("top-5 for coffee.png:") + 1]
    assert first.startswith("1. espresso"), out
    faces = example_faces(demo_folders, "astronaut.png")
    assert len(faces) == 2, faces   # one face
    start = lines.index(faces[0])
    assert lines[start:start + len(faces)] == faces, out
    # another photo, through the globals the script reads; its pure-Python resize is Pillow's
    check = "\nimport hashlib\nprint('INPUT-SHA256', hashlib.sha256(LAST_INPUT).hexdigest())\n"
    out = demo.run_python(source + check, {"PHOTO": "chelsea.png"})
    lines = out.splitlines()
    first = lines[lines.index("top-5 for chelsea.png:") + 1]
    assert any(label in first for label in CAT_FAMILY.values()), out
    want = hashlib.sha256(pillow_input(demo_folders["data"] / "samples" / "chelsea.png", sidecar["preprocess"]))
    assert f"INPUT-SHA256 {want.hexdigest()}" in lines, "the example's input differs from Pillow's"


def test_example_page_installs_the_wheels_and_classifies(browser, server_url):
    page = browser.new_page()
    errors = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        page.goto(f"{server_url}/static/examples/index.html?photo=coffee.png")
        page.wait_for_function("['done', 'error'].includes(document.body.dataset.state)", timeout=180_000)
        out = page.inner_text("#output")
        assert page.evaluate("document.body.dataset.state") == "done", (out, page.inner_text("#error"), errors)
        lines = out.splitlines()
        assert lines[lines.index("top-5 for coffee.png:") + 1].startswith("1. espresso"), out
        assert "efficientnet_lite0_u8s8.onnx" in out
        assert "1 face(s) in astronaut.png:" in lines, out   # the detector, post-processed by qnnweb.vision
        assert "import qnnweb" in page.inner_text("#source")
    finally:
        page.close()
