"""Command-line options several commands share, and the model they load."""

import contextlib

from .. import load
from ..kernels import VARIANTS
from .errors import UsageError
from .files import read_bytes, read_metadata
from .inputs import model_inputs


def add_model(parser):
    parser.add_argument("model", metavar="MODEL", help="a .tflite, .onnx or compiled .qnn file")


def add_input_shapes(parser):
    parser.add_argument("--input-shape", action="append", default=[], metavar="NAME=D0,D1,...",
                        help="size a dynamic input, e.g. input=1,3,224,224 (repeat for several inputs)")


def add_model_run(parser):
    """The options of the commands that run a model: the model, its inputs, kernels and threads."""
    add_model(parser)
    add_inputs(parser)
    add_runtime(parser)


def add_runtime(parser):
    """Which kernels run the model and on how many threads."""
    add_input_shapes(parser)
    parser.add_argument("--variant", choices=VARIANTS, help="kernel variant (default: the best this engine validates)")
    parser.add_argument("--threads", type=positive_int, help="threads running the kernels (default 1)")


def add_inputs(parser):
    parser.add_argument("--input", action="append", default=[], metavar="FILE",
                        help="an image (preprocessed as the metadata says) or a .npy array, one per model input "
                             "in order; without it the inputs are random (seed 0)")
    parser.add_argument("--zeros", action="store_true", help="without --input: zeros instead of random inputs")
    parser.add_argument("--metadata", metavar="JSON",
                        help="the model's sidecar (labels, preprocess...); default: MODEL's stem + .json beside it")


def positive_int(text):
    value = int(text)
    if value < 1:
        raise ValueError(text)
    return value


def input_shapes(values):
    """{name: [dims]} from NAME=D0,D1,... options."""
    shapes = {}
    for value in values:
        name, _, dims = value.partition("=")
        try:
            shape = [int(d) for d in dims.split(",")]
        except ValueError:
            shape = []
        if not name or not shape or min(shape) < 1:
            raise UsageError(f"--input-shape {value!r}: expected NAME=D0,D1,... with positive sizes")
        shapes[name] = shape
    return shapes


def load_model(args, data):
    """The model (``data``: the bytes of ``args.model``) with the runtime options."""
    return load(data, args.variant, input_shapes=input_shapes(args.input_shape) or None, threads=args.threads)


@contextlib.contextmanager
def model_with_inputs(args, data=None):
    """(the model, its inputs, where they came from, its metadata) of a command that runs it (``data``:
    the model's bytes if read already); the model is closed after."""
    data = read_bytes(args.model) if data is None else data
    metadata = read_metadata(args.model, data, args.metadata)
    with load_model(args, data) as model:
        inputs, origin = model_inputs(model, args.input, metadata, args.zeros)
        yield model, inputs, origin, metadata
