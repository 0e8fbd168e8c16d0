"""The benchmark harness (tools/bench/bench.py) in its short CI mode, and the kernel micro-benchmark.

``--quick`` runs one model (the smallest default ONNX model whose TFLite twin exports) on every
engine and every qnnweb variant with a few rounds. The test checks that the output is complete:
every engine has a record without error, the top-5 on the sample photo agree across engines, the
JSON / Markdown / PNG files are written. Timing numbers are never asserted. Nothing is skipped: a
missing browser, npm package or build output fails with what to run.
"""

from __future__ import annotations

import importlib
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

REPO = Path(__file__).resolve().parents[2]
BENCH = REPO / "tools" / "bench" / "bench.py"
KERNEL_BENCH = REPO / "tools" / "bench" / "kernel_bench.py"
VARIANTS = ["relaxed", "simd128", "scalar"]
TIMEOUT_S = 240


def _bench_module(name):
    """A module of tools/bench/benchmark/ (tools/ is on sys.path: tests/conftest.py)."""
    return importlib.import_module(f"bench.benchmark.{name}")


def _run(args, timeout=TIMEOUT_S):
    proc = subprocess.run([sys.executable, *map(str, args)], cwd=REPO, capture_output=True, text=True,
                          timeout=timeout, env={**os.environ, "PYTHONUNBUFFERED": "1"})
    return proc


@pytest.fixture(scope="module")
def quick_bench(tmp_path_factory):
    out = tmp_path_factory.mktemp("bench")
    proc = _run([BENCH, "--quick", "--out", out])
    if proc.returncode != 0:
        pytest.fail(f"tools/bench/bench.py --quick failed (exit {proc.returncode}); if something is missing run "
                    f"./build.sh setup && ./build.sh build.\nstderr:\n{proc.stderr[-4000:]}", pytrace=False)
    return out, proc


