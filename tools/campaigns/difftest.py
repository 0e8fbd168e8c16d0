"""Differential campaign: random float ONNX graphs quantized by onnxruntime's quantize_static (every
mode), run by qnnweb and by onnxruntime CPU, compared (tools/qnnweb_dev/differential/).

    ./build.sh difftest --cases 500 --seed 7              # or: python tools/campaigns/difftest.py ...
    ./build.sh difftest --seed 7 --start 123 --cases 1 --variants scalar   # one case again
    ./build.sh difftest --modern --cases 300       # only cases of a convolution and modern blocks (LayerNorm,
                                                   # GELU, attention, unfused BatchNorm: generator/modern.py)
    ./build.sh difftest --dynamic --cases 1000     # quantize_dynamic's models (generator.DYNAMIC_MODES),
                                                   # float outputs within the bar of onnxruntime's

Prints one line per failing case, then a summary by outcome, by quantizer format, by modern block and by
failure class; every failing case
(model.onnx, float.onnx, inputs.npz, reference.npz, qnnweb.npz, case.json, message.txt) is saved under
``--out``/<case>/ (default results/difftest). The variant rotates per case over ``--variants``.
Exit status 1 when a case mismatches or crashes.
"""

import argparse
import collections
import json
import os
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tools"))  # tools/: the tools' import root (tools/README.md)
try:
    import qnnweb  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "py_frontend"))
    import qnnweb  # noqa: F401

