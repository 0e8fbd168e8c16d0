"""The ONNX side of the sweep (tools/models/converters/arch_sweep.py): torch.onnx export and onnxruntime's
quantize_static in the users' modes. The reference qnnweb's outputs are compared with is the one the test
suite and `qnnweb check` use (qnnweb.cli.reference_onnx: ``session.qdqisint8allowed=1``, a model with uint8
tensors run as its exact int8 twin, quantized Muls and Adds kept uint8), so a sweep and a test judge alike.
"""

from __future__ import annotations

import logging
import tempfile
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import onnx
import torch
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static

OPSET = 17
INPUT_NAME = "x"


@dataclass(frozen=True)
class Mode:
    name: str
    quant_format: QuantFormat
    activation: QuantType
    weight: QuantType
    per_channel: bool
    about: str


MODES = [
    Mode("qdq_u8s8", QuantFormat.QDQ, QuantType.QUInt8, QuantType.QInt8, True,
         "QDQ, uint8 activations, int8 per-channel weights (the default user recipe)"),
    Mode("qdq_s8s8", QuantFormat.QDQ, QuantType.QInt8, QuantType.QInt8, True,
         "QDQ, int8 activations, int8 per-channel weights"),
    Mode("qop_u8", QuantFormat.QOperator, QuantType.QUInt8, QuantType.QInt8, True,
         "QOperator (QLinearConv, QLinearMatMul...), uint8 activations, int8 per-channel weights"),
]
MODES_BY_NAME = {m.name: m for m in MODES}


def export(model, input_shape, path: Path, opset: int = OPSET) -> None:
    """torch.onnx.export at `opset` (17: LayerNormalization; before it torch writes layer_norm out as
    ReduceMean -> Sub -> Pow ... -> Div) with the TorchScript exporter (dynamo=False), constants folded."""
    with warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (torch.zeros(input_shape),), str(path), input_names=[INPUT_NAME],
                          opset_version=opset, do_constant_folding=True, dynamo=False)


class _Reader(CalibrationDataReader):
    def __init__(self, inputs):
        self.feeds = iter([{INPUT_NAME: x[None]} for x in inputs])

    def get_next(self):
        return next(self.feeds, None)


def quantize(float_path: Path, mode: Mode, calibration) -> bytes:
    """The float model quantized by ``quantize_static`` (MinMax) in ``mode``, calibrated on ``calibration``
    ([N, 3, H, W] float32)."""
    with tempfile.TemporaryDirectory() as tmp:
        dst = Path(tmp) / "int8.onnx"
        quiet = logging.getLogger().level
        logging.getLogger().setLevel(logging.ERROR)   # one warning per LayerNorm weight it quantizes per tensor
        try:
            quantize_static(str(float_path), str(dst), _Reader(calibration), quant_format=mode.quant_format,
                            activation_type=mode.activation, weight_type=mode.weight, per_channel=mode.per_channel)
        finally:
            logging.getLogger().setLevel(quiet)
        return dst.read_bytes()


def op_counts(model_bytes: bytes) -> dict:
    counts = {}
    for node in onnx.load_from_string(model_bytes).graph.node:
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


# Nodes that carry no arithmetic of their own, left out of float_ops.
_NOT_ARITHMETIC = {"QuantizeLinear", "DequantizeLinear", "Constant"}


def float_ops(model_bytes: bytes) -> dict:
    """Op type -> count of the nodes quantize_static left in float: neither a quantized operator
    (QLinear*, QGemm...: a uint8/int8 input) nor fed by a DequantizeLinear (QDQ). Shape arithmetic counts
    too (Shape, Gather on shapes...): what a runtime must still compute, or fold, in float."""
    graph = onnx.load_from_string(model_bytes).graph
    producer = {o: n.op_type for n in graph.node for o in n.output}
    counts = {}
    for node in graph.node:
        if node.op_type in _NOT_ARITHMETIC or node.op_type.startswith("QLinear") or node.domain == "com.microsoft":
            continue
        if any(producer.get(name) == "DequantizeLinear" for name in node.input):
            continue
        counts[node.op_type] = counts.get(node.op_type, 0) + 1
    return dict(sorted(counts.items()))


def load_time_nodes(model_bytes: bytes) -> set:
    """Names of the nodes whose outputs are known before any input arrives: every input of theirs is an
    initializer, a Constant's output or the output of another such node, or the node is a Shape (the models
    here have static shapes). A loader that folds constants would compute them once and never run them."""
    graph = onnx.load_from_string(model_bytes).graph
    known = {t.name for t in graph.initializer} | {""}
    names = set()
    for node in graph.node:   # ONNX nodes are in topological order
        if node.op_type in ("Constant", "Shape") or all(name in known for name in node.input):
            known.update(node.output)
            names.add(node.name)
    return names


def output_quantum(graph) -> float | None:
    """One quantum of a loaded qnnweb model's first (dequantized) output: the scale of the int8 tensor it is
    dequantized from, found back through the layout ops in between (tools/qnnweb_dev/onnx_quantized.py does the
    same); None when no scale is found (a float op at the end)."""
    tensor = graph.outputs[0]
    while not graph.tensors[tensor].scale:
        producer = next((op for op in graph.ops if tensor in op.outputs), None)
        if producer is None or not producer.inputs:
            return None
        tensor = producer.inputs[0]
    return float(graph.tensors[tensor].scale[0])
