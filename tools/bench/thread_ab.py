"""Threads in Chromium's V8: qnnweb.js at 1 and 2 threads, back to back, for kernel builds side by side.

    .venv/bin/python tools/bench/thread_ab.py MODEL [BUILD_DIR ...] [--rounds 10] [--ops 20]

Each BUILD_DIR holds a build's modules (wasm_kernels/build.sh DIR; default: the package's own,
py_frontend/qnnweb/wasm). The server (as `./build.sh bench` starts it) compiles MODEL once; one page
per build and thread count loads it with that build's `kernelsURL` (relaxed variant), and the pages
run `--batch` inferences each in turn, round after round, so slow phases of the machine hit every
page alike. Printed per build: the median time inside `qnn_run` at 1 and 2 threads and their ratio,
and each build's 2-thread median over the first build's.

`--ops N`: the first build's ops one by one (`qnn_run_ops`, in plan order after a full inference, so
each reads what a real run gives it) at 1 and 2 threads, and the N ops that lose most against half
their 1-thread time (trimmed means: the page's timer has 5 us steps). `tools/bench/bench.py` measures
engines against each other; `tools/bench/kernel_ab.py`, kernels on one thread.
"""

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import urllib.parse
import urllib.request
from pathlib import Path

import qnnweb

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)
from bench.benchmark.common import CHROMIUM, CHROMIUM_ARGS, LOAD_TIMEOUT_MS, REPO  # noqa: E402
from bench.benchmark.environment import start_server  # noqa: E402

# One model loaded twice (1 and 2 threads) from the page's own origin; per round each op timed alone.
OPS = """async ({model, kernels, rounds}) => {
  const qnnweb = await import('/static/qnnweb.js');
  const body = await (await fetch(model)).arrayBuffer();
  const kernelsURL = new URL(kernels, location.href).href;
  const models = [];
  for (const threads of [1, 2]) {
    models.push(await qnnweb.load(new Response(body.slice(0)), {variant: 'relaxed', threads, kernelsURL}));
  }
  const input = models[0].inputs[0];
  const Type = {float32: Float32Array, int8: Int8Array, uint8: Uint8Array}[input.dtype];
  const x = new Type(input.size).map((_, i) => (input.dtype === 'float32' ? (i % 251) / 251 : i % 100));
  for (const m of models) for (let i = 0; i < 20; i++) m.run([x]);
  const times = models.map(() => []);
  for (let r = 0; r < rounds; r++) {
    models.forEach((m, k) => {
      m.run([x]);  // then the input again: ops write over the arena where it was
      new Uint8Array(m.exports.memory.buffer, m.arena + input.offset, input.nbytes).set(new Uint8Array(x.buffer));
      const stamps = [performance.now()];
      for (let i = 0; m.exports.qnn_run_ops(m.plan, i, 1) === 0; i++) stamps.push(performance.now());
      times[k].push(stamps);
    });
  }
  return {threads: models.map((m) => m.info().threads), times};
}"""


def trimmed_mean(values):
    values = sorted(values)
    cut = len(values) // 5
    return statistics.mean(values[cut:len(values) - cut])


def page(browser, base, compiled_url, kernels, threads):
    query = {"engine": "qnnweb-js", "model": compiled_url, "threads": str(threads), "kernels": kernels,
             "variant": "relaxed", "warmup": "20"}
    p = browser.new_context().new_page()
    p.goto(f"{base}/static/bench/index.html?{urllib.parse.urlencode(query)}")
    p.wait_for_function("window.benchResult && window.benchResult.state !== 'loading'", timeout=LOAD_TIMEOUT_MS)
    result = p.evaluate("window.benchResult")
    if result["state"] != "ready" or result["info"]["threads"] != threads:
        raise SystemExit(f"{kernels} at {threads} threads: {result.get('error') or result['info']}")
    return p


def main(argv=None):
    """Prints the comparison; returns {"medians": {(build index, threads): ms}, "ops": [1-thread ms per op,
    2-thread ms per op] or None, "threads": the thread counts the op pages ran}."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model")
    parser.add_argument("builds", nargs="*", default=[str(REPO / "py_frontend" / "qnnweb" / "wasm")])
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--batch", type=int, default=40, help="inferences per page per round")
    parser.add_argument("--ops", type=int, default=0, metavar="N")
    args = parser.parse_args(argv)
    from playwright.sync_api import sync_playwright

    serve = Path(tempfile.mkdtemp(prefix="qnnweb-thread-ab-"))
    (serve / "models").mkdir()
    for i, build in enumerate(args.builds):  # served at /samples/b<i>/
        shutil.copytree(build, serve / "inputs" / f"b{i}")
    name = Path(args.model).name
    shutil.copy(args.model, serve / "models" / name)
    server, thread, base = start_server(serve)
    try:
        with urllib.request.urlopen(f"{base}/api/models/{name}") as r:
            compiled_url = json.loads(r.read())["compiled_url"]
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            pages = {(i, t): page(browser, base, compiled_url, f"/samples/b{i}/", t)
                     for i in range(len(args.builds)) for t in (1, 2)}
            times = {key: [] for key in pages}
            for _ in range(args.rounds):
                for key, p in pages.items():
                    times[key] += p.evaluate(f"window.bench.run({args.batch})")["kernel_ms"]
            ops = None
            if args.ops:
                for p in pages.values():
                    p.close()
                p = browser.new_context().new_page()
                p.goto(f"{base}/static/bench/index.html?engine=none")
                ops = p.evaluate(OPS, {"model": compiled_url, "kernels": "/samples/b0/", "rounds": 41})
            browser.close()
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        shutil.rmtree(serve, ignore_errors=True)

    median = {key: statistics.median(v) for key, v in times.items()}
    for i, build in enumerate(args.builds):
        one, two = median[i, 1], median[i, 2]
        print(f"{build:40s} 1 thread {one:7.2f} ms  2 threads {two:7.2f} ms  x{one / two:.3f}"
              f"  2 threads / first build's x{two / median[0, 2]:.3f}")
    result = {"medians": median, "ops": None, "threads": None}
    if ops:
        rows = [[[b - a for a, b in zip(stamps, stamps[1:])] for stamps in runs] for runs in ops["times"]]
        count = min(len(r) for runs in rows for r in runs)
        one, two = ([trimmed_mean([r[i] for r in runs]) for i in range(count)] for runs in rows)
        result.update(ops=[one, two], threads=ops["threads"])
        print(f"ops one by one ({count}, threads {ops['threads']}): {sum(one):.2f} / {sum(two):.2f} ms, "
              f"x{sum(one) / sum(two):.3f}; lost against half the 1-thread time: {sum(two) - sum(one) / 2:.2f} ms")
        steps = qnnweb.load(args.model, "simd128")._steps
        for i in sorted(range(count), key=lambda i: one[i] / 2 - two[i])[:args.ops]:
            label = f"{steps[i].family} {list(steps[i].output_shape)}" if i < len(steps) else "?"
            print(f"  {i:3d} {label:40s} {one[i]:7.3f} {two[i]:7.3f} ms  x{one[i] / two[i]:.2f}"
                  f"  lost {1000 * (two[i] - one[i] / 2):4.0f} us")
    return result


if __name__ == "__main__":
    main()
