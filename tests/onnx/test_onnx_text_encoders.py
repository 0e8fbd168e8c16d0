"""Text encoders as transformers.js runs them ("q8": onnxruntime's quantize_dynamic): transformers' BERT (the
shape of all-MiniLM-L6, reduced) and DistilBERT, exported by torch.onnx (transformers 5: its attention mask
as bool ops, Where(mask, 0, -inf) and Where(IsNaN(p), 0, p) after the Softmax) with int64 input_ids /
attention_mask / token_type_ids, quantized with QUInt8 weights per tensor and with QInt8 weights per channel
and reduce_range (tests/data/onnx/text_encoders/, made by tools/models/converters/
make_text_encoder_fixtures.py).

Compared with onnxruntime running the graph as written (ORT_ENABLE_BASIC: constant folding only), qnnweb is
bit-exact where onnxruntime runs MLAS's x86-64 FMA3 kernels (no AVX-512: its AVX-512 softmax sums in
other lanes), and within the bar of docs/supported-models.md everywhere: >= 99.9 % of the elements within
1e-3 relative (or 1e-5 absolute), cosine >= 0.9999, the same argmax per token. onnxruntime's default session
fuses the graph (LayerNormalization, Gelu, SkipLayerNormalization, FusedMatMul), which rounds otherwise and
so moves dynamically quantized values by a quantum here and there: its outputs differ from its own
unfused ones by as much as from qnnweb's (docs/performance-log.md), so against it the cosine and the
argmax are checked."""

import json
import subprocess
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnxruntime.quantization import QuantType, quantize_dynamic

import qnnweb
import qnnweb.onnxruntime as qort
from qnnweb.compiled import CompiledModel
from qnnweb_dev.reference.dynamic_bar import assert_within_bar, fma3_softmax, onnxruntime_outputs

FIXTURES = Path(__file__).resolve().parents[1] / "data" / "onnx" / "text_encoders"
MODELS = ["bert_q8_u8", "bert_q8_s8_rr", "bert_dynamic_axes_q8_u8", "distilbert_q8_u8"]
SEQUENCE, VOCABULARY = 16, 1000


