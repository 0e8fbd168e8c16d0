"""``qnnweb profile MODEL``: every op of the plan timed on its own (``Model.profile``): its kernel
family, output shape, median time and GMAC/s; ``--by-family`` sums them per family, slowest first."""

from .options import add_model_run, model_with_inputs, positive_int


def add_parser(subparsers):
    parser = subparsers.add_parser("profile", help="time every op of a model", description=__doc__)
    add_model_run(parser)
    parser.add_argument("--repeats", type=positive_int, default=10, metavar="N",
                        help="inferences each op's median is taken over (default 10)")
    parser.add_argument("--by-family", action="store_true", help="one row per kernel family instead of per op")
    parser.set_defaults(func=run)


def run(args):
    with model_with_inputs(args) as (model, inputs, origin, _):
        print(f"{args.model}: {origin}; {model.variant}, {model.threads} thread(s), median of {args.repeats}")
        if args.by_family:
            families = model.profile_by_family(*inputs, repeats=args.repeats)
            print(f"{'kernel family':<28} {'ops':>4} {'ms':>9} {'GMAC/s':>7}")
            for family, row in families.items():
                print(f"{family:<28} {row['ops']:>4} {row['ms']:>9.3f} {rate(row['gmac_per_s'])}")
            total = sum(row["ms"] for row in families.values())
        else:
            rows = model.profile(*inputs, repeats=args.repeats)
            print(f"{'#':>4} {'kernel family':<28} {'output shape':<20} {'ms':>9} {'GMAC/s':>7}")
            for row in rows:
                gmacs = row["macs"] / row["ms"] / 1e6 if row["macs"] and row["ms"] > 0 else None
                print(f"{row['index']:>4} {row['family']:<28} {str(row['shape']):<20} {row['ms']:>9.3f} {rate(gmacs)}")
            total = sum(row["ms"] for row in rows)
        print(f"total: {total:.3f} ms")


def rate(gmac_per_s):
    return f"{gmac_per_s:>7.2f}" if gmac_per_s is not None else f"{'-':>7}"
