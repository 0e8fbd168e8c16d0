"""``qnnweb run MODEL [--input FILE ...]``: one inference; prints each output (its top classes with
labels when the metadata has labels and one output, as the demo page does), or random / zero inputs
without --input."""

import re

from ..image import dequantize, top_k
from .options import add_model_run, model_with_inputs, positive_int


def add_parser(subparsers):
    parser = subparsers.add_parser("run", help="run a model once and print its outputs", description=__doc__)
    add_model_run(parser)
    parser.add_argument("--top", type=positive_int, default=5, metavar="K", help="classes to print for a classifier (default 5)")
    parser.set_defaults(func=run)


def run(args):
    with model_with_inputs(args) as (model, inputs, origin, metadata):
        outputs = model.run(*inputs)
        print(f"{args.model}: {origin}; {model.variant}, {model.threads} thread(s)")
        labels = metadata.get("labels")
        for info, output in zip(model.outputs, outputs):
            print(f"{info.name}: {info.dtype} {list(info.shape)}")
            if labels and len(model.outputs) == 1 and info.size == len(labels):
                for index, score in top_k(output, info, args.top, logits=is_logits(metadata)):
                    print(f"  {score:8.4f}  {index:5d}  {labels[index]}")
            else:
                print("  " + summary(dequantize(output, info) if info.dtype in ("float32", "int8") else flat(output)))


def is_logits(metadata):
    """The sidecar's ``output.meaning`` says so (web/demo/tasks.js isLogits): print their softmax."""
    return bool(re.search("logit", (metadata.get("output") or {}).get("meaning", ""), re.I))


def flat(output):
    """A numpy array's or an array.array's (qnnweb without numpy) values."""
    return output.ravel().tolist() if hasattr(output, "ravel") else list(output)


def summary(values, shown=8):
    head = ", ".join(f"{v:.6g}" for v in values[:shown])
    return f"[{head}{', ...' if len(values) > shown else ''}] ({len(values)} values)"