from qnnweb_dev.differential.generator import MODERN_SHARE, make_case  # noqa: E402
from qnnweb_dev.differential.runner import OUTCOMES, inexact_class, run_case, save  # noqa: E402


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--cases", type=int, default=100, help="number of cases (default 100)")
    parser.add_argument("--seed", type=int, default=0, help="campaign seed (default 0)")
    parser.add_argument("--start", type=int, default=0, help="first case index (default 0)")
    blocks = parser.add_mutually_exclusive_group()
    blocks.add_argument("--modern", dest="blocks", action="store_const", const="only", default="mixed",
                        help="only the modern blocks: every case a convolution then 1-3 blocks (LayerNorm, GELU, "
                             "attention, unfused BatchNorm), named s<seed>-m<index>; by default "
                             f"{MODERN_SHARE * 100:.0f} %% of the cases end their chain in such blocks")
    blocks.add_argument("--no-modern", dest="blocks", action="store_const", const="none",
                        help="no modern blocks: the cases as the generator drew them before it had the blocks")
    parser.add_argument("--dynamic", action="store_true",
                        help="onnxruntime's quantize_dynamic instead of quantize_static: float outputs compared "
                             "with the bar of docs/supported-models.md (named s<seed>-d<index>)")
    parser.add_argument("--variants", default=",".join(qnnweb.VARIANTS),
                        help="comma-separated variants, rotated per case (default all)")
    parser.add_argument("--out", default=os.path.join(ROOT, "results", "difftest"),
                        help="where failing cases are saved (default results/difftest)")
    parser.add_argument("--no-save", action="store_true", help="do not save failing cases")
    parser.add_argument("--no-locate", action="store_true", help="do not locate the first differing tensor")
    parser.add_argument("--inexact", action="store_true",
                        help="also locate where passing cases that are not bit-exact first differ")
    parser.add_argument("--quiet", action="store_true", help="no per-case lines")
    parser.add_argument("--json", help="also write the summary (and every case's outcome) to this file")
    args = parser.parse_args(argv)
    variants = [v for v in args.variants.split(",") if v]
    for v in variants:
        if v not in qnnweb.VARIANTS:
            parser.error(f"unknown variant {v!r} (expected some of {', '.join(qnnweb.VARIANTS)})")

    outcomes = collections.Counter()
    classes = collections.defaultdict(list)
    by_mode = collections.defaultdict(collections.Counter)
    by_block = collections.defaultdict(collections.Counter)
    inexact = collections.defaultdict(list)
    exact = elements = 0
    records = []
    t0 = time.time()
    for index in range(args.start, args.start + args.cases):
        variant = variants[index % len(variants)]
        try:
            case = make_case(args.seed, index, args.blocks, dynamic=args.dynamic)
        except Exception as e:  # a generator bug: count it, go on
            outcomes["skipped"] += 1
            classes[f"generator: {type(e).__name__}: {e}"].append(f"s{args.seed}-c{index}")
            continue
        result = run_case(case, variant, locate_mismatch=not args.no_locate, locate_inexact=args.inexact)
        if result.outcome == "pass" and result.located:
            inexact[inexact_class(case, result.located)].append(case.name)
        outcomes[result.outcome] += 1
        mode = f"{case.mode['format']} {case.mode['weight_type' if args.dynamic else 'activation_type']}"
        by_mode[mode][result.outcome] += 1
        for option in case.mode.get("extra", {}):
            by_mode[f"+ {option}"][result.outcome] += 1
        for block in sorted(set(case.blocks)) or ["(no modern block)"]:
            by_block[block][result.outcome] += 1
        if result.comparison is not None:
            exact += result.comparison.exact
            elements += result.comparison.elements
        record = {"case": case.name, "variant": variant, "outcome": result.outcome,
                  "class": result.failure_class, "mode": case.mode, "ops": case.ops,
                  "blocks": case.blocks}
        if result.outcome != "pass":
            classes[f"{result.outcome}: {result.failure_class}"].append(case.name)
            if result.outcome != "skipped" and not args.no_save:
                record["saved"] = save(result, args.out)
            if not args.quiet:
                print(result.line()[:240], flush=True)
                if result.outcome != "skipped":
                    print(f"    {result.failure_class}", flush=True)
        records.append(record)
    elapsed = time.time() - t0

    total = sum(outcomes.values())
    verdicts = total - outcomes["skipped"]
    print(f"\n{total} cases (seed {args.seed}, start {args.start}, variants {','.join(variants)}) "
          f"in {elapsed:.1f} s")
    for outcome in OUTCOMES:
        n = outcomes[outcome]
        share = f" ({100 * n / verdicts:.1f} % of {verdicts} with a verdict)" if verdicts and outcome != "skipped" else ""
        print(f"  {outcome:9s} {n:6d}{share}")
    if elements:
        print(f"  bit-exact output elements (cases that ran): {exact}/{elements} ({100 * exact / elements:.2f} %)")
    print("by quantizer format (and extra option):")
    for mode in sorted(by_mode):
        print(f"  {mode:30s} " + ", ".join(f"{o} {by_mode[mode][o]}" for o in OUTCOMES if by_mode[mode][o]))
    print("by modern block (a case counts under each block it has):")
    for block in sorted(by_block):
        print(f"  {block:30s} " + ", ".join(f"{o} {by_block[block][o]}" for o in OUTCOMES if by_block[block][o]))
    if classes:
        print("failure classes (count, class, first cases):")
        for cls, names in sorted(classes.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print(f"  {len(names):5d}  {cls}\n         e.g. {', '.join(names[:4])}")
    if inexact:
        print("passing but not bit-exact, first differing tensor's op (count, op, first cases):")
        for cls, names in sorted(inexact.items(), key=lambda kv: (-len(kv[1]), kv[0])):
            print(f"  {len(names):5d}  {cls}   e.g. {', '.join(names[:4])}")
    if not args.no_save and (outcomes["mismatch"] or outcomes["crash"] or outcomes["rejected"]):
        print(f"failing cases saved under {os.path.relpath(args.out)}/<case>/")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"outcomes": dict(outcomes), "blocks": {k: dict(v) for k, v in by_block.items()},
                       "classes": {k: v for k, v in classes.items()},
                       "inexact": dict(inexact), "exact": exact, "elements": elements, "seconds": elapsed, "cases": records}, f, indent=1)
    return 1 if outcomes["mismatch"] or outcomes["crash"] else 0


if __name__ == "__main__":
    sys.exit(main())
