"""``qnnweb info MODEL``: inputs, outputs and ops by kind (``qnnweb.describe``), and what qnnweb
cannot run in it and why (the model is lowered, not run: no kernels load). An unsupported model still
prints its description, then its problems, and exits 2."""

from collections import Counter

from .. import compile as compile_model
from .. import describe
from ..compiled import is_compiled
from ..errors import UnsupportedModelError
from .files import read_bytes
from .options import add_input_shapes, add_model, input_shapes


def add_parser(subparsers):
    parser = subparsers.add_parser("info", help="describe a model and what qnnweb cannot run in it", description=__doc__)
    add_model(parser)
    add_input_shapes(parser)
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
    if not is_compiled(data):  # a compiled model ran through these checks when it was made
        try:
            compile_model(data, input_shapes=input_shapes(args.input_shape) or None)
        except UnsupportedModelError as error:
            print("supported: no")
            for index, op_type, reason in error.problems:
                print(f"  op {index} {op_type}: {reason}")
            raise
    print("supported: yes")


def quantization(tensor):
    if tensor.get("scale") is None:
        return ""
    return f" (scale {tensor['scale']:.6g}, zero point {tensor['zero_point']})"
