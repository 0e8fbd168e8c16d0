"""Interleaved A/B of kernel modules on one model, in headless Chromium's V8 (and wasmtime).

    .venv/bin/python tools/bench/kernel_ab.py MODEL VARIANT A.wasm B.wasm [--rounds 40]

Each module is loaded by the Python frontend in CPython (wasmtime) through a host that records
every memory write and export call; the browser then replays each record on a fresh instance of its
module (checking every call returns what it returned in wasmtime) and times ``qnn_run`` alternately
on the modules, so machine noise hits both alike. Built to compare kernels in the engine users run,
without a wheel per candidate. Modules whose kernel choice depends on an engine probe (relaxed) can
replay differently: the replay then stops at the first call whose result differs.
"""

import argparse
import base64
import statistics
import sys
from pathlib import Path

import numpy as np

import qnnweb
from qnnweb.compiled import CompiledModel, is_compiled
from qnnweb.host.wasmtime_host import WasmtimeHost
from qnnweb.model import Model

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)
from bench.benchmark.common import CHROMIUM, CHROMIUM_ARGS  # noqa: E402


class RecordingHost(WasmtimeHost):
    log = None

    def __init__(self, wasm_bytes, threads=1):
        super().__init__(wasm_bytes, threads)
        RecordingHost.log = self.log = []

    def call(self, name, *args):
        result = super().call(name, *args)
        self.log.append(["c", name, list(args), result])
        return result

    def write(self, address, data):
        super().write(address, data)
        self.log.append(["w", address, base64.b64encode(bytes(data)).decode()])


def record(model_path, variant, wasm):
    data = Path(wasm).read_bytes()
    source = Path(model_path).read_bytes()   # a TFLite, ONNX or .qnn model
    compiled = CompiledModel.from_bytes(source if is_compiled(source) else qnnweb.compile(source))
    model = Model(compiled, variant, host=RecordingHost, kernel_bytes=lambda variant, threaded=False: data)
    info = model.inputs[0]
    rng = np.random.default_rng(0)
    x = (rng.random(info.shape, dtype=np.float32) if info.dtype == "float32"
         else rng.integers(-128 if info.dtype == "int8" else 0, 128 if info.dtype == "int8" else 256,
                           info.shape).astype(info.dtype))
    model.run(x)
    log = model._host.log
    run = log.pop()            # the qnn_run call: replayed by the timing loop
    assert run[1] == "qnn_run"
    # Written again before every timed run: ops write into the arena where the input was (a float
    # input overwritten by int8 bytes reads as denormals, 3x slower to quantize).
    inputs = [entry[1:] for entry in log if entry[0] == "w" and entry[1] == model._arena + info.offset][-1:]
    assert inputs, "the input write is not in the log"
    output = model.outputs[0]
    return {"wasm": base64.b64encode(data).decode(), "log": log, "plan": run[2][0], "inputs": inputs,
            "ops": [[step.family, step.macs, f"{step.output_shape} K={step.details.get('input_channels', '-')}"]
                    for step in model._steps],
            "output": [model._arena + output.offset, output.nbytes], "kernel": model.kernels["gemm"]}


