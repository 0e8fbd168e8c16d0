"""``qnnweb compile MODEL [-o OUT.qnn]``: the compiled form qnnweb.js and qnnweb.load read without
importing the model again (``qnnweb.compile``), with the sidecar's metadata inside."""

from pathlib import Path

from .. import compile as compile_model
from .files import read_bytes, read_metadata
from .options import add_input_shapes, add_model, input_shapes


def add_parser(subparsers):
    parser = subparsers.add_parser("compile", help="compile a TFLite / ONNX model to .qnn", description=__doc__)
    add_model(parser)
    parser.add_argument("-o", "--output", metavar="OUT.qnn", help="where to write it (default: MODEL.qnn)")
    parser.add_argument("--metadata", metavar="JSON",
                        help="labels, preprocess... to store in it (default: MODEL's sidecar beside it, if any)")
    add_input_shapes(parser)
    parser.set_defaults(func=run)


def run(args):
    data = read_bytes(args.model)
    metadata = read_metadata(args.model, data, args.metadata)
    compiled = compile_model(data, metadata or None, input_shapes=input_shapes(args.input_shape) or None)
    out = Path(args.output or args.model + ".qnn")
    out.write_bytes(compiled)
    print(f"{out}: {len(compiled)} bytes" + (f", metadata: {', '.join(sorted(metadata))}" if metadata else ""))
