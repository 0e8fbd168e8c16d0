"""web/qnnweb-audio.js in headless Chromium against pymicro-features: the same feature values, exactly,
as the compiled TFLite Micro microfrontend (and so as CPython's qnnweb.audio) on speech, silence and
noise; the same constant tables as qnnweb.audio builds; streaming in any chunks; reset; bad input.
The module is served to the page by a route of its own (no qnnweb server needed)."""

from __future__ import annotations

import pytest
from api.audio_samples import reference_frames, sample_set
from browser_pages import REPO

from qnnweb.audio import tables

ORIGIN = "http://qnnweb-audio.test"
MODULE = REPO / "web" / "qnnweb-audio.js"


@pytest.fixture(scope="module")
def page(browser):
    context = browser.new_context()
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))

    def serve(route):
        if route.request.url == f"{ORIGIN}/qnnweb-audio.js":
            route.fulfill(body=MODULE.read_text(), content_type="text/javascript")
        else:
            route.fulfill(body="<!doctype html><title>audio</title>", content_type="text/html")

    page.route(f"{ORIGIN}/**", serve)
    page.goto(f"{ORIGIN}/")
    yield page
    context.close()
    assert not errors, errors


@pytest.fixture(scope="module")
def samples():
    return sample_set()


def js_frames(page, samples, chunk=None):
    """The module's frames for ``samples`` fed in chunks of ``chunk`` (all at once by default)."""
    return page.evaluate("""async ([samples, chunk]) => {
        const { MicroFrontend } = await import("/qnnweb-audio.js");
        const frontend = new MicroFrontend();
        const pcm = Int16Array.from(samples);
        const step = chunk || pcm.length;
        const frames = [];
        for (let i = 0; i < pcm.length; i += step) frames.push(...frontend.process(pcm.subarray(i, i + step)));
        return frames.map((frame) => Array.from(frame));
    }""", [samples, chunk])


def test_frames_equal_pymicro_features(page, samples):
    for name, pcm in samples.items():
        got = js_frames(page, pcm)
        assert got == reference_frames(pcm), name
        assert got and all(len(frame) == 40 for frame in got), name


def test_chunking_changes_nothing(page, samples):
    speech = samples["okay_nabu"]
    whole = js_frames(page, speech)
    for chunk in (1, 159, 160, 481, 1024):
        assert js_frames(page, speech, chunk) == whole, chunk


def test_plain_arrays_and_reset(page, samples):
    speech, noise = samples["okay_nabu"][:6000], samples["full_scale_noise"][:1234]
    fresh, dirty, after_reset = page.evaluate("""async ([speech, noise]) => {
        const { MicroFrontend } = await import("/qnnweb-audio.js");
        const rows = (frames) => frames.map((frame) => Array.from(frame));
        const frontend = new MicroFrontend();
        frontend.process(noise);
        const dirty = rows(frontend.process(speech));
        frontend.process(noise);
        frontend.reset();
        return [rows(new MicroFrontend().process(speech)), dirty, rows(frontend.process(speech))];
    }""", [speech, noise])
    assert fresh == reference_frames(speech)
    assert after_reset == fresh != dirty


def test_tables_equal_the_python_packages(page):
    channels, end = tables.filterbank()
    want = {
        "window": tables.window_coefficients(),
        "filterbank": [list(channel) for channel in channels],
        "filterbankEnd": end,
        "noiseReduction": list(tables.noise_reduction_constants()),
        "pcanGainLut": tables.pcan_gain_lut(),
        "fftTwiddles": [list(t) for t in tables.fft_twiddles()],
        "realFftTwiddles": [list(t) for t in tables.real_fft_twiddles()],
    }
    assert page.evaluate("async () => (await import('/qnnweb-audio.js')).frontendTables()") == want


def test_bad_samples_are_refused_by_name(page):
    errors = page.evaluate("""async () => {
        const { MicroFrontend } = await import("/qnnweb-audio.js");
        const error = (samples) => { try { new MicroFrontend().process(samples); return null; }
                                     catch (e) { return `${e.name}: ${e.message}`; } };
        return [error([0, 40000]), error([0, 1.5]), error("audio"), error(42)];
    }""")
    assert errors[0] == "RangeError: MicroFrontend.process: sample 1 is 40000, not an integer in [-32768, 32767]"
    assert errors[1] == "RangeError: MicroFrontend.process: sample 1 is 1.5, not an integer in [-32768, 32767]"
    assert errors[2] == errors[3] == ("TypeError: MicroFrontend.process: expected an Int16Array or an array of "
                                      "16-bit integer samples")