REPLAY = """
async ({modules, rounds, warmup}) => {
  const bytes = (b64) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
  const runs = [];
  for (const m of modules) {
    const {instance} = await WebAssembly.instantiate(bytes(m.wasm), {});
    const e = instance.exports;
    for (const [kind, a, b, c] of m.log) {
      if (kind === "w") new Uint8Array(e.memory.buffer).set(bytes(b), a);
      else {
        const got = e[a](...b);
        if (got !== c) throw new Error(`replay: ${a}(${b}) returned ${got} in V8, ${c} in wasmtime`);
      }
    }
    const inputs = m.inputs.map(([address, b64]) => [address, bytes(b64)]);
    const write = () => { for (const [address, data] of inputs) new Uint8Array(e.memory.buffer).set(data, address); };
    runs.push({instance: e, write, run: () => { write(); const t = performance.now(); e.qnn_run(m.plan); return performance.now() - t; },
               output: () => Array.from(new Uint8Array(e.memory.buffer, ...m.output))});
  }
  for (const r of runs) for (let i = 0; i < warmup; i++) r.run();
  const times = runs.map(() => []);
  for (let i = 0; i < rounds; i++) runs.forEach((r, k) => times[k].push(r.run()));
  // Per op: inferences op by op in plan order (each op reads what a real run gives it), the modules
  // interleaved inference by inference; the median per op, summed by op kind. The page is
  // cross-origin isolated, so performance.now() resolves microseconds.
  const count = modules[0].ops.length;
  const t = runs.map(() => Array.from({length: count}, () => []));
  for (let j = 0; j < Math.max(9, rounds >> 1); j++) {
    runs.forEach((r, k) => {
      r.write();
      for (let i = 0; i < count; i++) {
        const s = performance.now();
        r.instance.qnn_run_ops(modules[k].plan, i, 1);
        t[k][i].push(performance.now() - s);
      }
    });
  }
  const median = (v) => { const w = [...v].sort((x, y) => x - y); return w[w.length >> 1]; };
  const perOp = t.map((m) => m.map(median));
  const ops = runs.map((_, k) => {
    const sums = {};
    perOp[k].forEach((ms, i) => { const kind = modules[k].ops[i][0]; sums[kind] = (sums[kind] || 0) + ms; });
    return sums;
  });
  return {times, ops, perOp, outputs: runs.map((r) => r.output().join(","))};
}
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("variant")
    p.add_argument("modules", nargs="+")
    p.add_argument("--rounds", type=int, default=40)
    p.add_argument("--warmup", type=int, default=20, help="untimed runs per module first (tier-up)")
    p.add_argument("--ops", type=int, default=0, metavar="N",
                   help="also list the N slowest ops of the first module (ms and GMAC/s per module)")
    args = p.parse_args()
    from playwright.sync_api import sync_playwright

    modules = [record(args.model, args.variant, m) for m in args.modules]
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
        page = browser.new_page()
        # An isolated page (COOP + COEP) for a microsecond timer; localhost is a secure context.
        page.route("http://localhost:9/", lambda route: route.fulfill(
            body="<!doctype html><title>kernel_ab</title>", content_type="text/html",
            headers={"Cross-Origin-Opener-Policy": "same-origin", "Cross-Origin-Embedder-Policy": "require-corp"}))
        page.goto("http://localhost:9/")
        assert page.evaluate("crossOriginIsolated"), "the kernel_ab page is not cross-origin isolated"
        result = page.evaluate(REPLAY, {"modules": modules, "rounds": args.rounds, "warmup": args.warmup})
        browser.close()
    same = len(set(result["outputs"])) == 1
    base = statistics.median(result["times"][0])
    for path, m, t in zip(args.modules, modules, result["times"]):
        median = statistics.median(t)
        print(f"{path:44s} {m['kernel']:40s} median {median:7.2f} ms  x{median / base:.3f}")
    print("outputs identical across modules:", same)
    macs = {}
    for kind, n, _ in modules[0]["ops"]:
        macs[kind] = macs.get(kind, 0) + n
    kinds = sorted(result["ops"][0], key=lambda k: -result["ops"][0][k])
    print("per op kind: ms (sum of per-op medians) and GMAC/s, per module:")
    for kind in kinds:
        cells = []
        for ops in result["ops"]:
            ms = ops.get(kind, 0)
            rate = f"{macs[kind] / ms / 1e6:5.1f}" if macs[kind] and ms else "    -"
            cells.append(f"{ms:8.2f} {rate}")
        print(f"  {kind:26s}" + "".join(cells))
    print(f"  {'total':26s}" + "".join(f"{sum(ops.values()):8.2f}      " for ops in result["ops"]))
    if args.ops:
        print(f"the {args.ops} slowest ops of the first module: index, op, MACs, then ms and GMAC/s per module:")
        slowest = sorted(range(len(modules[0]["ops"])), key=lambda i: -result["perOp"][0][i])[:args.ops]
        for i in slowest:
            kind, n, shape = modules[0]["ops"][i]
            cells = "".join(f"{t[i]:8.3f} {n / t[i] / 1e6 if n and t[i] else 0:5.1f}" for t in result["perOp"])
            print(f"  {i:4d} {kind:22s} {shape:28s} {n:10d}{cells}")


if __name__ == "__main__":
    main()
