"""A whole run: arguments, models, every engine's slot per model, the interleaved rounds and ratios."""

from __future__ import annotations

import argparse
import datetime as _dt
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

import qnnweb

from .browser import BrowserSlot
from .common import (CHROMIUM, CHROMIUM_ARGS, DEFAULT_MODELS, ENGINES, MODERN_MODELS, NPM_PACKAGES, QNNWEB_ENGINES,
                     REPO, VARIANTS, BenchError, log, median, percentile)
from .environment import check_prerequisites, machine, npm_version, pip_version, start_server
from .models import BenchModel, top5_agree
from .native import NativeSlot
from .report import write_outputs

DESCRIPTION = ("Benchmark qnnweb against LiteRT.js and ONNX Runtime Web on the same int8 models, in headless "
               "Chromium, in one run (./build.sh bench; README \"Performance\").")


def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="./build.sh bench", description=DESCRIPTION,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="extend", nargs="+", default=[], metavar="PATH",
                   help="one or more .onnx or .tflite models (repeatable: --model a.onnx --model b.tflite, or "
                   "--model results/op_models/*.tflite); default: the prepared demo models")
    p.add_argument("--modern", action="store_true",
                   help="the modern-architecture set instead of the demo models: DeiT-tiny, MobileViT-xxs and YOLO11n "
                   "(random weights) quantized by quantize_static, LiteRT.js on the ai-edge-quantizer TFLite file of "
                   "the same torch model (./build.sh bench --modern makes the files into data/bench-modern)")
    p.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: qnnweb,qnnweb-js,litert,ort")
    p.add_argument("--variants", default=",".join(VARIANTS), help="qnnweb kernel variants: relaxed,simd128,scalar")
    p.add_argument("--runs", type=int, default=None, help="timed rounds (one inference per engine per round); "
                   "default 30, --quick 5")
    p.add_argument("--warmup", type=int, default=None, help="untimed runs per engine first (default 5, --quick 2)")
    p.add_argument("--threads", default="1", help="thread counts, comma-separated (every engine runs with each)")
    p.add_argument("--out", default="results", help="output folder (default results/)")
    p.add_argument("--native", action="store_true",
                   help="also native onnxruntime and ai-edge-litert, at each --threads count")
    p.add_argument("--pause-ms", type=float, default=0, help="idle time before each inference (default 0): "
                   "as a page running one inference per camera frame or click. Thread pools then sleep between "
                   "inferences; this VM's kernel then puts a notified worker on the caller's CPU, so 2-thread "
                   "runs of qnnweb.js and LiteRT.js are bimodal (README Performance)")
    p.add_argument("--quick", action="store_true",
                   help="CI mode: few runs and one model (the smallest model of the set every engine can run)")
    args = p.parse_args(argv)
    if args.modern and args.model:
        p.error("--modern is a model set: give it or --model, not both")
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in args.engines:
        if e not in ENGINES:
            p.error(f"unknown engine {e!r} (choose from {', '.join(ENGINES)})")
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for v in args.variants:
        if v not in VARIANTS:
            p.error(f"unknown variant {v!r} (choose from {', '.join(VARIANTS)})")
    try:
        args.threads = [int(t) for t in str(args.threads).split(",") if t.strip()]
    except ValueError:
        p.error("--threads takes integers, e.g. 1 or 1,2")
    if not args.threads or min(args.threads) < 1:
        p.error("--threads must be >= 1")
    if args.runs is None:
        args.runs = 5 if args.quick else 30
    if args.warmup is None:
        args.warmup = 2 if args.quick else 5
    if args.runs < 1:
        p.error("--runs must be >= 1")
    return args


def choose_models(args, out: Path) -> list[BenchModel]:
    given = args.model or list(MODERN_MODELS if args.modern else DEFAULT_MODELS)
    models = [BenchModel(i, g) for i, g in enumerate(given)]
    for m in models:
        if "litert" in args.engines or args.native:
            m.make_twin(out / "twins")
            verify_twin(m)
    if args.quick and not args.model:
        # the smallest default model that every engine can run: an ONNX model whose TFLite twin
        # exported (and agrees with onnxruntime, if one does)
        exported = [m for m in models if m.format == "onnx" and m.twin is not None and not m.twin_error]
        usable = [m for m in exported if (m.twin_check or {}).get("agree")] or exported or models
        models = [min(usable, key=lambda m: m.path.stat().st_size)]
        log(f"--quick: {models[0].given}")
    return models


