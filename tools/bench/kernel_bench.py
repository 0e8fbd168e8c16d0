"""Per-kernel micro-benchmark of qnnweb's int8 kernels in CPython through wasmtime (no browser).

``./build.sh kernel-bench`` (or ``./build.sh bench --kernels``). Each case is a one-op graph with
the shape of a real layer of MobileNetV2 or EfficientNet-Lite0 (224x224 input): the 3x3 stride-2
first convolution, 1x1 convolutions (expand and project), depthwise 3x3 and 5x5 (stride 1 and 2),
ADD, global average pooling (MEAN over height and width) and the classifier (FULLY_CONNECTED). It
is lowered and planned as a model would be (``qnnweb.model.Model.from_graph(graph, variant)``) and timed with
``model.last_run_ms`` (the time inside ``qnn_run``), median of ``--repeats`` runs after warm-up,
per variant. GMAC/s counts multiply-accumulates for convolutions and FULLY_CONNECTED; for ADD
and pooling the column is Gop/s (elements in, one op each).

Timings are wasmtime's (Cranelift) code, not V8's: use it to compare kernels and variants with
each other, and the browser benchmark (tools/bench/bench.py) for absolute numbers.

    ./build.sh kernel-bench [--variants relaxed,simd128,scalar] [--repeats 20] [--only dw] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np

import qnnweb
from qnnweb.graph import Graph, Op, Tensor
from qnnweb.model import Model

VARIANTS = ("relaxed", "simd128", "scalar")


class Builder:
    def __init__(self):
        self.tensors, self.ops, self.inputs, self.outputs = [], [], [], []

    def tensor(self, shape, dtype, scale=(), zero_point=(), data=None, qdim=0):
        i = len(self.tensors)
        self.tensors.append(Tensor(i, f"t{i}", tuple(shape), dtype, tuple(scale), tuple(zero_point), qdim, data))
        return i

    def input(self, shape, scale=0.05, zp=-3):
        i = self.tensor(shape, "int8", (scale,), (zp,))
        self.inputs.append(i)
        return i

    def output(self, shape, scale=0.1, zp=2):
        i = self.tensor(shape, "int8", (scale,), (zp,))
        self.outputs.append(i)
        return i

    def op(self, kind, inputs, outputs, **options):
        self.ops.append(Op(len(self.ops), kind, list(inputs), list(outputs), options))

    def graph(self):
        return Graph(self.tensors, self.ops, self.inputs, self.outputs)


def _out(size, k, s, pad):
    return (size + pad - k) // s + 1


def conv_case(h, w, cin, cout, k, stride, depthwise=False):
    """(graph builder, MACs, input arrays). 'SAME'-style padding as the models use."""
    rng = np.random.default_rng(0)
    pad_total = max(k - stride, 0) if stride > 1 else k - 1
    top, left = pad_total // 2, pad_total // 2
    bottom, right = pad_total - top, pad_total - left
    oh, ow = _out(h, k, stride, pad_total), _out(w, k, stride, pad_total)
    b = Builder()
    x = b.input((1, h, w, cin))
    cout = cin if depthwise else cout
    wscales = tuple(float(s) for s in rng.uniform(0.002, 0.01, cout))
    if depthwise:
        wdata = rng.integers(-127, 128, (1, k, k, cout), dtype=np.int8)
        wt = b.tensor(wdata.shape, "int8", wscales, (0,) * cout, wdata.tobytes(), qdim=3)
    else:
        wdata = rng.integers(-127, 128, (cout, k, k, cin), dtype=np.int8)
        wt = b.tensor(wdata.shape, "int8", wscales, (0,) * cout, wdata.tobytes(), qdim=0)
    bias = rng.integers(-2000, 2000, cout).astype(np.int32)
    bt = b.tensor((cout,), "int32", tuple(0.05 * s for s in wscales), (0,) * cout, bias.tobytes())
    y = b.output((1, oh, ow, cout))
    b.op("DEPTHWISE_CONV_2D" if depthwise else "CONV_2D", [x, wt, bt], [y], stride=(stride, stride),
         dilation=(1, 1), padding=[top, bottom, left, right], activation="RELU6",
         **({"depth_multiplier": 1} if depthwise else {}))
    macs = oh * ow * cout * k * k * (1 if depthwise else cin)
    xs = [rng.integers(-128, 128, (1, h, w, cin), dtype=np.int8)]
    return b, macs, xs


def add_case(h, w, c):
    rng = np.random.default_rng(1)
    b = Builder()
    a = b.input((1, h, w, c), 0.05, -3)
    bb = b.input((1, h, w, c), 0.07, 5)
    y = b.output((1, h, w, c))
    b.op("ADD", [a, bb], [y], activation="NONE")
    xs = [rng.integers(-128, 128, (1, h, w, c), dtype=np.int8) for _ in range(2)]
    return b, h * w * c, xs


def mean_case(h, w, c):
    rng = np.random.default_rng(2)
    b = Builder()
    x = b.input((1, h, w, c))
    axes = b.tensor((2,), "int32", data=np.array([1, 2], dtype=np.int32).tobytes())
    y = b.output((1, 1, 1, c))
    b.op("MEAN", [x, axes], [y], keep_dims=True)
    return b, h * w * c, [rng.integers(-128, 128, (1, h, w, c), dtype=np.int8)]


def fc_case(k, n):
    rng = np.random.default_rng(3)
    b = Builder()
    x = b.input((1, k))
    wscales = tuple(float(s) for s in rng.uniform(0.002, 0.01, n))
    wdata = rng.integers(-127, 128, (n, k), dtype=np.int8)
    wt = b.tensor(wdata.shape, "int8", wscales, (0,) * n, wdata.tobytes())
    bt = b.tensor((n,), "int32", tuple(0.05 * s for s in wscales), (0,) * n,
                  rng.integers(-2000, 2000, n).astype(np.int32).tobytes())
    y = b.output((1, n))
    b.op("FULLY_CONNECTED", [x, wt, bt], [y], activation="NONE", weights_format=0)
    return b, k * n, [rng.integers(-128, 128, (1, k), dtype=np.int8)]


# (name, model, builder function, arguments, unit)
CASES = [
    ("conv 3x3/2 224x224x3->32 (first)", "both", conv_case, (224, 224, 3, 32, 3, 2), "MAC"),
    ("dw 3x3/1 112x112x32", "MobileNetV2", conv_case, (112, 112, 32, 32, 3, 1, True), "MAC"),
    ("conv 1x1 112x112x32->16", "MobileNetV2", conv_case, (112, 112, 32, 16, 1, 1), "MAC"),
    ("conv 1x1 112x112x16->96", "MobileNetV2", conv_case, (112, 112, 16, 96, 1, 1), "MAC"),
    ("dw 3x3/2 112x112x96", "MobileNetV2", conv_case, (112, 112, 96, 96, 3, 2, True), "MAC"),
    ("conv 1x1 56x56x24->144", "MobileNetV2", conv_case, (56, 56, 24, 144, 1, 1), "MAC"),
    ("dw 3x3/1 56x56x144", "MobileNetV2", conv_case, (56, 56, 144, 144, 3, 1, True), "MAC"),
    ("add 56x56x24", "MobileNetV2", add_case, (56, 56, 24), "op"),
    ("conv 1x1 14x14x96->576", "MobileNetV2", conv_case, (14, 14, 96, 576, 1, 1), "MAC"),
    ("conv 1x1 7x7x320->1280", "both", conv_case, (7, 7, 320, 1280, 1, 1), "MAC"),
    ("dw 5x5/2 56x56x144", "EfficientNet-Lite0", conv_case, (56, 56, 144, 144, 5, 2, True), "MAC"),
    ("dw 5x5/1 28x28x240", "EfficientNet-Lite0", conv_case, (28, 28, 240, 240, 5, 1, True), "MAC"),
    ("conv 1x1 28x28x40->240", "EfficientNet-Lite0", conv_case, (28, 28, 40, 240, 1, 1), "MAC"),
    ("dw 5x5/1 14x14x672", "EfficientNet-Lite0", conv_case, (14, 14, 672, 672, 5, 1, True), "MAC"),
    ("add 28x28x40", "EfficientNet-Lite0", add_case, (28, 28, 40), "op"),
    ("global avg pool 7x7x1280", "both", mean_case, (7, 7, 1280), "op"),
    ("fc 1280->1000", "both", fc_case, (1280, 1000), "MAC"),
]


def bench_case(fn, fargs, variant, repeats, warmup):
    b, work, xs = fn(*fargs)
    model = Model.from_graph(b.graph(), variant)
    for _ in range(warmup):
        model.run(*xs)
    times = []
    for _ in range(repeats):
        model.run(*xs)
        times.append(model.last_run_ms)
    return work, statistics.median(times), min(times), model.kernels


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="./build.sh kernel-bench", description=__doc__.split("\n\n")[0])
    p.add_argument("--variants", default=",".join(VARIANTS))
    p.add_argument("--repeats", type=int, default=20, help="timed runs per case (median reported)")
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--only", default="", help="run only cases whose name contains this text")
    p.add_argument("--json", help="also write the rows as JSON to this file")
    args = p.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    from qnnweb.host import host_class

    supported = set(qnnweb.supported_variants(host_class()))
    rows = []
    t0 = time.monotonic()
    kernel_names = {}
    for name, model_name, fn, fargs, unit in CASES:
        if args.only and args.only not in name:
            continue
        row = {"case": name, "model": model_name, "unit": unit}
        for v in variants:
            if v not in supported:
                row[v] = None
                continue
            try:
                work, med, mn, kernels = bench_case(fn, fargs, v, args.repeats, args.warmup)
            except Exception as exc:
                row[v] = {"error": f"{type(exc).__name__}: {exc}"}
                continue
            kernel_names[v] = kernels
            row["work"] = work
            row[v] = {"median_ms": med, "min_ms": mn, "g_per_s": work / (med * 1e6) if med > 0 else None}
        rows.append(row)
        print(f"  {name}: " + ", ".join(
            f"{v} {row[v]['median_ms']:.3f} ms" if isinstance(row.get(v), dict) and "median_ms" in row[v]
            else f"{v} {row.get(v)}" for v in variants), file=sys.stderr, flush=True)

    head = "| case | model | M work | " + " | ".join(f"{v} ms | {v} G/s" for v in variants) + " |"
    print(f"\nqnnweb kernels through wasmtime {_version('wasmtime')} (median of {args.repeats} runs; "
          f"G/s = GMAC/s for conv and fc, Gop/s for add and pool)")
    for v, k in kernel_names.items():
        print(f"- {v}: gemm {k.get('gemm')}, dwconv {k.get('dwconv')}")
    print()
    print(head)
    print("| --- | --- | ---: | " + " | ".join("---: | ---:" for _ in variants) + " |")
    for row in rows:
        cells = []
        for v in variants:
            r = row.get(v)
            if isinstance(r, dict) and "median_ms" in r:
                cells.append(f"{r['median_ms']:.3f} | {r['g_per_s']:.2f}")
            elif isinstance(r, dict):
                cells.append(f"error: {r['error'][:60]} | ")
            else:
                cells.append("n/a | ")
        work = row.get("work")
        print(f"| {row['case']} | {row['model']} | {work / 1e6:.2f} | " if work else f"| {row['case']} | {row['model']} | – | ",
              end="")
        print(" | ".join(cells) + " |")
    print(f"\n({time.monotonic() - t0:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"variants": variants, "kernels": kernel_names, "rows": rows}, f, indent=1)
    return 0


def _version(pkg):
    try:
        import importlib.metadata

        return importlib.metadata.version(pkg)
    except Exception:
        return "?"


if __name__ == "__main__":
    sys.exit(main())
