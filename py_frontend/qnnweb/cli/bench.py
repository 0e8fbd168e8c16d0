"""``qnnweb bench MODEL``: whole inferences in this Python's WebAssembly engine (wasmtime in CPython),
after ``--warmup`` runs: the median and 90th percentile of ``--runs``."""

import math
import statistics
import time

from .options import add_model_run, model_with_inputs, positive_int


def add_parser(subparsers):
    parser = subparsers.add_parser("bench", help="time whole inferences of a model", description=__doc__)
    add_model_run(parser)
    parser.add_argument("--runs", type=positive_int, default=20, metavar="N", help="timed inferences (default 20)")
    parser.add_argument("--warmup", type=int, default=3, metavar="N", help="untimed inferences first (default 3)")
    parser.set_defaults(func=run)


def run(args):
    with model_with_inputs(args) as (model, inputs, origin, _):
        for _ in range(args.warmup):
            model.run(*inputs)
        times = []
        for _ in range(args.runs):
            start = time.perf_counter()
            model.run(*inputs)
            times.append((time.perf_counter() - start) * 1000.0)
        print(f"{args.model}: {origin}; {model.variant}, {model.threads} thread(s), {model.info()['host']}")
        print(f"median {statistics.median(times):.3f} ms, p90 {percentile(times, 0.9):.3f} ms "
              f"over {args.runs} runs after {args.warmup} warmup")


def percentile(values, q):
    """The nearest-rank percentile: a time one of the runs took."""
    ordered = sorted(values)
    return ordered[max(0, math.ceil(q * len(ordered)) - 1)]
