"""``qnnweb info MODEL``: inputs, outputs and ops by kind (``qnnweb.describe``), what qnnweb cannot
run in it and why, and for a model it runs what ``model.info()`` says: the variant and kernels picked,
arena and weight bytes. An unsupported model still prints its description, then its problems, and
exits 2."""

from collections import Counter

from .. import describe
from ..errors import UnsupportedModelError
from .files import read_bytes
from .options import add_model, add_runtime, load_model


def add_parser(subparsers):
    parser = subparsers.add_parser("info", help="describe a model and what qnnweb cannot run in it", description=__doc__)
    add_model(parser)
    add_runtime(parser)
    parser.set_defaults(func=run)


def run(args):
    data = read_bytes(args.model)
    described = describe(data)
    print(f"{args.model}: {described['format']}")
    for title, tensors in (("inputs", described["inputs"]), ("outputs", described["outputs"])):
        print(f"{title}:")
        for t in tensors:
            print(f"  {t['name']}: {t['dtype']} {list(t['shape'])}{quantization(t)}")
    kinds = Counter(op["type"] for op in described["ops"])
    print(f"ops: {len(described['ops'])}")
    for kind, count in sorted(kinds.items(), key=lambda kv: (-kv[1], kv[0])):
        print(f"  {kind}: {count}")
    try:
        model = load_model(args, data)
    except UnsupportedModelError as error:
        print("supported: no")
        for index, op_type, reason in error.problems:
            print(f"  op {index} {op_type}: {reason}")
        raise
    with model:
        info = model.info()
    print("supported: yes")
    print(f"variant: {info['variant']} ({info['host']}), {info['threads']} thread(s)"
          + (f": {info['threads_note']}" if info["threads_note"] else ""))
    for family, kernel in info["kernels"].items():
        print(f"  {family} kernel: {kernel}")
    print(f"arena: {info['arena_bytes']} bytes, weights: {info['weight_bytes']} bytes, "
          f"WebAssembly memory: {info['memory_bytes']} bytes")


def quantization(tensor):
    if tensor.get("scale") is None:
        return ""
    return f" (scale {tensor['scale']:.6g}, zero point {tensor['zero_point']})"
