"""Vision models through onnxruntime's quantize_dynamic (every op type it takes): timm's DeiT (patch embedding
by ConvInteger, a float class token concatenated to the patch tokens, attention in float32, LayerNorm, GELU)
and ConvNeXt (ConvInteger stem, depthwise 7x7 and 1x1 MLP convolutions, LayerNorm over the channels, a float
GlobalAveragePool, a MatMulInteger head), reduced, with QUInt8 weights per tensor and QInt8 weights per channel
with reduce_range (tests/data/onnx/dynamic_vision/, made by tools/models/converters/
make_dynamic_vision_fixtures.py).

Compared with onnxruntime running the graph as written (ORT_ENABLE_BASIC), qnnweb is bit-exact where
onnxruntime runs MLAS's x86-64 FMA3 kernels (as test_onnx_text_encoders.py checks them), and within the
bar of docs/supported-models.md everywhere, with the same class; against onnxruntime's default session (its
fusions round otherwise), the cosine and the class."""

import json
import subprocess
from pathlib import Path

import numpy as np
import onnxruntime
import pytest

import qnnweb
from qnnweb_dev.reference.dynamic_bar import assert_within_bar, fma3_softmax, onnxruntime_outputs

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "onnx" / "dynamic_vision"
MODELS = {"deit_q8_u8": {"DYNAMIC_CONV_2D", "DYNAMIC_MATMUL", "BATCH_MATMUL", "SOFTMAX", "CONCATENATION"},
          "deit_q8_s8_rr": {"DYNAMIC_CONV_2D", "DYNAMIC_MATMUL", "BATCH_MATMUL", "SOFTMAX", "CONCATENATION"},
          "convnext_q8_u8": {"DYNAMIC_CONV_2D", "DYNAMIC_MATMUL", "LAYER_NORM", "MEAN"},
          "convnext_q8_s8_rr": {"DYNAMIC_CONV_2D", "DYNAMIC_MATMUL", "LAYER_NORM", "MEAN"}}


def images(seed):
    """Photo-like inputs: smooth gradients plus noise, normalized as timm's ImageNet models take them."""
    rng = np.random.default_rng(seed)
    ramp = np.linspace(-1.5, 1.5, 64, dtype=np.float32)
    smooth = ramp[None, None, :, None] * rng.uniform(-1, 1, (1, 3, 1, 1)) + ramp[None, None, None, :] * 0.5
    return (smooth + rng.standard_normal((1, 3, 64, 64)) * 0.3).astype(np.float32)


@pytest.mark.parametrize("name", sorted(MODELS))
def test_dynamic_vision_model_matches_onnxruntime(name):
    data = (FIXTURES / f"{name}.onnx").read_bytes()
    models = {variant: qnnweb.load(data, variant=variant) for variant in qnnweb.VARIANTS}
    kinds = {op.type for op in models["relaxed"]._graph.ops}
    assert MODELS[name] <= kinds, kinds
    for seed in range(3):
        x = images(seed)
        (as_written,) = onnxruntime_outputs(data, {"x": x}, onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC)
        (fused,) = onnxruntime_outputs(data, {"x": x}, onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL)
        for variant, model in models.items():
            (got,) = model.run(x)
            what = f"{name} {variant} seed {seed}"
            assert_within_bar(got, as_written, what + " (onnxruntime, graph as written)")
            assert_within_bar(got, fused, what + " (onnxruntime's default session)", share=0.0)
            assert got.argmax() == as_written.argmax() == fused.argmax(), what
            if fma3_softmax():
                np.testing.assert_array_equal(got, as_written, err_msg=what)



def test_layout_changes_around_layer_norms_copy_nothing():
    """ConvNeXt's LayerNorm2d (Transpose to channels-last, LayerNormalization, Transpose back) between convolutions
    held NHWC: the Transposes only change the layout the float tensor is held in, so they are no ops at all; what
    is transposed is the input image (NCHW -> NHWC) and the head's pooled one-pixel map, there and back (two
    transposes for its LayerNorm, where it is not held NHWC; 41 before the change)."""
    model = qnnweb.load((FIXTURES / "convnext_q8_u8.onnx").read_bytes())
    transposes = [op for op in model._graph.ops if op.type == "TRANSPOSE"]
    layer_norms = [op for op in model._graph.ops if op.type == "LAYER_NORM"]
    assert len(layer_norms) == 10 and len(transposes) <= 3, (len(layer_norms), len(transposes))

# Node: qnnweb.js on the scalar kernels runs a .qnn on a float32 image (argv: runtime, kernels, model, the image's
# raw float32 bytes) and prints its first output.
NODE_RUN = """
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [runtime, kernelsPath, modelPath, imagePath] = process.argv.slice(2);
const qnnweb = await import(pathToFileURL(runtime));
const kernels = qnnweb.instantiateKernelsFromBytes(readFileSync(kernelsPath));
const { meta, body } = qnnweb.parseCompiled(new Uint8Array(readFileSync(modelPath)));
const model = new qnnweb.Model(kernels, meta, body, "scalar");
const image = new Float32Array(new Uint8Array(readFileSync(imagePath)).buffer);
console.log(JSON.stringify(Array.from(model.run({ x: image })[0])));
"""


@pytest.mark.parametrize("name", ["deit_q8_u8", "convnext_q8_u8"])
def test_the_javascript_runtime_runs_them(tmp_path, name):
    """qnnweb.js (Node, scalar kernels) gives qnnweb's bytes: the dynamic convolution, the class token copied from
    its constant, the float pooling."""
    data = (FIXTURES / f"{name}.onnx").read_bytes()
    x = images(7)
    want = qnnweb.load(data, variant="scalar").run(x)[0]
    (tmp_path / "run.mjs").write_text(NODE_RUN)
    (tmp_path / "model.qnn").write_bytes(qnnweb.compile(data))
    (tmp_path / "image.bin").write_bytes(x.tobytes())
    web = Path(__file__).resolve().parents[2] / "web"
    arguments = [tmp_path / "run.mjs", web / "qnnweb.js", Path(qnnweb.__file__).parent / "wasm" / "qnnweb-scalar.wasm",
                 tmp_path / "model.qnn", tmp_path / "image.bin"]
    done = subprocess.run(["node", *map(str, arguments)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    np.testing.assert_array_equal(np.array(json.loads(done.stdout), np.float32), want.ravel())
