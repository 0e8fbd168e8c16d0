"""Whole architectures (tools/models/converters/architectures.py): the workload families beyond classification
(DeepLabV3 on MobileNetV2 at output stride 16, an SSDLite FPN detector, a CartoonGAN generator, ESPCN, a tiny
YOLO, the same under YOLOv8's whole Detect head) and MobileNetV3-Small at 224 (hard-swish, squeeze-excite); seeded weights, BatchNorm statistics from the
calibration photos; exported by torch.onnx and quantized by onnxruntime's quantize_static (QDQ, per-channel
int8 weights; uint8 and int8 activations), against onnxruntime, every variant: every output bit-exact with
onnxruntime's (DeepLab's bilinear upsampling too: qnnweb follows onnxruntime's float32 Resize of the QDQ form;
CartoonGAN's ConvTranspose, which onnxruntime computes in float32 with CPU-dependent rounding, within one
quantum), on two photos; a failure reports the share within one quantum (the scale of the int8 tensor the
output is dequantized from) and the share bit-exact. Their TFLite twins (litert-torch + ai-edge-quantizer)
are fixtures of tests/tflite/test_converter_tflite.py."""

import tempfile
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnxruntime.quantization import CalibrationDataReader, QuantFormat, QuantType, quantize_static
from qnnweb_dev.reference.onnxruntime_session import ReferenceSession

import qnnweb

from models import prepare_onnx_models as pom
from models.converters.architectures import ARCHITECTURES, build

pytestmark = pytest.mark.slow  # whole torch architectures, exported, quantized and run

SAMPLES = ["chelsea.png", "coffee.png"]


@pytest.fixture(scope="module")
def photos():
    found = pom.find_photos()
    return found, pom.photo_batches(found)


def sized(path, shape):
    import torch

    x = torch.from_numpy(pom.preprocess(path)[None])
    return torch.nn.functional.interpolate(x, size=shape[2:], mode="bilinear", antialias=True).numpy()


class _Reader(CalibrationDataReader):
    def __init__(self, feeds):
        self.feeds = iter(feeds)

    def get_next(self):
        return next(self.feeds, None)


@pytest.fixture(scope="module")
def quantized(photos):
    """(name, activation type[, quantizer format]) -> (model bytes, sample inputs), made once."""
    import torch

    found, batches = photos
    cache = {}

    def get(name, activation, quant_format="QDQ"):
        if (name, activation, quant_format) not in cache:
            _, shape, _ = ARCHITECTURES[name]
            model = build(name, batches)
            with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(), torch.no_grad():
                warnings.simplefilter("ignore")
                src, dst = Path(tmp) / "float.onnx", Path(tmp) / "int8.onnx"
                torch.onnx.export(model, (torch.zeros(shape),), str(src), input_names=["x"], opset_version=13,
                                  dynamo=False)
                feeds = [{"x": sized(p["path"], shape)} for p in found]
                quantize_static(str(src), str(dst), _Reader(feeds), quant_format=getattr(QuantFormat, quant_format),
                                per_channel=True, activation_type=getattr(QuantType, activation),
                                weight_type=QuantType.QInt8)
                by_name = {p["name"]: p for p in found}
                cache[name, activation, quant_format] = (dst.read_bytes(),
                                                         [sized(by_name[n]["path"], shape) for n in SAMPLES])
        return cache[name, activation, quant_format]

    return get


def output_quanta(data):
    """Per graph output, the scale of the DequantizeLinear that makes it (through layout ops)."""
    graph = onnx.load_from_string(data).graph
    producer = {o: n for n in graph.node for o in n.output}
    scales = {t.name: onnx.numpy_helper.to_array(t) for t in graph.initializer}
    quanta = []
    for out in graph.output:
        node = producer[out.name]
        while node.op_type != "DequantizeLinear":
            node = producer[node.input[0]]
        quanta.append(float(scales[node.input[1]].reshape(-1)[0]))
    return quanta


# onnxruntime runs the QDQ ConvTranspose in float32 (DequantizeLinear, MLAS's float GEMM + col2im,
# QuantizeLinear), whose rounding depends on the CPU's MLAS kernels: an exact sum 1.3e-6 quanta from a
# tie (-120.4999987) rounds to -121 on an Intel Xeon with AVX-512 (2026-12-04) and to -120, as qnnweb's
# exact integer sum does, on an AMD EPYC with AVX2. There the bar is the one of tests/onnx/
# test_onnx_conv_transpose.py: within one quantum, bit-exact elsewhere.
FLOAT_IN_ONNXRUNTIME = {"cartoongan"}

