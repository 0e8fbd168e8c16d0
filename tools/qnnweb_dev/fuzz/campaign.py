"""The fuzzer's driver: mutants go to worker processes (spawned, so a crash, a hang or a runaway
allocation kills only a worker), each loads its mutant with two kernel variants and, if it loads,
runs it once on zeros. Outcomes:

- ``ok``: loaded and ran; ``rejected``: a ``qnnweb.ModelError`` (with a readable message);
- failures: ``escape`` (any other exception, ``ValueError`` from Python itself included), ``trap``
  (a wasm trap), ``crash`` (the worker died), ``hang`` (over the time limit), ``memory`` (the
  worker's peak RSS grew far beyond the file's size).

Used by tests/campaigns/test_fuzz.py (a bounded sample) and tools/campaigns/fuzz.py (campaigns).
"""

import collections
import hashlib
import json
import multiprocessing
import os
import sys
import time
import traceback
from multiprocessing.connection import wait
from pathlib import Path

from .mutators import mutants

REPO = Path(__file__).resolve().parents[3]
SEEDS_DIR = Path(__file__).resolve().parent / "seeds"
FAILURES = ("escape", "trap", "crash", "hang", "memory")
VARIANTS = ("scalar", "relaxed")
HARD_RSS_BYTES = 3 << 30    # the parent kills a worker above this (it would take the machine down)


RUN_ARENA_LIMIT = 256 << 20   # a loaded mutant with a larger arena is not run (it would only touch memory)


def memory_limit(size, planned=0):
    """Peak RSS growth a mutant of `size` bytes may cause: a small multiple of its file (weights packed
    once per variant) plus wasmtime's own instance, plus what the loaded plan itself says it needs
    (``planned``: arena + packed weights; a large arena for a small file is legitimate, e.g. a small
    convolution on a large image, as long as it was planned and not allocated by accident)."""
    return (192 << 20) + 24 * size + 3 * planned


def load_seeds(names=None, demo=True):
    """{name: (format, bytes)}: the committed small seeds, plus (``demo``) the demo models in
    data/models that exist (visual_wake_words.tflite, image_classification.tflite, *.onnx)."""
    seeds = {}
    paths = sorted(SEEDS_DIR.glob("*.tflite")) + sorted(SEEDS_DIR.glob("*.onnx"))
    if demo:
        models = REPO / "data" / "models"
        paths += sorted(models.glob("*.tflite")) + sorted(models.glob("*.onnx"))
    for p in paths:
        if names is None or p.stem in names or p.name in names:
            seeds[p.name] = (p.suffix[1:], p.read_bytes())
    return seeds


# ------------------------------------------------------------------------------------------ worker

def _status_kb(field):
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field):
                return int(line.split()[1])
    return 0


def _reset_peak():
    try:
        with open("/proc/self/clear_refs", "w") as f:
            f.write("5")
        return True
    except OSError:
        return False


def _place(tb):
    """Where an exception was raised: the innermost frame in qnnweb (else the innermost at all)."""
    frames = traceback.extract_tb(tb)
    ours = [f for f in frames if f"{os.sep}qnnweb{os.sep}" in f.filename] or frames
    f = ours[-1]
    name = f.filename.split(f"{os.sep}qnnweb{os.sep}", 1)[-1]
    return f"{name}:{f.lineno} {f.name}"


def _readable(message):
    return bool(message.strip()) and len(message) < 20000


def run_mutant(data):
    """(outcome, place, detail, planned bytes) of one mutant, in this process."""
    planned = [0]
    outcome = _run_mutant(data, planned)
    return outcome + (planned[0],)


def _run_mutant(data, planned):
    import qnnweb

    try:
        import wasmtime
        trap_types = (wasmtime.Trap,)
    except ImportError:  # Pyodide
        trap_types = ()
    outcome = ("rejected", "", "")
    for variant in VARIANTS:
        stage = "load"
        try:
            model = qnnweb.load(data, variant=variant)
            planned[0] = max(planned[0], model.arena_bytes + model.weight_bytes)
            stage = "run"
            if model.arena_bytes <= RUN_ARENA_LIMIT:
                model.run(*[bytes(info.nbytes) for info in model.inputs])
            outcome = ("ok", "", "")
        except qnnweb.ModelError as e:
            # refused by the kernels after earlier ops' records were added: what the plan asked for so far
            planned[0] = max(planned[0], getattr(e, "planned_bytes", 0))
            if not _readable(str(e)):
                return "escape", f"unreadable {type(e).__name__}", repr(str(e)[:200])
            if outcome[0] != "ok":
                outcome = ("rejected", "", f"{stage}: {str(e).splitlines()[0][:200]}")
        except trap_types as e:
            return "trap", f"{stage} {_place(e.__traceback__)}", traceback.format_exc()
        except MemoryError as e:
            return "escape", f"MemoryError {_place(e.__traceback__)}", traceback.format_exc()
        except Exception as e:  # noqa: BLE001  (the fuzzer's whole point: report any other exception)
            return "escape", f"{type(e).__name__} {_place(e.__traceback__)}", traceback.format_exc()
        finally:
            model = None
    return outcome


def worker_main(conn):
    sys.setrecursionlimit(10000)
    can_measure = _reset_peak()
    while True:
        try:
            job = conn.recv()
        except EOFError:
            return
        if job is None:
            return
        case, data = job
        before = _status_kb("VmRSS:")
        if can_measure:
            _reset_peak()
        start = time.perf_counter()
        outcome, place, detail, planned = run_mutant(data)
        seconds = time.perf_counter() - start
        grown = (_status_kb("VmHWM:") - before) * 1024 if can_measure else 0
        if outcome not in FAILURES and grown > memory_limit(len(data), planned):
            outcome, place, detail = "memory", f"peak RSS +{grown >> 20} MiB", f"peak RSS grew by {grown} bytes"
        conn.send((case, outcome, place, detail, seconds, grown))


