"""Threads in the browser (web/qnnweb.js's worker pool, and Pyodide through it): the same bytes as
one thread and as CPython for every thread count and variant; run() on a page's main thread (which
may not Atomics.wait); a page that is not cross-origin isolated runs one thread and says why."""

from __future__ import annotations

import base64
import urllib.request

import numpy as np
import pytest
import qnnweb
from browser_pages import open_page

MODEL = "efficientnet_lite0_u8s8.onnx"
RUN_JS = """async ([source, options, input, runs]) => {
    const qnnweb = await import("/static/qnnweb.js");
    const model = await qnnweb.load(source, options);
    const bytes = Uint8Array.from(atob(input), (c) => c.charCodeAt(0));
    const outputs = [];
    for (let i = 0; i < runs; i++) {
        const [out] = model.run(new Float32Array(bytes.buffer));
        outputs.push(btoa(String.fromCharCode(...new Uint8Array(out.buffer))));
    }
    const info = model.info();
    model.close();
    const [again] = model.run(new Float32Array(bytes.buffer));   // after close: one thread, same bytes
    outputs.push(btoa(String.fromCharCode(...new Uint8Array(again.buffer))));
    return { outputs, info, isolated: crossOriginIsolated, cores: navigator.hardwareConcurrency,
             shared: typeof SharedArrayBuffer !== "undefined" && model.exports.memory.buffer instanceof SharedArrayBuffer };
}"""


@pytest.fixture(scope="module")
def isolated_page(browser, server_url):
    context, page, errors = open_page(browser, server_url, True)
    yield page
    context.close()
    assert not errors, errors


@pytest.fixture(scope="module")
def case(server_url):
    with urllib.request.urlopen(f"{server_url}/models/{MODEL}.qnn") as r:
        data = r.read()
    x = np.random.default_rng(4).uniform(-2, 2, qnnweb.load(data).inputs[0].shape).astype(np.float32)
    expected = {v: qnnweb.load(data, v).run(x)[0].tobytes() for v in qnnweb.VARIANTS}
    return base64.b64encode(x.tobytes()).decode(), expected


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
def test_every_thread_count_gives_the_bytes_of_one_thread_in_cpython(isolated_page, case, variant):
    encoded, expected = case
    for threads in (1, 2, 3):
        js = isolated_page.evaluate(RUN_JS, [f"/models/{MODEL}.qnn", {"variant": variant, "threads": threads}, encoded, 3])
        assert {base64.b64decode(o) for o in js["outputs"]} == {expected[variant]}, f"{threads} threads"
        assert (js["info"]["threads"], js["info"]["threads_note"]) == (threads, None)
        assert js["shared"] == (threads > 1)


def test_default_is_min_4_cores_on_an_isolated_page(isolated_page, case):
    encoded, expected = case
    js = isolated_page.evaluate(RUN_JS, [f"/models/{MODEL}.qnn", {}, encoded, 2])
    assert js["isolated"] and js["info"]["threads"] == min(4, js["cores"]) and js["info"]["threads_note"] is None
    assert {base64.b64decode(o) for o in js["outputs"]} == {expected[js["info"]["variant"]]}


def test_a_page_that_is_not_isolated_runs_one_thread_and_says_why(browser, server_url, case):
    encoded, expected = case
    context, page, errors = open_page(browser, server_url, False)
    try:
        default = page.evaluate(RUN_JS, [f"/models/{MODEL}.qnn", {}, encoded, 1])
        assert (default["info"]["threads"], default["info"]["threads_note"]) == (1, None)
        asked = page.evaluate(RUN_JS, [f"/models/{MODEL}.qnn", {"threads": 2}, encoded, 1])
        assert asked["info"]["threads"] == 1 and "not cross-origin isolated" in asked["info"]["threads_note"]
        for js in (default, asked):
            assert {base64.b64decode(o) for o in js["outputs"]} == {expected[js["info"]["variant"]]}
    finally:
        context.close()
    assert not errors, errors


def test_bad_thread_counts_are_type_errors(isolated_page):
    for bad in (0, -2, 1.5, "2"):
        message = isolated_page.evaluate(
            """async ([source, threads]) => {
                const qnnweb = await import("/static/qnnweb.js");
                try { await qnnweb.load(source, { threads }); return "loaded"; }
                catch (err) { return `${err.name}: ${err.message}`; }
            }""", [f"/models/{MODEL}.qnn", bad])
        assert message.startswith("TypeError: threads must be a positive integer"), message


def test_pyodide_runs_on_the_runtimes_threads(page_for, case):
    """The demo's Python worker (an isolated page's Worker) loads with threads=2 through qnnweb.js."""
    encoded, expected = case
    out = page_for("simd128").run_python(
        f"""
import base64, qnnweb
model = await qnnweb.load_async("/models/{MODEL}.qnn", variant="simd128", threads=2)
(y,) = model.run(base64.b64decode(x))
(y2,) = model.run(base64.b64decode(x))
info = model.info()
model.close()
print(info["threads"], info["threads_note"], base64.b64encode(bytes(y)).decode(), bytes(y) == bytes(y2))
""", {"x": encoded})
    threads, note, output, same = out.split()
    assert (threads, note, same) == ("2", "None", "True")
    assert base64.b64decode(output) == expected["simd128"]


def test_workers_that_never_start_do_not_hang_the_load_or_change_the_bytes(browser, server_url, case):
    """Tasks go to whichever thread is there: with Workers that never start, thread 0 runs them all,
    and load() gives up waiting for the workers after 10 s and says so."""
    encoded, expected = case
    context, page, errors = open_page(browser, server_url, True)
    try:
        page.evaluate("() => { window.Worker = class { postMessage() {} terminate() {} }; }")
        js = page.evaluate(RUN_JS, [f"/models/{MODEL}.qnn", {"variant": "simd128", "threads": 2}, encoded, 2])
        assert "had not started" in js["info"]["threads_note"]
        assert {base64.b64decode(o) for o in js["outputs"]} == {expected["simd128"]}
    finally:
        context.close()
    assert not errors, errors
