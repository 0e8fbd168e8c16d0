"""What a run writes: bench.json, bench_meta.json, bench.md (tables, per-op-family profile) and bench.png."""

from __future__ import annotations

import json
import math
from pathlib import Path

from .common import ENGINE_LABELS, ENGINES, PHOTO, QNNWEB_ENGINES, VARIANTS, log
from .models import BenchModel


def fmt(x, digits=1):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def write_outputs(out: Path, records: list[dict], meta: dict, models: list[BenchModel]) -> None:
    (out / "bench.json").write_text(json.dumps(records, indent=1) + "\n")
    (out / "bench_meta.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
    (out / "bench.md").write_text(markdown(records, meta, models))
    try:
        chart(out / "bench.png", records, models)
    except Exception as exc:
        log(f"bench.png not written: {type(exc).__name__}: {exc}")
    log(f"wrote {out / 'bench.json'}, {out / 'bench.md'}, {out / 'bench.png'}")


# What a plan op family computes in the models people run, for the profile table (the kinds of
# qnnweb.compiled.op_family; convolutions are named by window and stride).
FAMILY_ROLES = {
    "layer_norm": "LayerNorm",
    "batch_matmul": "attention: Q·Kᵀ and weights·V (activation x activation MatMul)",
    "softmax": "softmax (attention's weights; YOLO's box distribution)",
    "lut": "one-input functions as 256-entry tables: GELU and SiLU whole (their steps composed), LayerNorm's rsqrt "
           "(TFLite)",
    "lut2d": "two-input float arithmetic as tables (TFLite LayerNorm's squared difference; YOLO's box decoding)",
    "mul": "element-wise products: attention's q and k scales, gates of two tensors",
    "add": "element-wise sums: residuals, biases",
    "copy_strided": "transposes and strided slices: attention heads, patches",
    "copy_slice": "concatenations",
    "conv2d 1x1 s1": "1x1 convolutions and Linear layers (MatMul with constant weights)",
}


def profile_table(recs) -> list[str]:
    """qnnweb's time per op family (Model.profile_by_family: each op timed alone, median of 5), one
    column pair per variant and thread count, so the next bottleneck shows in every run; each family
    with what it computes (FAMILY_ROLES), so attention, LayerNorm and GELU can be found by name."""
    if not recs:
        return []
    families = list(recs[0]["profile"])
    head = " | ".join(f"{r.get('variant')} {r['threads']}t ms | GMAC/s" for r in recs)
    lines = ["qnnweb per op family (each op run alone, median of 5; GMAC/s for convolutions and batch_matmul):", "",
             f"| op family | what | ops | {head} |", "| --- | --- | ---: |" + " ---: | ---: |" * len(recs)]
    for fam in families:
        cells = []
        for r in recs:
            p = r["profile"].get(fam) or {}
            cells += [fmt(p.get("ms"), 2), fmt(p.get("gmac_per_s"), 1) if p.get("gmac_per_s") else "–"]
        lines.append(f"| {fam} | {FAMILY_ROLES.get(fam, '')} | {recs[0]['profile'][fam]['ops']} | "
                     + " | ".join(cells) + " |")
    totals = [fmt(sum(p["ms"] for p in r["profile"].values()), 2) for r in recs]
    lines.append("| total | | | " + " | ".join(f"{t} | " for t in totals) + "|")
    lines.append("")
    return lines


def threads_table(recs) -> list[str]:
    """Each engine's gain from more threads: its 1-thread median over its N-thread median, and the median
    over rounds of the same ratio taken round by round (both runs in one round, so a slow phase of the
    machine hits both)."""
    recs = [r for r in recs if r.get("speedup_over_1_thread")]
    if not recs:
        return []
    lines = ["More threads, against the same engine on 1 thread:", "",
             "| engine | variant | threads | 1-thread median / this median | per round (median) |",
             "| --- | --- | ---: | ---: | ---: |"]
    for r in recs:
        lines.append(f"| {ENGINE_LABELS.get(r['engine'], r['engine'])} | {r.get('variant') or ''} | {r['threads']} | "
                     f"x{fmt(r['speedup_over_1_thread'], 2)} | x{fmt(r.get('speedup_over_1_thread_per_round'), 2)} |")
    lines.append("")
    return lines


def markdown(records, meta, models) -> str:
    v = meta["versions"]
    mach = meta["machine"]
    lines = [
        f"Benchmark of {meta['date']} (`tools/bench/bench.py`, {meta['args']['runs']} interleaved rounds after "
        f"{meta['args']['warmup']} warm-up runs per engine"
        + (f"; {meta['args']['pause_ms']:g} ms idle before each inference" if meta["args"].get("pause_ms") else "") + ").",
        "",
        f"- Machine: {mach['cpu']}, {mach['cores']} cores; {mach['os']}"
        + (" (AVX-VNNI)" if mach.get("avx_vnni") else "") + (" (AVX512-VNNI)" if mach.get("avx512_vnni") else ""),
        f"- Browser: {meta.get('browser')}",
        f"- Versions: qnnweb {v['qnnweb']} in Pyodide {v['pyodide']}; @litertjs/core {v['@litertjs/core']}; "
        f"onnxruntime-web {v['onnxruntime-web']}; native onnxruntime {v['onnxruntime (native)']}, "
        f"ai-edge-litert {v['ai-edge-litert (native)']}; Playwright {v['playwright']}",
        "",
        "Times in ms. TTFI: navigation to the first result, cold (new browser context, empty HTTP cache) and warm "
        "(reload); *first visit MB*: what the cold visit downloaded before its first result (transfer sizes). "
        "Both qnnweb engines load the server's compiled model (`.qnn`): *qnnweb (Pyodide)* in Python (Pyodide "
        "with its bytecode stdlib, the wheels, `qnnweb.load_async`), *qnnweb.js* in the JavaScript runtime, no "
        "Python. Latency: one inference as JavaScript sees it (qnnweb (Pyodide): the Python `model.run` call "
        "through Pyodide), median / min / p90; *kernels*: qnnweb's time inside `qnn_run` alone. Ratio: the median over "
        "rounds of (engine time / qnnweb time in the same round), reference qnnweb `relaxed` on as many threads "
        "(qnnweb.js's when the run has no Pyodide engine); for LiteRT.js's *compat* build (SIMD128 only, what "
        "browsers without relaxed SIMD get) qnnweb `simd128` on 1 thread; below 1 is faster than qnnweb.",
        "",
    ]
    for m in models:
        recs = [r for r in records if r["model"] == m.given]
        lines.append(f"### {m.given}")
        lines.append("")
        if m.twin_error and m.format == "onnx":
            lines.append(f"TFLite twin: {m.twin_error}")
            lines.append("")
        elif m.twin_check:
            tc = m.twin_check
            lines.append(f"TFLite twin for LiteRT.js: `{Path(tc['twin']).name}` ({m.twin_origin}); native "
                         f"ai-edge-litert vs native onnxruntime on {PHOTO.name}: " + ("same top-5" if tc.get("agree") else
                                                             "**different** (" + (tc.get("error") or
                                                             f"onnxruntime {tc.get('onnxruntime_top5')}, "
                                                             f"ai-edge-litert {tc.get('litert_top5')}") + ")"))
            lines.append("")
        lines.append("| engine | variant / wasm | threads | TTFI cold | TTFI warm | first visit MB | median | min | p90 "
                     "| kernels | ratio | top-1 | top-5 = qnnweb |")
        lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
        for r in recs:
            label = ENGINE_LABELS.get(r["engine"], r["engine"])
            if "error" in r:
                lines.append(f"| {label} | {r.get('variant') or ''} | {r['threads']} | "
                             f"error: {r['error'][:200].replace('|', '/')} ||||||||||")
                continue
            if r["engine"] in QNNWEB_ENGINES:
                k = r.get("kernels") or {}
                what = f"{r.get('variant')} ({k.get('gemm', '?')})"
                if r.get("pyodide_snapshot"):
                    what += ", Pyodide from its snapshot"
            elif r.get("wasm"):
                what = ", ".join(Path(w).name for w in r["wasm"])
            else:
                what = "native"
            top1 = r["top5"][0]
            lines.append(
                f"| {label} | {what} | {r['threads']} | {fmt(r.get('ttfi_ms'), 0)} | {fmt(r.get('ttfi_warm_ms'), 0)} | "
                f"{fmt(r['first_visit_bytes'] / 1e6 if r.get('first_visit_bytes') else None, 2)} | "
                f"{fmt(r['median_ms'], 2)} | {fmt(r['min_ms'], 2)} | {fmt(r['p90_ms'], 2)} | "
                f"{fmt(r.get('kernel_median_ms'), 2)} | {fmt(r.get('ratio_to_qnnweb_median'), 2)} | "
                f"{m.label(top1[0])} ({top1[1]:.3f}) | {'yes' if r.get('top5_agrees_with_qnnweb') else 'NO'} |")
        lines.append("")
        lines += threads_table(recs)
        lines += profile_table([r for r in recs if r.get("profile")])
    lines.append(f"Reproduce: `./build.sh bench {' '.join(_cli(meta['args']))}`")
    lines.append("")
    return "\n".join(lines)


def _cli(a) -> list[str]:
    parts = []
    for m in a.get("model") or []:
        parts += ["--model", m]
    if a.get("modern"):
        parts.append("--modern")
    if a.get("quick"):
        parts.append("--quick")
    for name, default in (("engines", ENGINES), ("variants", VARIANTS)):
        if a.get(name) and list(a[name]) != list(default):
            parts += [f"--{name}", ",".join(a[name])]
    if a.get("threads") and list(a["threads"]) != [1]:
        parts += ["--threads", ",".join(map(str, a["threads"]))]
    parts += ["--runs", str(a["runs"]), "--warmup", str(a["warmup"])]
    if a.get("native"):
        parts.append("--native")
    if a.get("pause_ms"):
        parts += ["--pause-ms", f"{a['pause_ms']:g}"]
    return parts


def chart(path: Path, records, models) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(models), 1, figsize=(9, 1.2 + 0.45 * max(
        len([r for r in records if r["model"] == m.given and "error" not in r]) for m in models) * len(models) + 0.6),
        squeeze=False)
    colors = {"qnnweb": "#2b6cb0", "qnnweb-js": "#553c9a", "litert": "#dd6b20", "ort": "#38a169", "native-onnxruntime": "#718096",
              "native-litert": "#a0aec0"}
    for ax, m in zip(axes[:, 0], models):
        recs = [r for r in records if r["model"] == m.given and "error" not in r]
        names = [ENGINE_LABELS.get(r["engine"], r["engine"]) + (f" {r['variant']}" if r["engine"] in QNNWEB_ENGINES else "")
                 + (f" ({r['threads']}t)" if r["threads"] != 1 else "") for r in recs]
        med = [r["median_ms"] for r in recs]
        lo = [r["median_ms"] - r["min_ms"] for r in recs]
        hi = [r["p90_ms"] - r["median_ms"] for r in recs]
        y = list(range(len(recs)))[::-1]
        ax.barh(y, med, xerr=[lo, hi], color=[colors.get(r["engine"], "#999") for r in recs], capsize=3)
        for yi, r in zip(y, recs):
            if r.get("kernel_median_ms"):
                ax.plot([r["kernel_median_ms"]], [yi], "k|", markersize=14)
            ax.text(r["p90_ms"], yi, f"  {r['median_ms']:.1f}", va="center", fontsize=8)
        if med and max(r["p90_ms"] for r in recs) / max(min(med), 1e-3) > 20:
            ax.set_xscale("log")
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        ax.set_title(f"{m.name}: latency (median; bars min..p90; | = qnnweb kernels only)", fontsize=9)
        ax.set_xlabel("ms (lower is better)" + (", log scale" if ax.get_xscale() == "log" else ""), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