@pytest.mark.browser
@pytest.mark.slow
def test_quick_writes_every_file(quick_bench):
    out, _ = quick_bench
    for name in ("bench.json", "bench.md", "bench.png", "bench_meta.json"):
        assert (out / name).is_file() and (out / name).stat().st_size > 0, f"{name} not written"
    assert (out / "bench.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "bench.md").read_text()
    for text in ("Machine:", "Browser:", "onnxruntime-web 1.30.0", "@litertjs/core 2.5.3", "| engine |",
                 "| op family |", "| conv2d 1x1 s1 |"):
        assert text in md, f"bench.md lacks {text!r}"


@pytest.mark.browser
@pytest.mark.slow
def test_quick_every_engine_ran(quick_bench):
    out, proc = quick_bench
    records = json.loads((out / "bench.json").read_text())
    errors = [f"{r['engine']} {r.get('variant') or ''}: {r['error']}" for r in records if "error" in r]
    assert not errors, "engines that did not run:\n" + "\n".join(errors) + "\n" + proc.stderr[-3000:]
    seen = {(r["engine"], r.get("variant")) for r in records}
    expected = {(e, v) for e in ("qnnweb", "qnnweb-js") for v in VARIANTS} | {("litert", None), ("litert", "compat"),
                                                                               ("ort", None)}
    assert expected <= seen, f"missing engines: {sorted(expected - seen, key=str)}"
    assert len({r["model"] for r in records}) == 1, "--quick runs one model"
    for r in records:
        for key in ("ttfi_ms", "ttfi_warm_ms", "median_ms", "min_ms", "p90_ms", "runs", "top5", "threads",
                    "ratio_to_qnnweb_median"):
            assert r.get(key) is not None, f"{r['engine']} {r.get('variant')}: no {key}"
        assert r["runs"] >= 1 and len(r["top5"]) == 5
        assert r["min_ms"] <= r["median_ms"] <= r["p90_ms"]
        assert r["first_visit_bytes"] > 100_000, r   # at least a kernel module and the model
    by = {(r["engine"], r.get("variant")): r for r in records}
    # which wasm each engine really ran
    assert by[("ort", None)]["wasm"] and all(w.endswith(".wasm") for w in by[("ort", None)]["wasm"])
    assert any("litert_wasm" in w for w in by[("litert", None)]["wasm"])
    # LiteRT.js's SIMD128-only build (what browsers without relaxed SIMD load), against qnnweb's simd128
    compat = by[("litert", "compat")]
    assert [Path(w).name for w in compat["wasm"]] == ["litert_wasm_compat_internal.wasm"], compat["wasm"]
    assert compat["threads"] == 1 and compat["ratio_reference"].endswith("/simd128/1t"), compat["ratio_reference"]
    # the other engines from their versioned (immutable) URLs
    assert all(w.startswith("/vendor/onnxruntime-web@") for w in by[("ort", None)]["wasm"])
    assert all(w.startswith("/vendor/@litertjs/core@") for w in by[("litert", None)]["wasm"])
    for v in VARIANTS:
        r = by[("qnnweb", v)]
        assert r["variant"] == v and r["kernels"]["gemm"], r
        assert r["kernel_median_ms"] is not None and r["kernel_median_ms"] <= r["median_ms"] * 1.5
        # the per-op-family profile (Model.profile_by_family in Pyodide), made after the timed rounds
        assert r["profile"]["conv2d 1x1 s1"]["ms"] > 0 and r["profile"]["conv2d 1x1 s1"]["gmac_per_s"] > 0, r
    assert by[("qnnweb", "relaxed")]["ratio_to_qnnweb_median"] == pytest.approx(1.0)
    for v in VARIANTS:
        # the JavaScript runtime on the server's compiled model: no Pyodide, the same kernels
        r = by[("qnnweb-js", v)]
        assert r["variant"] == v and r["kernels"] == by[("qnnweb", v)]["kernels"], r
        assert re.fullmatch(rf"/kernels/[0-9a-f]{{64}}/qnnweb-{v}\.wasm", "".join(r["wasm"])), r["wasm"]
        assert r["kernel_median_ms"] is not None and "pyodide_ready_ms" not in r, r
        assert by[("qnnweb", v)]["pyodide_ready_ms"] > 0
        assert by[("qnnweb", v)]["pyodide_snapshot"] is True  # started as the demo's worker starts


@pytest.mark.browser
@pytest.mark.slow
def test_quick_top5_agree_across_engines(quick_bench):
    out, _ = quick_bench
    records = json.loads((out / "bench.json").read_text())
    meta = json.loads((out / "bench_meta.json").read_text())
    disagree = [f"{r['engine']} {r.get('variant') or ''}: {r['top5']} (max |diff| {r.get('max_abs_diff_vs_qnnweb')})"
                for r in records if not r.get("top5_agrees_with_qnnweb")]
    ref = next(r for r in records if r["engine"] == "qnnweb" and r["variant"] == "relaxed")
    assert not disagree, f"top-5 differ from qnnweb's {ref['top5']}:\n" + "\n".join(disagree)
    # the TFLite twin LiteRT.js ran was checked with native ai-edge-litert against onnxruntime
    model = meta["models"][0]
    assert model["twin_check"] and model["twin_check"]["agree"], model
    # qnnweb's three variants are bit-exact: identical top-5
    tops = {json.dumps(r["top5"]) for r in records if r["engine"] in ("qnnweb", "qnnweb-js")}
    assert len(tops) == 1, tops


def test_engine_that_cannot_read_a_model_is_recorded(tmp_path):
    """A .tflite model: ORT cannot read it, and says so in the record (no browser run for it)."""
    models = _bench_module("models")
    model = REPO / "data" / "models" / "visual_wake_words.tflite"
    if not model.is_file():
        pytest.fail(f"{model} missing: run ./build.sh build", pytrace=False)
    m = models.BenchModel(0, str(model))
    file, why = m.file_for("ort")
    assert file is None and "ONNX" in why
    file, why = m.file_for("litert")
    assert file is m.file and why is None
    assert m.file.input_bytes is not None and len(m.file.input_bytes) == 96 * 96 * 3 * 4


def test_tflite_file_with_int8_edges_runs_in_litertjs_as_its_float_edged_twin(tmp_path):
    """LiteRT.js's JavaScript tensors cannot carry int8: a TFLite file with int8 inputs / outputs (the
    face detector, as ai-edge-quantizer writes it) gets a twin with float32 edges (QUANTIZE, DEQUANTIZE)
    for LiteRT.js only; ai-edge-litert gives the twin's outputs equal to the file's, dequantized."""
    from ai_edge_litert.interpreter import Interpreter

    models = _bench_module("models")
    model = REPO / "data" / "models" / "face_detection_short_range.tflite"
    if not model.is_file():
        pytest.fail(f"{model} missing: run ./build.sh build", pytrace=False)
    m = models.BenchModel(0, str(model))
    m.make_twin(tmp_path)
    assert m.twin_error is None and (m.twin.input.dtype, m.twin.output.dtype) == ("float32", "float32")
    assert m.file_for("litert") == (m.twin, None) and m.file_for("qnnweb") == (m.file, None)
    assert m.file_for("native-litert") == (m.file, None)

    def run(path, x):
        interpreter = Interpreter(model_path=str(path))
        interpreter.allocate_tensors()
        detail = interpreter.get_input_details()[0]
        interpreter.set_tensor(detail["index"], np.frombuffer(x, detail["dtype"]).reshape(detail["shape"]))
        interpreter.invoke()
        return [(interpreter.get_tensor(d["index"]), d["quantization"]) for d in interpreter.get_output_details()]

    # the twin is fed the file's int8 input dequantized, which its QUANTIZE maps back to the same bytes (the
    # bench's own float input is the photo's, whose every pixel can sit at a rounding tie for this file's
    # input scale 1/127.5 and zero point -1)
    spec = m.file.input
    x = np.frombuffer(m.file.input_bytes, np.int8)
    dequantized = ((x.astype(np.float32) - np.float32(spec.zero_point)) * np.float32(spec.scale)).astype("<f4").tobytes()
    for (q, (scale, zero)), (f, _) in zip(run(m.path, m.file.input_bytes), run(m.twin_path, dequantized), strict=True):
        np.testing.assert_allclose(f, (q.astype(np.float64) - zero) * scale, rtol=0, atol=scale * 1e-4)
    # a file with float edges needs no twin
    vww = models.BenchModel(1, str(REPO / "data" / "models" / "visual_wake_words.tflite"))
    vww.make_twin(tmp_path)
    assert vww.twin is None and vww.file_for("litert") == (vww.file, None)


def test_top5_agree_tolerates_ties_not_differences():
    models = _bench_module("models")
    a = np.array([0.1, 0.5, 0.2, 0.2, 0.0, 0.0, 0.0])
    assert models.top5_agree(a, a.copy())[0]
    b = a.copy()
    b[2], b[3] = 0.2, 0.2001  # a near-tie swaps order
    assert models.top5_agree(a, b)[0]
    c = np.array([0.5, 0.1, 0.2, 0.2, 0.0, 0.0, 0.0])  # a different winner
    assert not models.top5_agree(a, c)[0]


def test_pause_is_parsed_and_reported():
    """--pause-ms (idle time before each inference) reaches the command line the report repeats."""
    runner, report = _bench_module("runner"), _bench_module("report")
    args = runner.parse_args(["--pause-ms", "20", "--runs", "3", "--warmup", "1"])
    assert args.pause_ms == 20
    assert report._cli(vars(args))[-2:] == ["--pause-ms", "20"]
    assert runner.parse_args([]).pause_ms == 0 and "--pause-ms" not in report._cli(vars(runner.parse_args([])))


def test_models_are_given_one_by_one_or_several_at_once():
    """--model takes a shell glob's many paths (the README's op-model chains) as well as repeated flags, in order."""
    runner, report = _bench_module("runner"), _bench_module("report")
    args = runner.parse_args(["--model", "a.tflite", "b.onnx", "--model", "c.tflite"])
    assert args.model == ["a.tflite", "b.onnx", "c.tflite"]
    assert report._cli(vars(args))[:6] == ["--model", "a.tflite", "--model", "b.onnx", "--model", "c.tflite"]


def test_kernel_bench_runs(tmp_path):
    out = tmp_path / "k.json"
    proc = _run([KERNEL_BENCH, "--repeats", "1", "--warmup", "0", "--only", "add 28", "--json", out], timeout=120)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| add 28x28x40 |" in proc.stdout
    data = json.loads(out.read_text())
    row = data["rows"][0]
    for v in VARIANTS:
        assert row[v]["median_ms"] > 0 and row[v]["g_per_s"] > 0, row


def test_thread_speedups_are_taken_round_by_round():
    """The 1 -> N thread gain in bench.json / bench.md: the medians' ratio, and the median of the same ratio
    round by round (a slow round hits both of its runs); failed rounds (NaN) are left out."""
    runner, report = _bench_module("runner"), _bench_module("report")
    one = [6.0, 6.2, 12.0, 6.1, float("nan")]
    two = [3.5, 3.3, 6.6, 9.0, 3.4]
    medians, per_round = runner.speedups(one, two)
    assert medians == pytest.approx(6.15 / 3.5)
    assert per_round == pytest.approx(np.median([6.0 / 3.5, 6.2 / 3.3, 12.0 / 6.6, 6.1 / 9.0]))
    assert runner.speedups([float("nan")], [float("nan")]) == (None, None)
    records = [{"engine": "qnnweb-js", "variant": "relaxed", "threads": 1},
               {"engine": "qnnweb-js", "variant": "relaxed", "threads": 2, "speedup_over_1_thread": medians,
                "speedup_over_1_thread_per_round": per_round}]
    lines = report.threads_table(records)
    assert "| qnnweb.js (compiled) | relaxed | 2 | x1.76 | x1.77 |" in lines, lines
    assert report.threads_table(records[:1]) == []


def test_reproduce_line_names_every_choice():
    """bench.md's "Reproduce" command carries the run's engines, variants and thread counts when they are
    not the defaults (it used to drop them)."""
    report = _bench_module("report")
    args = {"model": ["m.onnx"], "engines": ["qnnweb-js", "litert"], "variants": ["relaxed"], "threads": [1, 2],
            "runs": 10, "warmup": 5, "native": True, "pause_ms": 0, "quick": False}
    assert report._cli(args) == ["--model", "m.onnx", "--engines", "qnnweb-js,litert", "--variants", "relaxed",
                                 "--threads", "1,2", "--runs", "10", "--warmup", "5", "--native"]
    defaults = {**args, "engines": ["qnnweb", "qnnweb-js", "litert", "ort"],
                "variants": ["relaxed", "simd128", "scalar"], "threads": [1], "native": False}
    assert report._cli(defaults) == ["--model", "m.onnx", "--runs", "10", "--warmup", "5"]


def test_native_onnxruntime_does_not_spin_after_its_runs():
    """The bench's native onnxruntime runs without spinning intra-op threads: they spun ~25 ms of a core after each
    run, on the vCPU the round's next engines then ran on (native ai-edge-litert measured x0.95-1.04 from its second
    thread so, x1.61-1.74 without it)."""
    model = REPO / "data" / "models" / "mobilenet_v2_u8s8.onnx"
    if not model.is_file():
        pytest.fail(f"{model} missing: run ./build.sh build", pytrace=False)
    native, models = _bench_module("native"), _bench_module("models")
    m = models.BenchModel(0, str(model))
    slot = native.NativeSlot("native-onnxruntime", m, m.file, threads=2)
    slot._create()
    options = slot.session.session.get_session_options()
    assert options.intra_op_num_threads == 2
    assert options.get_session_config_entry("session.intra_op.allow_spinning") == "0"


def test_modern_set_is_an_option_of_its_own():
    """--modern picks the modern-architecture set (DeiT-tiny, MobileViT-xxs, YOLO11n in data/bench-modern), is
    repeated by bench.md's Reproduce line, and refuses --model beside it."""
    runner, report, common = _bench_module("runner"), _bench_module("report"), _bench_module("common")
    args = runner.parse_args(["--modern", "--threads", "1,2", "--variants", "relaxed"])
    assert args.modern and args.model == []
    assert report._cli(vars(args))[0] == "--modern"
    assert "--modern" not in report._cli(vars(runner.parse_args([])))
    assert [Path(m).name for m in common.MODERN_MODELS] == [
        "deit_tiny_patch16_224_qdq_u8s8.onnx", "mobilevit_xxs_qdq_u8s8.onnx", "yolo11n_qdq_u8s8.onnx"]
    with pytest.raises(SystemExit):
        runner.parse_args(["--modern", "--model", "a.onnx"])


def test_missing_modern_model_says_how_to_make_it(monkeypatch, tmp_path):
    models, common = _bench_module("models"), _bench_module("common")
    monkeypatch.setattr(models, "REPO", tmp_path)   # a checkout where the modern set was never made
    monkeypatch.chdir(tmp_path)
    with pytest.raises(common.BenchError, match=r"\./build\.sh bench --modern"):
        models.BenchModel(0, common.MODERN_MODELS[0])


def _onnx_with_sidecar(tmp_path, sidecar):
    model = REPO / "data" / "models" / "mobilenet_v2_u8s8.onnx"
    if not model.is_file():
        pytest.fail(f"{model} missing: run ./build.sh build", pytrace=False)
    path = tmp_path / "net_qdq_u8s8.onnx"
    path.write_bytes(model.read_bytes())
    path.with_suffix(".json").write_text(json.dumps(sidecar))
    return path


def test_onnx_model_runs_in_litertjs_as_the_tflite_file_its_sidecar_names(tmp_path):
    """The modern set's ONNX sidecars name their TFLite twin (the same torch model through litert-torch and
    ai-edge-quantizer): LiteRT.js and native ai-edge-litert run that file, not qnnweb's export; qnnweb and ORT
    the ONNX file."""
    models = _bench_module("models")
    twin = REPO / "data" / "models" / "visual_wake_words.tflite"   # a TFLite file with float32 edges
    (tmp_path / "net_static_wi8_ai8.tflite").write_bytes(twin.read_bytes())
    m = models.BenchModel(0, str(_onnx_with_sidecar(tmp_path, {"tflite_twin": "net_static_wi8_ai8.tflite"})))
    m.make_twin(tmp_path / "twins")
    assert m.twin_error is None and m.twin_path == tmp_path / "net_static_wi8_ai8.tflite"
    assert "ai-edge-quantizer" in m.twin_origin
    assert not (tmp_path / "twins").exists(), "nothing exported"
    assert m.file_for("litert") == (m.twin, None) and m.file_for("native-litert") == (m.twin, None)
    assert m.file_for("ort") == (m.file, None) and m.file_for("qnnweb-js") == (m.file, None)
    assert len(m.twin.input_bytes) == 96 * 96 * 3 * 4   # its own input, laid out for its own shape


def test_a_twin_litertjs_cannot_run_is_reported_with_the_reason(tmp_path):
    """No LiteRT.js time without saying why: the converter's recorded failure, a missing file, or int8 edges
    (LiteRT.js's tensors cannot carry int8)."""
    models = _bench_module("models")
    failed = {"tflite_twin": "net_static_wi8_ai8.tflite",
              "tflite_twin_error": "litert-torch + ai-edge-quantizer failed: RuntimeError: no lowering"}
    m = models.BenchModel(0, str(_onnx_with_sidecar(tmp_path, failed)))
    m.make_twin(tmp_path / "twins")
    file, why = m.file_for("litert")
    assert file is None and "litert-torch + ai-edge-quantizer failed: RuntimeError: no lowering" in why
    m = models.BenchModel(0, str(_onnx_with_sidecar(tmp_path, {"tflite_twin": "net_static_wi8_ai8.tflite"})))
    m.make_twin(tmp_path / "twins")
    assert m.file_for("litert")[0] is None and "net_static_wi8_ai8.tflite is missing" in m.file_for("litert")[1]
    (tmp_path / "net_static_wi8_ai8.tflite").write_bytes(
        (REPO / "data" / "models" / "face_detection_short_range.tflite").read_bytes())   # int8 edges
    m = models.BenchModel(0, str(_onnx_with_sidecar(tmp_path, {"tflite_twin": "net_static_wi8_ai8.tflite"})))
    m.make_twin(tmp_path / "twins")
    assert m.file_for("litert")[0] is None and "int8 edges" in m.file_for("litert")[1]


def test_profile_table_names_attention_layernorm_and_gelu():
    """bench.md's per-op-family table says what each family computes: the modern models' LayerNorm, attention
    (batch_matmul, softmax) and GELU (its table and its product) are found by name."""
    report = _bench_module("report")
    profile = {"conv2d 1x1 s1": {"ms": 9.0, "ops": 49, "gmac_per_s": 20.0},
               "layer_norm": {"ms": 1.5, "ops": 25, "gmac_per_s": None},
               "batch_matmul": {"ms": 2.0, "ops": 24, "gmac_per_s": 8.0},
               "lut": {"ms": 0.4, "ops": 12, "gmac_per_s": None},
               "maxpool2d": {"ms": 0.1, "ops": 3, "gmac_per_s": None}}
    lines = report.profile_table([{"variant": "relaxed", "threads": 1, "profile": profile}])
    rows = {line.split(" | ")[0].lstrip("| "): line for line in lines if line.startswith("| ")}
    assert "| LayerNorm | 25 | 1.50 | – |" in rows["layer_norm"]
    assert "attention" in rows["batch_matmul"] and "| 24 | 2.00 | 8.0 |" in rows["batch_matmul"]
    assert "GELU" in rows["lut"] and "Linear" in rows["conv2d 1x1 s1"]
    assert rows["maxpool2d"].startswith("| maxpool2d |  | 3 |")   # a family without a note keeps its cells
    assert rows["total"] == "| total | | | 13.00 | |"