def feeds(model, seed):
    """input_ids, an attention mask with padding after a random length, token types 0 then 1."""
    rng = np.random.default_rng(seed)
    length = int(rng.integers(1, SEQUENCE + 1))
    values = {"input_ids": rng.integers(0, VOCABULARY, (1, SEQUENCE)).astype(np.int64),
              "attention_mask": (np.arange(SEQUENCE) < length).astype(np.int64)[None],
              "token_type_ids": (np.arange(SEQUENCE) >= length // 2).astype(np.int64)[None]}
    return {i.name: values[i.name] for i in onnx.load(model).graph.input}


@pytest.mark.parametrize("name", MODELS)
def test_text_encoder_matches_onnxruntime(name):
    path = FIXTURES / f"{name}.onnx"
    data = path.read_bytes()
    shapes = {i.name: [1, SEQUENCE] for i in onnx.load(path).graph.input}
    models = {variant: qnnweb.load(data, variant=variant, input_shapes=shapes) for variant in qnnweb.VARIANTS}
    kinds = {op.type for op in models["relaxed"]._graph.ops}
    assert {"EMBEDDING_LOOKUP", "DYNAMIC_MATMUL", "BATCH_MATMUL", "SOFTMAX", "CAST"} <= kinds, kinds
    for seed in range(3):
        inputs = feeds(path, seed)
        as_written = onnxruntime_outputs(data, inputs, onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC)
        fused = onnxruntime_outputs(data, inputs, onnxruntime.GraphOptimizationLevel.ORT_ENABLE_ALL)
        for variant, model in models.items():
            outputs = model.run(inputs)
            for got, want, default in zip(outputs, as_written, fused, strict=True):
                what = f"{name} {variant} seed {seed}"
                assert_within_bar(got, want, what + " (onnxruntime, graph as written)")
                assert_within_bar(got, default, what + " (onnxruntime's default session)", share=0.0)
                if fma3_softmax():
                    np.testing.assert_array_equal(np.asarray(got).reshape(want.shape), want, err_msg=what)


def test_ids_outside_the_table_are_refused():
    model = qnnweb.load((FIXTURES / "bert_q8_u8.onnx").read_bytes())
    inputs = feeds(FIXTURES / "bert_q8_u8.onnx", 0)
    for bad in (VOCABULARY, -VOCABULARY - 1, 1 << 40):
        ids = inputs["input_ids"].copy()
        ids[0, 3] = bad
        with pytest.raises(ValueError, match=f"input 'input_ids': id {bad} is outside the embedding table's "
                                             f"{VOCABULARY} rows"):
            model.run(dict(inputs, input_ids=ids))
    ids = inputs["input_ids"].copy()
    ids[0, 3] = -1   # ONNX Gather: the last row
    model.run(dict(inputs, input_ids=ids))


def test_the_onnxruntime_api_takes_int64_feeds():
    """qnnweb.onnxruntime.InferenceSession: the same file and int64 feeds as onnxruntime's, the same outputs
    (within the bar) and the inputs declared as onnxruntime declares them."""
    data = (FIXTURES / "bert_q8_u8.onnx").read_bytes()
    session = qort.InferenceSession(data)
    reference = onnxruntime.InferenceSession(data, providers=["CPUExecutionProvider"])
    assert [(i.name, i.type, i.shape) for i in session.get_inputs()] == \
        [(i.name, i.type, i.shape) for i in reference.get_inputs()]
    inputs = feeds(FIXTURES / "bert_q8_u8.onnx", 1)
    for got, want in zip(session.run(None, inputs), reference.run(None, inputs), strict=True):
        assert_within_bar(got, want, "qnnweb.onnxruntime", share=0.0)


def test_the_onnxruntime_api_runs_any_sequence_length():
    """A model exported with symbolic batch_size and sequence_length (as transformers.js's files are): the
    session takes feeds of any length, each as onnxruntime computes it."""
    path = FIXTURES / "bert_dynamic_axes_q8_u8.onnx"
    session = qort.InferenceSession(path.read_bytes())
    assert [i.shape for i in session.get_inputs()] == [["batch_size", "sequence_length"]] * 3
    for length in (16, 5, 1, 33, 16):
        rng = np.random.default_rng(length)
        inputs = {"input_ids": rng.integers(0, VOCABULARY, (1, length)).astype(np.int64),
                  "attention_mask": np.ones((1, length), np.int64), "token_type_ids": np.zeros((1, length), np.int64)}
        got = session.run(None, inputs)
        want = onnxruntime_outputs(path.read_bytes(), inputs, onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC)
        assert got[0].shape == (1, length, 64)
        assert_within_bar(got[0], want[0], f"length {length}")


def test_compiled_model_keeps_the_id_check():
    model = qnnweb.load((FIXTURES / "distilbert_q8_u8.onnx").read_bytes())
    compiled = CompiledModel.from_bytes(model._compiled.to_bytes())
    assert [i.get("index_rows") for i in compiled.inputs] == [VOCABULARY, None]


# Node: qnnweb.js on the scalar kernels runs a .qnn on int64 feeds (argv: runtime, kernels, model, feeds as
# JSON of decimal strings), prints its first output, then the message of a run with an id past the table.
NODE_RUN = """
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [runtime, kernelsPath, modelPath, feedsJson] = process.argv.slice(2);
const qnnweb = await import(pathToFileURL(runtime));
const kernels = qnnweb.instantiateKernelsFromBytes(readFileSync(kernelsPath));
const { meta, body } = qnnweb.parseCompiled(new Uint8Array(readFileSync(modelPath)));
const model = new qnnweb.Model(kernels, meta, body, "scalar");
const feeds = Object.fromEntries(Object.entries(JSON.parse(feedsJson)).map(([k, v]) => [k, BigInt64Array.from(v, BigInt)]));
const output = Array.from(model.run(feeds)[0]);
feeds.input_ids[2] = 1000n;
let refused = "";
try { model.run(feeds); } catch (e) { refused = `${e.name}: ${e.message}`; }
console.log(JSON.stringify({ output, refused }));
"""


def test_the_javascript_runtime_takes_int64_ids(tmp_path):
    path = FIXTURES / "distilbert_q8_u8.onnx"
    inputs = feeds(path, 2)
    want = qnnweb.load(path.read_bytes(), variant="scalar").run(inputs)[0]
    (tmp_path / "run.mjs").write_text(NODE_RUN)
    (tmp_path / "model.qnn").write_bytes(qnnweb.compile(path.read_bytes()))
    web = Path(__file__).resolve().parents[2] / "web"
    arguments = [tmp_path / "run.mjs", web / "qnnweb.js", Path(qnnweb.__file__).parent / "wasm" / "qnnweb-scalar.wasm",
                 tmp_path / "model.qnn", json.dumps({k: [str(v) for v in x.ravel()] for k, x in inputs.items()})]
    done = subprocess.run(["node", *map(str, arguments)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    result = json.loads(done.stdout)
    np.testing.assert_array_equal(np.array(result["output"], np.float32), want.ravel())
    assert result["refused"] == ("RangeError: input 'input_ids': id 1000 is outside the embedding table's 1000 rows "
                                 "(ids lie in [-1000, 1000))")


def masked_attention_scores(tmp_path, length=12, width=8):
    """transformers 4's attention mask (its eager / sdpa export): (1 - mask) as float, then
    Where(Cast(Cast(inverted, bool), bool), float32's lowest, inverted), added to scores of a MatMul that
    quantize_dynamic quantizes, then Softmax."""
    rng = np.random.default_rng(5)
    w = onnx.numpy_helper.from_array((rng.standard_normal((width, length)) * 0.3).astype(np.float32), "w")
    constants = [onnx.numpy_helper.from_array(np.array(v, dtype), name) for name, v, dtype in
                 (("axes", [1], np.int64), ("one", 1.0, np.float32), ("lowest", np.finfo(np.float32).min, np.float32))]
    h = onnx.helper
    nodes = [h.make_node("MatMul", ["x", "w"], ["scores"]),
             h.make_node("Unsqueeze", ["attention_mask", "axes"], ["mask3"]),
             h.make_node("Cast", ["mask3"], ["mask_float"], to=onnx.TensorProto.FLOAT),
             h.make_node("Sub", ["one", "mask_float"], ["inverted"]),
             h.make_node("Cast", ["inverted"], ["truth"], to=onnx.TensorProto.BOOL),
             h.make_node("Cast", ["truth"], ["truth2"], to=onnx.TensorProto.BOOL),
             h.make_node("Where", ["truth2", "lowest", "inverted"], ["bias"]),
             h.make_node("Add", ["scores", "bias"], ["masked"]),
             h.make_node("Softmax", ["masked"], ["y"], axis=-1)]
    graph = h.make_graph(nodes, "mask", [h.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1, length, width]),
                                         h.make_tensor_value_info("attention_mask", onnx.TensorProto.INT64, [1, length])],
                         [h.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1, length, length])], [w, *constants])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 14)])
    onnx.save(model, tmp_path / "float.onnx")
    # uint8 weights: onnxruntime sums them exactly on every machine (test_onnx_dynamic_quantization.py)
    quantize_dynamic(str(tmp_path / "float.onnx"), str(tmp_path / "dynamic.onnx"), weight_type=QuantType.QUInt8,
                     extra_options={"MatMulConstBOnly": True})
    return (tmp_path / "dynamic.onnx").read_bytes()


def test_the_transformers_4_mask_form(tmp_path):
    data = masked_attention_scores(tmp_path)
    rng = np.random.default_rng(6)
    inputs = {"x": rng.standard_normal((1, 12, 8)).astype(np.float32),
              "attention_mask": (np.arange(12) < 7).astype(np.int64)[None]}
    want = onnxruntime_outputs(data, inputs, onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC)[0]
    assert (want[..., 7:] == 0).all()   # the masked columns
    for variant in qnnweb.VARIANTS:
        model = qnnweb.load(data, variant=variant)
        assert any(op.type == "ELEMENT_F32" and op.options["function"] == "NONZERO_TO" for op in model._graph.ops)
        np.testing.assert_array_equal(model.run(inputs)[0], want, err_msg=variant)
