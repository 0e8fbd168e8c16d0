"""The demo page's Python panel: Stop ends a script that never ends (Python starts again, from the server's
snapshot), and a failed script shows its traceback from the user's code on, styled as an error that reads
well in light and dark mode."""

from __future__ import annotations

import pytest
from browser_pages import DemoPage, contrast_ratio


@pytest.fixture(scope="module")
def demo(browser, server_url):
    """One demo page for the module, Python up."""
    context = browser.new_context()
    demo = DemoPage(context.new_page(), server_url).open("?model=image_classification&photo=chelsea.png&autorun=0")
    wait_for_python(demo.page)
    yield demo
    context.close()


def wait_for_python(page) -> None:
    page.wait_for_function("document.body.dataset.python !== 'loading'", timeout=180_000)
    assert page.evaluate("document.body.dataset.python") == "ready", page.inner_text("#python-status")


def run_script(page, source: str) -> None:
    page.fill("#python-source", source)
    page.click("#python-run")


def wait_for_output(page) -> str:
    page.wait_for_function("!document.querySelector('#python-output').textContent.startsWith('running')",
                           timeout=60_000)
    return page.inner_text("#python-output")


def test_stop_ends_a_script_that_never_ends_and_python_starts_again(demo) -> None:
    page = demo.page
    snapshots = lambda: sum(url.endswith("qnnweb-snapshot.bin") for url in demo.requests)  # noqa: E731
    before = snapshots()
    assert page.is_disabled("#python-stop")
    run_script(page, "x = 41\nwhile True:\n    pass\n")
    page.wait_for_timeout(1000)
    assert page.is_disabled("#python-run") and page.is_enabled("#python-stop")
    assert page.inner_text("#python-output").startswith("running")

    page.click("#python-stop")
    assert page.inner_text("#python-output").startswith("Stopped")
    assert page.is_disabled("#python-stop")
    wait_for_python(page)
    assert page.is_enabled("#python-run")
    assert snapshots() == before + 1, "the new Python should start from the server's snapshot"

    run_script(page, "import sys\nprint('snapshot' if '_qnnweb_snapshot' in sys.modules else 'cold', 'x' in dir())")
    assert wait_for_output(page).startswith("snapshot False\n[Python"), page.inner_text("#python-output")
    assert page.is_disabled("#python-stop")


def test_a_traceback_starts_at_the_users_code_and_is_styled_as_an_error(demo) -> None:
    page = demo.page
    run_script(page, "print('before')\ndef ratio(a, b):\n    return a / b\n\nratio(1, 0)\n")
    out = wait_for_output(page)
    error = page.inner_text("#python-output .python-error")
    assert out.startswith("before\n") and out.endswith(error)
    lines = error.splitlines()
    assert lines[0] == "Traceback (most recent call last):", lines
    assert lines[1].strip() == 'File "<exec>", line 5, in <module>', lines
    assert not any("_pyodide" in line or "/lib/python" in line for line in lines), lines
    assert lines[-1] == "ZeroDivisionError: division by zero"
    assert page.is_enabled("#python-run") and page.is_disabled("#python-stop")
    for scheme in ("light", "dark"):
        page.emulate_media(color_scheme=scheme)
        try:
            # the traceback's colour, the error colour, on the output box's background
            error, text, background = page.evaluate("""() => [
                getComputedStyle(document.querySelector('.python-error')).color,
                getComputedStyle(document.querySelector('#python-output')).color,
                getComputedStyle(document.querySelector('#python-output')).backgroundColor]""")
            assert error != text and contrast_ratio(error, background) >= 4.5, (scheme, error, background)
        finally:
            page.emulate_media(color_scheme="light")

    # a syntax error too: its frame is the user's
    run_script(page, "def broken(:\n    pass\n")
    wait_for_output(page)
    lines = page.inner_text("#python-output .python-error").splitlines()
    assert lines[1].strip() == 'File "<exec>", line 1', lines
    assert lines[-1].startswith("SyntaxError"), lines
