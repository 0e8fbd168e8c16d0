"""Small float ONNX graphs quantized by onnxruntime's own quantizer, for regression tests of the
forms it writes: ``quantized(nodes, inputs, outputs, initializers, **quantize_static options)``."""

import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

from .reference.onnxruntime_session import ReferenceSession


class _Reader(CalibrationDataReader):
    def __init__(self, feeds):
        self.feeds = iter(feeds)

    def get_next(self):
        return next(self.feeds, None)


def float_model(nodes, inputs, outputs, initializers=(), opset=13):
    """inputs / outputs: [(name, shape)] float32; initializers: {name: numpy array}."""
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in inputs],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, s) for n, s in outputs],
        [numpy_helper.from_array(np.asarray(v), k) for k, v in dict(initializers).items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def quantized(model, feeds, quant_format="QDQ", activation="QUInt8", weight="QInt8", per_channel=False,
              op_types=None, **extra):
    """The model quantized by ``quantize_static`` (MinMax, calibrated on ``feeds``), as bytes; ``op_types``:
    its op_types_to_quantize (None: every op it can)."""
    with tempfile.TemporaryDirectory() as tmp:
        src, dst = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
        onnx.save(model, src)
        quantize_static(str(src), str(dst), _Reader(feeds), quant_format=getattr(QuantFormat, quant_format),
                        activation_type=getattr(QuantType, activation), weight_type=getattr(QuantType, weight),
                        per_channel=per_channel, op_types_to_quantize=op_types, extra_options=extra or None)
        return dst.read_bytes()


def output_quantum(graph):
    """One quantum of a loaded model's first (dequantized, float) output: the scale of the int8 tensor
    it is dequantized from, found back through the layout ops in between (``model._graph``)."""
    tensor = graph.outputs[0]
    while not graph.tensors[tensor].scale:
        tensor = next(op for op in graph.ops if tensor in op.outputs).inputs[0]
    return graph.tensors[tensor].scale[0]


def assert_matches_onnxruntime(data, x, op_types, exact=False, min_exact=0.0):
    """Every output of the quantized model ``data`` on input ``x`` (feed "x") within one quantum of
    onnxruntime's (one quantum: ``output_quantum``), in every variant; the IR holds one of ``op_types``.
    ``exact``: every element bit-exact; ``min_exact``: at least that share bit-exact."""
    import qnnweb

    theirs = ReferenceSession(data).run({"x": x})
    for variant in qnnweb.VARIANTS:
        loaded = qnnweb.load(data, variant=variant)
        assert set(op_types) & {o.type for o in loaded._graph.ops}, [o.type for o in loaded._graph.ops]
        quantum = output_quantum(loaded._graph)
        for got, want in zip(loaded.run(x), theirs, strict=True):
            assert got.shape == want.shape
            # a float output may hold infinities and NaN (a division by 0): the same ones, and the rest close
            finite = np.isfinite(want)
            np.testing.assert_array_equal(got[~finite], want[~finite], err_msg=f"{variant}: non-finite outputs")
            got, want = got[finite], want[finite]
            steps = np.abs(np.round((got - want) / quantum))
            assert steps.max() <= 1, f"{variant}: up to {steps.max()} quanta off onnxruntime"
            assert (steps == 0).mean() >= min_exact, f"{variant}: only {(steps == 0).mean():.3f} bit-exact"
            if exact:
                np.testing.assert_array_equal(got, want, err_msg=variant)
