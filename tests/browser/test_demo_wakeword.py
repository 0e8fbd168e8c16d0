"""The demo page's wake-word task: okay_nabu (pymicro-wakeword's microWakeWord model, ``./build.sh build
wakeword-models``) hears Chromium's fake microphone, which plays a WAV of espeak-ng's voice in a loop
(``--use-file-for-fake-audio-capture``; one browser per WAV). "okay nabu" between silences is detected
within a bounded time, another sentence is not; and the model's outputs on the page are CPython qnnweb's
on the very samples the page's audio frontend was given (the page keeps them: the fake capture's and the
AudioWorklet's resampling lie before them, so they are compared from there on)."""

from __future__ import annotations

import wave

import numpy as np
import pytest
from browser_pages import DATA_DIR, DemoPage

import qnnweb
from bench.benchmark.common import CHROMIUM, CHROMIUM_ARGS
from qnnweb_dev.wakeword import model_calls, say

MODEL = "okay_nabu"
SILENCE = bytes(2 * 16000)  # 1 s of 16 kHz 16-bit silence
OTHER = "the weather is nice today, let us go for a walk in the park"
DETECT_TIMEOUT_MS = 30_000  # the WAV lasts ~3 s: it has looped several times by then
CALL_SECONDS = 0.03


def wav(path, pcm: bytes):
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(16000)
        w.writeframes(pcm)
    return path


@pytest.fixture(scope="module")
def microphone_page(browser, server_url, tmp_path_factory):
    """microphone_page(pcm) -> a DemoPage with okay_nabu chosen, in a Chromium whose fake microphone plays
    ``pcm`` (16 kHz 16-bit mono) in a loop."""
    launched = []

    def open_(pcm: bytes) -> DemoPage:
        path = wav(tmp_path_factory.mktemp("microphone") / "microphone.wav", pcm)
        chromium = browser.browser_type.launch(
            executable_path=str(CHROMIUM), headless=True,
            args=[*CHROMIUM_ARGS, "--use-fake-ui-for-media-stream", "--use-fake-device-for-media-stream",
                  f"--use-file-for-fake-audio-capture={path}"])
        launched.append(chromium)
        return DemoPage(chromium.new_context().new_page(), server_url).open(f"?model={MODEL}")

    yield open_
    for chromium in launched:
        chromium.close()


def listen(demo: DemoPage) -> None:
    assert demo.page.is_visible("#wakeword") and demo.text("#listen") == "Listen"
    demo.page.click("#listen")
    demo.page.wait_for_function("document.body.dataset.listening === 'on' || document.body.dataset.state === 'error'",
                                timeout=DemoPage.RUN_TIMEOUT_MS)
    assert demo.page.evaluate("document.body.dataset.listening") == "on", demo.error_text()


def state(demo: DemoPage) -> dict[str, int]:
    return {k: int(v) for k, v in demo.page.eval_on_selector("#wakeword-state", "el => ({...el.dataset})").items()}


def test_the_wake_word_is_detected_and_the_outputs_are_the_models(microphone_page):
    demo = microphone_page(SILENCE + say("okay nabu") + SILENCE)
    assert demo.results_meta() == {} and "Okay Nabu" in demo.text("#results-title")
    listen(demo)
    demo.page.wait_for_function("Number(document.querySelector('#wakeword-state').dataset.detections) >= 1",
                                timeout=DETECT_TIMEOUT_MS)
    # said in the aria-live region: "Detected …" while the mean is above the cutoff, "(detected N×)" after
    said = demo.text("#wakeword-state")
    assert "Okay Nabu" in said and "detected" in said.lower(), said
    assert demo.page.get_attribute("#wakeword-state", "aria-live") == "polite"
    demo.page.click("#listen")  # Stop
    assert demo.page.evaluate("document.body.dataset.listening") == "off"
    assert demo.text("#wakeword-state").startswith("Stopped (")

    # the page's outputs, call for call, are CPython qnnweb's on the samples the page's frontend had
    samples = np.array(demo.page.evaluate("window.qnnwebDemo.wakeword.samples()"), dtype=np.int16)
    outputs = demo.page.evaluate("window.qnnwebDemo.wakeword.outputs")
    model = qnnweb.load(DATA_DIR / "models" / f"{MODEL}.tflite")
    x = model.inputs[0]
    calls = model_calls(samples.tobytes(), x.scale, x.zero_point)
    assert 50 <= len(outputs) <= len(calls)
    assert [int(model.run(call)[0].item()) for call in calls[:len(outputs)]] == outputs
    assert max(outputs) > 0.85 * 256  # the wake word was heard in these very calls

    # another model ends the stream and hides the wake-word panel
    demo.run("efficientnet_lite0_u8s8")
    assert demo.page.evaluate("document.body.dataset.listening") == "off"
    assert not demo.page.is_visible("#wakeword") and demo.results()


def test_other_speech_is_not_detected(microphone_page):
    pcm = SILENCE + say(OTHER) + SILENCE
    demo = microphone_page(pcm)
    listen(demo)
    # two loops of the WAV heard (its duration in calls, twice), within a bound
    calls = 2 * len(pcm) / 2 / 16000 / CALL_SECONDS
    demo.page.wait_for_function(f"Number(document.querySelector('#wakeword-state').dataset.calls) >= {calls}",
                                timeout=DETECT_TIMEOUT_MS)
    assert state(demo)["detections"] == 0, demo.text("#wakeword-state")
    assert demo.text("#wakeword-state").startswith("Listening for")
    demo.page.click("#listen")
