"""Mutation fuzzing campaign over qnnweb's two parsers (TFLite flatbuffers, ONNX protobuf).

    ./build.sh fuzz --cases 20000 --seed 1 [--workers 2] [--timeout 30] [--seeds NAME,...] [--no-demo]

Each mutant of the seed models (tools/qnnweb_dev/fuzz/seeds/ and data/models/) is loaded with two kernel
variants and run once on zeros in a worker process; every failing mutant (an exception other than
qnnweb.ModelError, a wasm trap, a crash, a hang, runaway memory) is saved under results/fuzz/ with
its traceback, and results/fuzz/summary.json counts the outcomes per place. Exit status 1 if any failed.
"""

import argparse
import shutil
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "tools"))  # tools/: the tools' import root (tools/README.md)
if "--src" in sys.argv:  # another qnnweb source tree (e.g. a copy of main, to measure "before")
    sys.path.insert(0, sys.argv[sys.argv.index("--src") + 1])
else:
    sys.path.insert(0, str(REPO / "py_frontend"))

from qnnweb_dev.fuzz.campaign import campaign, format_summary, load_seeds  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workers", type=int, default=1)
    ap.add_argument("--timeout", type=float, default=30.0, help="seconds per mutant before it counts as a hang")
    ap.add_argument("--seeds", default=None, help="comma-separated seed model names (default: all)")
    ap.add_argument("--no-demo", action="store_true", help="only the small seeds of tools/qnnweb_dev/fuzz/seeds/")
    ap.add_argument("--out", default=str(REPO / "results" / "fuzz"))
    ap.add_argument("--src", default=None, help="the py_frontend directory to test (default: this checkout's)")
    ap.add_argument("--keep", action="store_true", help="keep what an earlier campaign left in --out")
    args = ap.parse_args()

    seeds = load_seeds(args.seeds.split(",") if args.seeds else None, demo=not args.no_demo)
    if not seeds:
        sys.exit("no seed models found")
    out = Path(args.out)
    if out.exists() and not args.keep:
        shutil.rmtree(out)
    print(f"[fuzz] {args.cases} mutants of {len(seeds)} seeds ({', '.join(sorted(seeds))}), seed {args.seed}, "
          f"{args.workers} worker(s)", flush=True)
    step = max(1, args.cases // 20)

    def progress(done, counts):
        if done % step == 0 or done == args.cases:
            print(f"[fuzz] {done}/{args.cases}: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items())), flush=True)

    summary = campaign(args.cases, args.seed, args.workers, args.timeout, seeds, out, progress)
    print(format_summary(summary))
    print(f"[fuzz] failing mutants and tracebacks: {out}/")
    sys.exit(1 if summary["failures"] else 0)


if __name__ == "__main__":
    main()