# ------------------------------------------------------------------------------------------ driver

class _Worker:
    def __init__(self, ctx):
        self.conn, child = ctx.Pipe()
        self.process = ctx.Process(target=worker_main, args=(child,), daemon=True)
        self.process.start()
        child.close()
        self.job = None
        self.started = 0.0

    def rss(self):
        try:
            with open(f"/proc/{self.process.pid}/status") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1]) * 1024
        except OSError:
            pass
        return 0

    def kill(self):
        self.process.kill()
        self.process.join(5)
        self.conn.close()


def _py_path():
    if not any(Path(p, "qnnweb").is_dir() for p in sys.path if p):
        sys.path.insert(0, str(REPO / "py_frontend"))


def campaign(cases, seed=0, workers=1, timeout=30.0, seeds=None, out_dir=None, progress=None, max_saved=10):
    """Runs `cases` mutants. Returns a summary: counts per outcome, failures per place, seconds.
    With `out_dir`, every failing mutant (up to `max_saved` per place) is saved there with its
    traceback and how it was made."""
    _py_path()
    seeds = seeds if seeds is not None else load_seeds()
    ctx = multiprocessing.get_context("spawn")
    pool = [_Worker(ctx) for _ in range(workers)]
    counts = collections.Counter()
    places = collections.defaultdict(lambda: {"count": 0, "outcome": "", "examples": []})
    pending = {}
    jobs = mutants(seeds, cases, seed)
    start = time.time()
    done = 0
    slowest = (0.0, None)

    def record(case, outcome, place, detail, seconds=0.0):
        nonlocal done, slowest
        done += 1
        counts[outcome] += 1
        name, what, data = pending.pop(case)
        if seconds > slowest[0]:
            slowest = (seconds, f"case {case} ({name}: {what})")
        if outcome in FAILURES:
            entry = places[place]
            entry["count"] += 1
            entry["outcome"] = outcome
            if len(entry["examples"]) < 3:
                entry["examples"].append(f"case {case}: {name}: {what}")
            if out_dir is not None and entry["count"] <= max_saved:
                out = Path(out_dir)
                out.mkdir(parents=True, exist_ok=True)
                tag = hashlib.sha1(place.encode()).hexdigest()[:8]
                stem = out / f"{outcome}-{tag}-case{case}"
                stem.with_suffix("." + seeds[name][0]).write_bytes(data)
                stem.with_suffix(".txt").write_text(
                    f"seed {seed}, case {case}\nseed model: {name}\nmutation: {what}\noutcome: {outcome}\n"
                    f"place: {place}\n\n{detail}\n")
        if progress is not None:
            progress(done, counts)

    try:
        while True:
            for w in pool:
                if w.job is None:
                    job = next(jobs, None)
                    if job is None:
                        continue
                    case, name, what, data = job
                    pending[case] = (name, what, data)
                    w.job, w.started = case, time.time()
                    w.conn.send((case, data))
            busy = [w for w in pool if w.job is not None]
            if not busy:
                break
            ready = wait([w.conn for w in busy], timeout=0.05)
            now = time.time()
            for i, w in enumerate(pool):
                if w.job is None:
                    continue
                if w.conn in ready:
                    try:
                        case, outcome, place, detail, seconds, _ = w.conn.recv()
                    except (EOFError, OSError):
                        code = w.process.exitcode if w.process.join(5) is None else None
                        record(w.job, "crash", f"worker died (exit code {code})", "")
                        w.kill()
                        pool[i] = _Worker(ctx)
                        continue
                    w.job = None
                    record(case, outcome, place, detail, seconds)
                elif now - w.started > timeout:
                    record(w.job, "hang", f"over {timeout:.0f} s", "")
                    w.kill()
                    pool[i] = _Worker(ctx)
                elif w.rss() > HARD_RSS_BYTES:
                    record(w.job, "memory", f"RSS over {HARD_RSS_BYTES >> 20} MiB", "")
                    w.kill()
                    pool[i] = _Worker(ctx)
    finally:
        for w in pool:
            try:
                w.conn.send(None)
            except OSError:
                pass
            w.process.join(2)
            if w.process.is_alive():
                w.kill()
    summary = {"cases": cases, "seed": seed, "seconds": round(time.time() - start, 1), "counts": dict(counts),
               "failures": sum(counts[o] for o in FAILURES), "slowest": slowest[1], "slowest_seconds": round(slowest[0], 2),
               "places": {p: dict(v) for p, v in sorted(places.items(), key=lambda kv: -kv[1]["count"])}}
    if out_dir is not None:
        Path(out_dir).mkdir(parents=True, exist_ok=True)
        (Path(out_dir) / "summary.json").write_text(json.dumps(summary, indent=1))
    return summary


def format_summary(summary):
    lines = [f"{summary['cases']} mutants (seed {summary['seed']}) in {summary['seconds']} s: "
             + ", ".join(f"{k} {v}" for k, v in sorted(summary["counts"].items()))]
    for place, entry in summary["places"].items():
        lines.append(f"  {entry['count']:5d} {entry['outcome']}: {place}")
        for example in entry["examples"][:1]:
            lines.append(f"          e.g. {example}")
    return "\n".join(lines)