def verify_twin(m: BenchModel) -> None:
    """Native ai-edge-litert on the twin vs native onnxruntime on the ONNX model: same top-5?"""
    if m.format != "onnx" or m.twin is None or m.twin_error or m.file.error:
        return
    res = {}
    for engine, file in (("native-onnxruntime", m.file), ("native-litert", m.twin)):
        slot = NativeSlot(engine, m, file)
        slot.start(0)
        res[engine] = slot
    check = {"twin": str(m.twin_path)}
    if all(s.ok for s in res.values()):
        a, b = res["native-onnxruntime"].scores, res["native-litert"].scores
        agree, diff = top5_agree(a, b)
        check.update(onnxruntime_top5=m.top5(a), litert_top5=m.top5(b), agree=agree, max_abs_diff=diff)
    else:
        check["error"] = "; ".join(f"{e}: {s.record.get('error')}" for e, s in res.items() if not s.ok)
        check["agree"] = False
    m.twin_check = check
    log(f"{m.name}: TFLite twin vs onnxruntime (native): {'same top-5' if check.get('agree') else 'DIFFERENT: ' + json.dumps(check)}")


def run_bench(args) -> list[dict]:
    out = Path(args.out)
    if not out.is_absolute():
        out = Path.cwd() / out
    out.mkdir(parents=True, exist_ok=True)
    check_prerequisites(args.engines)
    models = choose_models(args, out)

    serve_dir = Path(tempfile.mkdtemp(prefix="qnnweb-bench-"))
    (serve_dir / "models").mkdir()
    (serve_dir / "inputs").mkdir()
    records: list[dict] = []
    meta = {"date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine(),
            "args": {k: v for k, v in vars(args).items()}, "models": []}
    server = thread = None
    t_start = time.monotonic()
    try:
        served = {}
        for m in models:
            for file in [m.file] + ([m.twin] if m.twin else []):
                if file.error or file.input_bytes is None:
                    continue
                name = f"m{m.index}_{file.path.stem}{file.path.suffix}"
                shutil.copy(file.path, serve_dir / "models" / name)
                (serve_dir / "inputs" / f"{name}.bin").write_bytes(file.input_bytes)
                served[id(file)] = {"model": f"/models/{name}", "input": f"/samples/{name}.bin"}
        server, thread, base = start_server(serve_dir)
        log(f"server {base}")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            meta["browser"] = f"Chromium {browser.version} (headless)"
            try:
                for m in models:
                    records += bench_model(m, args, browser, base, served)
            finally:
                browser.close()
    finally:
        if server is not None:
            server.should_exit = True
            thread.join(timeout=10)
        shutil.rmtree(serve_dir, ignore_errors=True)
    meta["seconds"] = round(time.monotonic() - t_start, 1)
    meta["versions"] = {
        "qnnweb": qnnweb.__version__,
        "pyodide": (REPO / ".cache" / "pyodide" / ".version").read_text().strip()
        if (REPO / ".cache" / "pyodide" / ".version").is_file() else None,
        **{p: npm_version(p) for p in NPM_PACKAGES},
        "onnxruntime (native)": pip_version("onnxruntime"),
        "ai-edge-litert (native)": pip_version("ai-edge-litert"),
        "playwright": pip_version("playwright"),
    }
    ua = next((r.get("user_agent") for r in records if r.get("user_agent")), None)
    meta["user_agent"] = ua
    for m in models:
        meta["models"].append({
            "model": m.given, "sha256": m.file.sha256, "input": m.file.input_how, "labels": bool(m.labels),
            "twin": str(m.twin_path) if m.twin_path else None, "twin_origin": m.twin_origin, "twin_error": m.twin_error,
            "twin_check": m.twin_check,
        })
    write_outputs(out, records, meta, models)
    return records


