"""Threads: whole models on the threaded modules (CPython: wasmtime shared memory + Python threads)
give the very bytes one thread gives, in every variant, for every thread count."""

from pathlib import Path

import numpy as np
import pytest

import qnnweb

TESTS_DATA = Path(__file__).resolve().parents[1] / "data"
# ONNX (QDQ u8s8, QDQ s8s8, QOperator) and TFLite (TensorFlow's converter, ai-edge-quantizer) forms.
MODELS = ["efficientnet_lite0_u8s8.onnx", "efficientnet_lite0_qop_u8s8.onnx", "mobilenet_v2_u8s8.onnx",
          "visual_wake_words.tflite", "tflite/mobilenet_v2.tflite"]


@pytest.fixture(scope="module")
def compiled(data_dir):
    cache = {}

    def get(name):
        if name not in cache:
            path = TESTS_DATA / name if name.startswith("tflite/") else data_dir / "models" / name
            if not path.exists():
                pytest.fail(f"{path} is missing: run ./build.sh build (it prepares the models)")
            cache[name] = qnnweb.compile(path)
        return cache[name]

    return get


def model_input(info, seed):
    rng = np.random.default_rng(seed)
    if info.dtype == "float32":
        return rng.uniform(-1, 1, info.shape).astype(np.float32)
    return rng.integers(-128, 128, info.shape).astype(info.dtype)


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("name", MODELS)
def test_threads_give_the_bytes_of_one_thread(compiled, name, variant):
    data = compiled(name)
    with qnnweb.load(data, variant=variant) as single:
        assert single.info()["threads"] == 1
        inputs = [model_input(info, seed) for seed, info in enumerate(single.inputs)]
        expected = [o.tobytes() for o in single.run(*inputs)]
    for threads in (2, 3):
        with qnnweb.load(data, variant=variant, threads=threads) as model:
            info = model.info()
            assert (info["threads"], info["threads_note"]) == (threads, None)
            for _ in range(2):  # the second run starts with the workers parked or spinning
                assert [o.tobytes() for o in model.run(*inputs)] == expected, f"{threads} threads"


@pytest.mark.parametrize("pause_s", [0, 0.02, 0.4])
def test_runs_after_each_way_workers_wait(compiled, pause_s):
    """Workers spin between the jobs of an inference and sleep from its end until the next job
    notifies them (threadpool.c): runs back to back, after a short and after a long pause give the
    same bytes (a late worker only leaves its slice to be stolen); closing a model whose workers sleep
    ends them."""
    import threading
    import time

    data = compiled("visual_wake_words.tflite")
    before = threading.active_count()
    with qnnweb.load(data, variant="simd128") as single:
        x = model_input(single.inputs[0], 7)
        expected = single.run(x)[0].tobytes()
    with qnnweb.load(data, variant="simd128", threads=3) as model:
        for _ in range(3):
            time.sleep(pause_s)
            assert model.run(x)[0].tobytes() == expected
        time.sleep(pause_s)
    assert threading.active_count() == before


def test_close_ends_the_workers_and_frees_the_model(compiled):
    import threading

    data = compiled("mobilenet_v2_u8s8.onnx")
    before = threading.active_count()
    model = qnnweb.load(data, variant="simd128", threads=3)
    assert threading.active_count() == before + 2
    x = model_input(model.inputs[0], 0)
    expected = model.run(x)[0].tobytes()
    model.close()
    assert threading.active_count() == before and model.threads == 1
    with pytest.raises(ValueError, match="the model is closed"):
        model.run(x)
    model.close()  # twice is fine
    with qnnweb.load(data, variant="simd128", threads=2) as again:
        assert again.run(x)[0].tobytes() == expected
    with pytest.raises(ValueError, match="the model is closed"):
        again.info()


def test_thread_counts_are_checked(compiled):
    data = compiled("visual_wake_words.tflite")
    for bad in (0, -1, 1.5, "2", True):
        with pytest.raises(ValueError, match="threads must be a positive integer"):
            qnnweb.load(data, threads=bad)
    with qnnweb.load(data, variant="scalar", threads=40) as model:
        info = model.info()
        assert info["threads"] == 16 and "at most 16" in info["threads_note"]


def test_a_model_left_unclosed_stops_its_workers_when_collected(compiled):
    import gc
    import threading

    before = threading.active_count()
    model = qnnweb.load(compiled("visual_wake_words.tflite"), threads=2)
    assert threading.active_count() == before + 1
    del model
    gc.collect()
    assert threading.active_count() == before


def test_a_model_the_kernels_refuse_leaves_no_threads(compiled, monkeypatch):
    import threading

    from qnnweb.model import Model

    def refuse(*args):
        raise qnnweb.ModelError("refused")

    monkeypatch.setattr(Model, "_build_plan", refuse)
    before = threading.active_count()
    with pytest.raises(qnnweb.ModelError, match="refused"):
        qnnweb.load(compiled("visual_wake_words.tflite"), threads=3)
    assert threading.active_count() == before
