"""``qnnweb check MODEL``: qnnweb's outputs against the reference runtime's on the same inputs, as the
model tests compare them: ai-edge-litert for TFLite (XNNPACK, one thread), onnxruntime for ONNX (int8
QDQ kept int8, uint8 models run as their exact int8 twin: reference_onnx). Prints, per output, the
largest difference (in quanta for integer outputs) and the share of bit-exact elements."""

from ..compiled import is_compiled
from .errors import UsageError
from .files import read_bytes
from .options import add_model_run, model_with_inputs


def add_parser(subparsers):
    parser = subparsers.add_parser("check", help="compare a model's outputs with onnxruntime / ai-edge-litert",
                                   description=__doc__)
    add_model_run(parser)
    parser.set_defaults(func=run)


def run(args):
    data = read_bytes(args.model)
    if is_compiled(data):
        raise UsageError(f"{args.model} is a compiled model: check its TFLite or ONNX source")
    with model_with_inputs(args, data) as (model, inputs, origin, _):
        ours = model.run(*inputs)
        fmt = model.info()["format"]
        names = [info.name for info in model.inputs]
        outputs = list(zip(model.outputs, ours))
    reference, runtime = reference_outputs(fmt, data, names, inputs)
    print(f"{args.model}: {origin}; qnnweb {model.variant} against {runtime}")
    for (info, got), want in zip(outputs, reference):
        difference, exact, unit = compare(got, want)
        print(f"{info.name}: {info.dtype} {list(info.shape)}: max difference {difference:g}{unit}, "
              f"{100.0 * exact / got.size:.2f}% bit-exact ({exact} of {got.size})")


def reference_outputs(fmt, data, names, inputs):
    """(the reference runtime's outputs, its name); imported here: each is an optional install."""
    if fmt == "tflite":
        try:
            from .reference_litert import litert_outputs
        except ImportError as error:
            raise UsageError(f"checking a TFLite model needs ai-edge-litert ({error.name} is not installed): "
                             "pip install ai-edge-litert") from None
        return litert_outputs(data, *inputs), "ai-edge-litert"
    try:
        from .reference_onnx import ReferenceSession
    except ImportError as error:
        raise UsageError(f"checking an ONNX model needs onnxruntime and onnx ({error.name} is not installed): "
                         "pip install onnxruntime onnx") from None
    return ReferenceSession(data).run(dict(zip(names, inputs))), "onnxruntime"


def compare(got, want):
    """(largest difference, elements equal bit for bit, unit) of two numpy arrays of one output."""
    if got.shape != want.shape or got.dtype != want.dtype:
        raise ValueError(f"the reference gives {want.dtype} {list(want.shape)}, qnnweb {got.dtype} {list(got.shape)}")
    exact = int((got.view(f"u{got.itemsize}") == want.view(f"u{want.itemsize}")).sum())
    if got.dtype.kind == "f":
        return float(abs(got.astype("float64") - want.astype("float64")).max(initial=0.0)), exact, ""
    return int(abs(got.astype("int64") - want.astype("int64")).max(initial=0)), exact, " quanta"
