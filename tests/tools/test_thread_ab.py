"""tools/bench/thread_ab.py: qnnweb.js pages at 1 and 2 threads for kernel builds side by side, and every op of
the plan timed at both thread counts (a smoke run: the numbers are the tool's use, not the test's)."""

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

import qnnweb

from bench import thread_ab

pytestmark = pytest.mark.browser  # qnnweb.js pages in Chromium

REPO = Path(__file__).resolve().parents[2]

MODEL = REPO / "data" / "models" / "face_detection_short_range.tflite"


def test_times_each_build_and_every_op_at_1_and_2_threads(capsys):
    build = str(REPO / "py_frontend" / "qnnweb" / "wasm")
    # In a thread of its own: the tool starts Playwright's sync API, which refuses to start in a thread where
    # another one (the browser tests' session-wide Chromium) is running.
    with ThreadPoolExecutor(1) as pool:
        result = pool.submit(thread_ab.main, [str(MODEL), build, build, "--rounds", "1", "--batch", "3",
                                              "--ops", "5"]).result()
    assert sorted(result["medians"]) == [(0, 1), (0, 2), (1, 1), (1, 2)]
    assert all(ms > 0 for ms in result["medians"].values())
    assert result["threads"] == [1, 2]  # the op pages really ran 2 threads on the second
    ops = len(qnnweb.load(MODEL, "simd128")._steps)
    one, two = result["ops"]
    assert len(one) == len(two) == ops and all(t >= 0 for t in one + two)
    printed = capsys.readouterr().out
    assert printed.count("2 threads /") == 2 and f"ops one by one ({ops}," in printed
