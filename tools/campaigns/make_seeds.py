"""Small seed models for the mutation fuzzer, written into tools/qnnweb_dev/fuzz/seeds/ (committed; rerun this
script to remake them): tiny float ONNX graphs built with onnx.helper, quantized by onnxruntime's
``quantize_static`` (QDQ and QOperator, uint8 and int8 activations), and the same graphs exported to
TFLite by ``qnnweb.exporters.export_tflite``. Every seed must load in qnnweb, or mutants only test the
first rejection. Small files keep each mutant's load + run at a few milliseconds.

    .venv/bin/python tools/campaigns/make_seeds.py
"""

import os
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)
from qnnweb_dev.fuzz.campaign import SEEDS_DIR as SEEDS  # noqa: E402


def _conv(name, x, cin, cout, k, rng, stride=1, pad=None, group=1, bias=True):
    pad = k // 2 if pad is None else pad
    w = numpy_helper.from_array((rng.standard_normal((cout, cin // group, k, k)) * 0.3).astype(np.float32), name + "_w")
    inits = [w]
    inputs = [x, name + "_w"]
    if bias:
        inits.append(numpy_helper.from_array((rng.standard_normal(cout) * 0.1).astype(np.float32), name + "_b"))
        inputs.append(name + "_b")
    node = helper.make_node("Conv", inputs, [name], strides=[stride, stride], pads=[pad] * 4, group=group,
                            kernel_shape=[k, k])
    return [node], inits


def graph_conv_chain(rng):
    """Conv -> Relu -> depthwise Conv (stride 2) -> Clip 0..6 -> Conv 1x1 + residual Add -> GAP ->
    Flatten -> Gemm."""
    nodes, inits = [], []
    n, i = _conv("c1", "x", 3, 8, 3, rng)
    nodes += n + [helper.make_node("Relu", ["c1"], ["r1"])]
    inits += i
    n, i = _conv("c2", "r1", 8, 8, 3, rng, stride=2, group=8)
    nodes += n
    inits += i
    inits += [numpy_helper.from_array(np.array(0.0, np.float32), "lo"), numpy_helper.from_array(np.array(6.0, np.float32), "hi")]
    nodes.append(helper.make_node("Clip", ["c2", "lo", "hi"], ["r2"]))
    n, i = _conv("c3", "r2", 8, 8, 1, rng)
    nodes += n + [helper.make_node("Add", ["c3", "r2"], ["a3"]),
                  helper.make_node("GlobalAveragePool", ["a3"], ["g"]),
                  helper.make_node("Flatten", ["g"], ["f"], axis=1)]
    inits += i
    inits += [numpy_helper.from_array((rng.standard_normal((4, 8)) * 0.3).astype(np.float32), "fc_w"),
              numpy_helper.from_array((rng.standard_normal(4) * 0.1).astype(np.float32), "fc_b")]
    nodes += [helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], transB=1)]
    return nodes, inits, [1, 3, 8, 8], [1, 4]


def graph_pools_concat(rng):
    """Conv -> MaxPool / AveragePool branches -> Concat -> Mul by a [1,C,1,1] constant -> Sigmoid ->
    Reshape -> MatMul -> LeakyRelu."""
    nodes, inits = [], []
    n, i = _conv("c1", "x", 3, 6, 3, rng)
    nodes += n + [helper.make_node("Relu", ["c1"], ["r1"]),
                  helper.make_node("MaxPool", ["r1"], ["m"], kernel_shape=[2, 2], strides=[2, 2]),
                  helper.make_node("AveragePool", ["r1"], ["p"], kernel_shape=[2, 2], strides=[2, 2]),
                  helper.make_node("Concat", ["m", "p"], ["cat"], axis=1)]
    inits += i
    inits.append(numpy_helper.from_array((rng.random((1, 12, 1, 1)) + 0.5).astype(np.float32), "scale_c"))
    nodes += [helper.make_node("Mul", ["cat", "scale_c"], ["mul"]),
              helper.make_node("Sigmoid", ["mul"], ["s"])]
    inits.append(numpy_helper.from_array(np.array([1, 12 * 4 * 4], np.int64), "shape"))
    nodes.append(helper.make_node("Reshape", ["s", "shape"], ["flat"]))
    inits.append(numpy_helper.from_array((rng.standard_normal((12 * 4 * 4, 5)) * 0.1).astype(np.float32), "mm_w"))
    nodes += [helper.make_node("MatMul", ["flat", "mm_w"], ["mm"]),
              helper.make_node("LeakyRelu", ["mm"], ["y"], alpha=0.1)]
    return nodes, inits, [1, 3, 8, 8], [1, 5]


def graph_unary_softmax(rng):
    """Conv -> Tanh -> Conv 1x1 -> Reshape -> Gemm -> Softmax."""
    nodes, inits = [], []
    n, i = _conv("c1", "x", 2, 4, 3, rng, stride=2, pad=1)
    nodes += n + [helper.make_node("Tanh", ["c1"], ["t"])]
    inits += i
    n, i = _conv("c2", "t", 4, 4, 1, rng)
    nodes += n
    inits += i
    inits.append(numpy_helper.from_array(np.array([1, -1], np.int64), "shape"))
    nodes.append(helper.make_node("Reshape", ["c2", "shape"], ["flat"]))
    inits += [numpy_helper.from_array((rng.standard_normal((3, 4 * 3 * 3)) * 0.3).astype(np.float32), "fc_w"),
              numpy_helper.from_array((rng.standard_normal(3) * 0.1).astype(np.float32), "fc_b")]
    nodes += [helper.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["fc"], transB=1),
              helper.make_node("Softmax", ["fc"], ["y"], axis=-1)]
    return nodes, inits, [1, 2, 6, 6], [1, 3]


GRAPHS = {"conv_chain": graph_conv_chain, "pools_concat": graph_pools_concat, "unary_softmax": graph_unary_softmax}


def float_model(name, rng):
    nodes, inits, in_shape, out_shape = GRAPHS[name](rng)
    graph = helper.make_graph(nodes, name, [helper.make_tensor_value_info("x", TensorProto.FLOAT, in_shape)],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, out_shape)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model, in_shape


def quantize(model, in_shape, rng, quant_format, activation_type, per_channel):
    from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

    class Reader(CalibrationDataReader):
        def __init__(self):
            self.batches = iter([{"x": rng.standard_normal(in_shape).astype(np.float32)} for _ in range(4)])

        def get_next(self):
            return next(self.batches, None)

    with tempfile.TemporaryDirectory() as tmp:
        src, dst = os.path.join(tmp, "f.onnx"), os.path.join(tmp, "q.onnx")
        onnx.save(model, src)
        quantize_static(src, dst, Reader(), quant_format=getattr(QuantFormat, quant_format),
                        activation_type=getattr(QuantType, activation_type), weight_type=QuantType.QInt8,
                        per_channel=per_channel)
        return Path(dst).read_bytes()


MODES = [("qdq_u8", "QDQ", "QUInt8", False), ("qdq_s8pc", "QDQ", "QInt8", True), ("qop_u8", "QOperator", "QUInt8", False),
         ("qop_s8", "QOperator", "QInt8", False)]


def main():
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "py_frontend"))
    import qnnweb
    from qnnweb.exporters import export_tflite

    SEEDS.mkdir(exist_ok=True)
    for name in GRAPHS:
        for mode, fmt, act, per_channel in MODES:
            rng = np.random.default_rng(7)
            model, in_shape = float_model(name, rng)
            data = quantize(model, in_shape, rng, fmt, act, per_channel)
            try:
                qnnweb.load(data, variant="scalar")
            except qnnweb.ModelError as e:
                print(f"{name}_{mode}.onnx: skipped, qnnweb does not load it: {e}")
                continue
            (SEEDS / f"{name}_{mode}.onnx").write_bytes(data)
            print(f"{name}_{mode}.onnx: {len(data)} bytes")
            if mode in ("qdq_s8pc", "qdq_u8"):
                try:
                    tfl = export_tflite(qnnweb.importers.import_model(data))
                    qnnweb.load(tfl, variant="scalar")
                except Exception as e:  # noqa: BLE001  (a seed generator: report and go on)
                    print(f"{name}_{mode}.tflite: skipped: {type(e).__name__}: {str(e).splitlines()[0]}")
                    continue
                (SEEDS / f"{name}_{mode}.tflite").write_bytes(tfl)
                print(f"{name}_{mode}.tflite: {len(tfl)} bytes")


if __name__ == "__main__":
    main()