# Architectures whose uint8 models are checked against the int8 twin with its Muls and Adds kept uint8
# (reference.onnxruntime_session.int8_twin): MobileNetV3-Small's squeeze-excite Muls meet near-ties whose
# rounding depends on the zero point's domain, and it has no layout-dependent op the twin's bridges
# would disturb. The others' Muls (tiny YOLO's SiLU) met no such tie with the plain twin.
UINT8_MUL_ADD = {"mobilenet_v3_small"}


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
@pytest.mark.parametrize("name", list(ARCHITECTURES))
def test_architecture_matches_onnxruntime(name, activation, quantized):
    data, samples = quantized(name, activation)
    reference = ReferenceSession(data, uint8_mul_add=name in UINT8_MUL_ADD)
    quanta = output_quanta(data)
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(data, variant=variant)
        for x in samples:
            theirs = reference.run({"x": x})
            ours = model.run(x)
            for k, (got, want, quantum) in enumerate(zip(ours, theirs, quanta, strict=True)):
                assert got.shape == want.shape
                steps = np.abs(np.round((got - want) / quantum))
                within, exact = (steps <= 1).mean(), (steps == 0).mean()
                report = f"{name} {activation} {variant} output {k}: {within:.4%} within one quantum " \
                         f"({exact:.4%} bit-exact, up to {steps.max():.0f} quanta off)"
                print(report)
                if name in FLOAT_IN_ONNXRUNTIME:
                    assert within == 1.0 and exact >= 0.999, report
                else:
                    assert exact == 1.0, report


@pytest.mark.parametrize("activation", ["QUInt8", "QInt8"])
def test_yolov8_box_decoder_in_float_islands(activation, quantized):
    """The QOperator form of YOLOv8's Detect head leaves the box decoder's Sub / Div in float, a float Sub's
    result read both by a QuantizeLinear and by another float Sub: onnxruntime computes those in float32
    on the dequantized values, and so does qnnweb (DEQUANTIZE, binary_f32, QUANTIZE): bit-exact, every
    variant."""
    data, samples = quantized("yolov8_detect", activation, "QOperator")
    graph = onnx.load_from_string(data).graph
    consumers = {}
    for node in graph.node:
        for name in node.input:
            consumers.setdefault(name, []).append(node.op_type)
    assert any(n.op_type == "Sub" and set(consumers[n.output[0]]) - {"QuantizeLinear"} for n in graph.node), \
        "the QOperator form should read a float Sub's result in float (the case this test is for)"
    reference = ReferenceSession(data)
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(data, variant=variant)
        for x in samples:
            np.testing.assert_array_equal(model.run(x)[0], reference.run({"x": x})[0], err_msg=f"{activation} {variant}")


def test_mobilenet_v3_with_hardswish_as_one_op(photos):
    """torch.onnx from opset 14 on writes HardSwish as one op, which quantize_static leaves in float: in the QDQ
    form it runs between DequantizeLinear and QuantizeLinear; in the QOperator form its float result also feeds
    the squeeze-excite's float GlobalAveragePool, which onnxruntime sums as MLAS's pooling kernel does (the
    avgpool record's arithmetic 5). Both forms bit-exact in every variant, uint8 and int8 activations."""
    import torch

    found, batches = photos
    _, shape, _ = ARCHITECTURES["mobilenet_v3_small"]
    model = build("mobilenet_v3_small", batches)
    feeds = [{"x": sized(p["path"], shape)} for p in found]
    by_name = {p["name"]: p for p in found}
    with tempfile.TemporaryDirectory() as tmp, warnings.catch_warnings(), torch.no_grad():
        warnings.simplefilter("ignore")
        src = Path(tmp) / "float.onnx"
        torch.onnx.export(model, (torch.zeros(shape),), str(src), input_names=["x"], opset_version=17, dynamo=False)
        assert "HardSwish" in {n.op_type for n in onnx.load(str(src)).graph.node}
        made = {}
        for fmt in ("QDQ", "QOperator"):
            for activation in ("QUInt8", "QInt8"):
                dst = Path(tmp) / f"{fmt}-{activation}.onnx"
                quantize_static(str(src), str(dst), _Reader(feeds), quant_format=getattr(QuantFormat, fmt),
                                per_channel=True, activation_type=getattr(QuantType, activation),
                                weight_type=QuantType.QInt8)
                made[fmt, activation] = dst.read_bytes()
    pools = [n for n in onnx.load_from_string(made["QOperator", "QInt8"]).graph.node if n.op_type == "GlobalAveragePool"]
    assert pools, "the QOperator form should leave float GlobalAveragePools (the case this test is for)"
    samples = [sized(by_name[name]["path"], shape) for name in SAMPLES]
    for (fmt, activation), data in made.items():
        reference = ReferenceSession(data, uint8_mul_add=True)
        for variant in qnnweb.VARIANTS:
            ours = qnnweb.load(data, variant=variant)
            for x in samples:
                np.testing.assert_array_equal(ours.run(x)[0], reference.run({"x": x})[0],
                                              err_msg=f"{fmt} {activation} {variant}")