def speedups(one_thread_ms: list[float], more_threads_ms: list[float]) -> tuple[float | None, float | None]:
    """What more threads buy an engine: its 1-thread median over its N-thread median, and the median over
    rounds of (1-thread time / N-thread time) in the same round, so that a slow phase of the machine hits
    both sides of each ratio. Failed rounds (NaN) are left out."""
    one = [x for x in one_thread_ms if not math.isnan(x)]
    more = [x for x in more_threads_ms if not math.isnan(x)]
    per_round = [a / b for a, b in zip(one_thread_ms, more_threads_ms)
                 if not math.isnan(a) and not math.isnan(b) and b > 0]
    return (median(one) / median(more) if one and more and median(more) > 0 else None,
            median(per_round) if per_round else None)


def bench_model(m: BenchModel, args, browser, base: str, served: dict) -> list[dict]:
    """Every engine on one model: TTFI per slot, then interleaved rounds."""
    slots = []
    records = []
    plan = []
    for engine in args.engines:
        if engine in QNNWEB_ENGINES:
            for v in args.variants:
                for t in args.threads:
                    plan.append((engine, v, t))
        else:
            for t in args.threads:
                plan.append((engine, None, t))
            if engine == "litert" and "simd128" in args.variants:
                # LiteRT.js as browsers without relaxed SIMD (Firefox, Safari) run it: its "compat"
                # build (SIMD128 only, one thread), the match for qnnweb's simd128 variant
                plan.append((engine, "compat", 1))
    if args.native:
        plan += [(engine, None, t) for engine in ("native-onnxruntime", "native-litert") for t in args.threads]
    for index, (engine, variant, threads) in enumerate(plan):
        rec = {"engine": engine, "variant": variant, "model": m.given, "threads": threads, "_plan": index}
        file, why = m.file_for(engine)
        if file is not None and file.error:
            why = f"qnnweb cannot describe {file.path.name} (needed to build its input): {file.error}"
            file = None
        if file is None:
            rec["error"] = why
            records.append(rec)
            log(f"{m.name} {engine}: {why}")
            continue
        rec["model_file"] = str(file.path) if file is not m.file else m.given
        if engine.startswith("native-"):
            slot = NativeSlot(engine, m, file, threads)
            log(f"{m.name} {engine}: load")
            slot.start(args.warmup)
        else:
            slot = BrowserSlot(engine, m, file, variant, threads, base, served[id(file)])
            log(f"{m.name} {engine}{'/' + variant if variant else ''} threads={threads}: cold + warm load")
            slot.start(browser, args.warmup)
            if not slot.ok and "crashed" in slot.record.get("error", ""):
                # Chromium's renderer died now and then on this shared machine (a Pyodide page, once
                # in four quick benches, 2026-12-01): one new try in a new context, and the record says so
                first_error = slot.record["error"]
                log(f"  {first_error}: once more in a new context")
                slot.close()
                slot = BrowserSlot(engine, m, file, variant, threads, base, served[id(file)])
                slot.start(browser, args.warmup)
                slot.record["retried_after"] = first_error
        slot.record = {**rec, **slot.record}
        if not slot.ok:
            log(f"  error: {slot.record.get('error')}")
            slot.close()
            records.append(slot.record)
            continue
        log(f"  ttfi cold {slot.record['ttfi_ms']:.0f} ms, warm {slot.record['ttfi_warm_ms']:.0f} ms")
        slots.append(slot)

    # interleaved rounds: A, B, C, A, B, C ...
    log(f"{m.name}: {args.runs} rounds over {len(slots)} engines")
    for r in range(args.runs):
        for slot in slots:
            if args.pause_ms:
                time.sleep(args.pause_ms / 1000)
            try:
                ms, kernel = slot.run(1)
            except Exception as exc:
                slot.record.setdefault("round_errors", []).append(f"round {r}: {type(exc).__name__}: {exc}"[:300])
                ms, kernel = [float("nan")], [None]
            slot.ms += ms
            slot.kernel_ms += kernel

    # reference, per thread count: qnnweb (Pyodide; qnnweb.js when the run has no Pyodide engine)
    # relaxed on as many threads, else the fastest such variant on as many (so "ratio" compares
    # engines at equal thread counts)
    def reference(threads):
        qn = []
        for engine in ("qnnweb", "qnnweb-js"):
            qn = qn or [s for s in slots if s.engine == engine and s.threads == threads]
        ref = next((s for s in qn if s.variant == "relaxed"), None)
        if ref is None and qn:
            ref = min(qn, key=lambda s: median([x for x in s.ms if not math.isnan(x)]))
        return ref

    references = {t: reference(t) for t in {s.threads for s in slots}}
    # LiteRT.js's compat build against qnnweb's simd128 variant (neither uses relaxed SIMD)
    simd128 = next((s for engine in ("qnnweb", "qnnweb-js") for s in slots
                    if s.engine == engine and s.variant == "simd128" and s.threads == 1), None)
    for slot in slots:
        ms = [x for x in slot.ms if not math.isnan(x)]
        rec = slot.record
        rec.update(runs=len(ms), median_ms=median(ms), min_ms=min(ms) if ms else None, p90_ms=percentile(ms, 90),
                   top5=m.top5(slot.scores), top5_labels=[m.label(i) for i, _ in m.top5(slot.scores)])
        if slot.engine in QNNWEB_ENGINES:
            k = [x for x in slot.kernel_ms if x is not None]
            rec["kernel_median_ms"] = median(k)
            rec["kernel_min_ms"] = min(k) if k else None
            rec["overhead_median_ms"] = median([a - b for a, b in zip(slot.ms, slot.kernel_ms)
                                                if b is not None and not math.isnan(a)])
        ref = references.get(slot.threads) or references.get(1)
        if slot.engine == "litert" and slot.variant == "compat" and simd128 is not None:
            ref = simd128
        if ref is not None:
            ratios = [a / b for a, b in zip(slot.ms, ref.ms) if not math.isnan(a) and not math.isnan(b) and b > 0]
            rec["ratio_to_qnnweb_median"] = median(ratios)
            rec["ratio_reference"] = f"{ref.engine}/{ref.variant}/{ref.threads}t"
            rec["ratios_per_round"] = [round(x, 4) for x in ratios]
            agree, diff = top5_agree(slot.scores, ref.scores)
            rec["top5_agrees_with_qnnweb"] = agree
            rec["max_abs_diff_vs_qnnweb"] = diff
        one = next((s for s in slots if (s.engine, s.variant, s.threads) == (slot.engine, slot.variant, 1)), None)
        if slot.threads > 1 and one is not None:
            rec["speedup_over_1_thread"], rec["speedup_over_1_thread_per_round"] = speedups(one.ms, slot.ms)
        rec["user_agent"] = getattr(slot, "user_agent", None)
        rec["samples_ms"] = [round(x, 3) for x in slot.ms]
        if slot.engine == "qnnweb":
            rec["samples_kernel_ms"] = [round(x, 3) if x is not None else None for x in slot.kernel_ms]
            try:  # after the timed rounds, so profiling never disturbs them
                rec["profile"] = slot.profile()
            except Exception as exc:
                rec["profile_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"[:300]
        if slot.engine in ("litert", "native-litert") and m.twin_check is not None and m.format == "onnx":
            rec["twin_check"] = m.twin_check
        slot.close()
        records.append(rec)
        log(f"  {slot.engine}{'/' + slot.variant if slot.variant else ''}: median {rec['median_ms']:.2f} ms"
            + (f", ratio {rec['ratio_to_qnnweb_median']:.2f}" if rec.get("ratio_to_qnnweb_median") else "")
            + (f", x{rec['speedup_over_1_thread']:.2f} over 1 thread" if rec.get("speedup_over_1_thread") else "")
            + f", top-1 {rec['top5_labels'][0]}")
    records.sort(key=lambda r: r.pop("_plan"))  # the plan's order
    return records


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        records = run_bench(args)
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    errors = [r for r in records if "error" in r]
    for r in errors:
        log(f"not run: {r['engine']} {r.get('variant') or ''} {r['model']}: {r['error']}")
    print(Path(args.out) / "bench.md")
    return 0
