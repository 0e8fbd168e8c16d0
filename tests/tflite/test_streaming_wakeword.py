"""Streaming wake-word models: pymicro-wakeword's four microWakeWord models (what Home Assistant's voice
satellites listen with). Resource variables carry their streaming convolutions' ring buffers from one
run to the next, set up by a CALL_ONCE subgraph: qnnweb keeps them in the kernels' memory and must give
ai-edge-litert's bytes call for call over a long stream of real speech features (espeak-ng's voice
through the package's own audio frontend), in every variant, on 1 and 2 threads, after reset(), and
from a .qnn file."""

import dataclasses
import json
import statistics
import subprocess
from pathlib import Path

import numpy as np
import pymicro_wakeword
import pytest
from ai_edge_litert.interpreter import Interpreter, OpResolverType
from pymicro_wakeword import MicroWakeWord

import qnnweb
from qnnweb.compiled import CompiledModel
from qnnweb.errors import UnsupportedModelError
from qnnweb.exporters import export_tflite
from qnnweb.graph import Op, Tensor
from qnnweb.importers import import_model
from qnnweb.importers.tflite.variables import resource_variables
from qnnweb.ops import lower
from qnnweb.planner import plan_memory
from qnnweb_dev.wakeword import STRIDE, model_calls, say

MODELS_DIR = Path(pymicro_wakeword.__file__).parent / "models"
WAKE_WORDS = {"okay_nabu": "okay nabu", "alexa": "alexa", "hey_jarvis": "hey jarvis", "hey_mycroft": "hey mycroft"}
# hey_jarvis does not hear espeak-ng's voice (its probabilities stay near 0 on every espeak speed and
# English voice tried): for it only the equality with ai-edge-litert is asserted.
DETECTED = ["okay_nabu", "alexa", "hey_mycroft"]
OTHER_SPEECH = ["the weather is nice today, let us go for a walk in the park",
                "please turn on the kitchen lights and set a timer for ten minutes",
                "what time does the train to the city leave tomorrow morning"]
SILENCE = bytes(2 * 8000)      # 0.5 s of 16 kHz 16-bit silence
WEB = Path(__file__).resolve().parents[2] / "web"
KERNELS = Path(qnnweb.__file__).parent / "wasm"


def litert_outputs(path, calls, resolver=OpResolverType.AUTO):
    interpreter = Interpreter(str(path), experimental_op_resolver_type=resolver)
    interpreter.allocate_tensors()
    x, y = interpreter.get_input_details()[0]["index"], interpreter.get_output_details()[0]["index"]
    outputs = []
    for call in calls:
        interpreter.set_tensor(x, call)
        interpreter.invoke()
        outputs.append(int(interpreter.get_tensor(y).item()))
    return outputs


def stream_outputs(model, calls):
    return [int(model.run(call)[0].item()) for call in calls]


@dataclasses.dataclass
class Stream:
    path: Path
    calls: list        # int8 [1, 3, 40] inputs
    wake_from: int     # the first call of the wake word's part (silence, the wake word, silence)
    expected: list     # ai-edge-litert's uint8 output per call


@pytest.fixture(scope="session")
def streams():
    """Per model: the other sentences, then the wake word between silences (the models are causal, so
    the calls before ``wake_from`` have not heard the wake word), and ai-edge-litert's outputs."""
    other = b"".join(map(say, OTHER_SPEECH))
    result = {}
    for name, phrase in WAKE_WORDS.items():
        path = MODELS_DIR / f"{name}.tflite"
        details = Interpreter(str(path)).get_input_details()[0]
        scale, zero_point = details["quantization"]
        before = model_calls(other, scale, zero_point)
        calls = model_calls(other + SILENCE + say(phrase) + SILENCE, scale, zero_point)
        result[name] = Stream(path, calls, len(before), litert_outputs(path, calls))
    return result


@pytest.fixture(scope="session")
def compiled(streams):
    return {name: qnnweb.compile(stream.path) for name, stream in streams.items()}


def test_the_streams_are_long(streams):
    for stream in streams.values():
        assert len(stream.calls) >= 300 and stream.wake_from >= 250


@pytest.mark.parametrize("name", WAKE_WORDS)
def test_each_model_loads_with_its_state(name):
    model = qnnweb.load(MODELS_DIR / f"{name}.tflite")
    assert [(i.shape, i.dtype) for i in model.inputs] == [((1, 3, 40), "int8")]
    assert [(o.shape, o.dtype) for o in model.outputs] == [((1, 1), "uint8")]
    # one state tensor per VAR_HANDLE of the CALL_ONCE subgraph, initialised by its constant (the zero point)
    assert len(model._compiled.state) >= 5
    assert all(len(set(s.initial)) == 1 for s in model._compiled.state)
    ops = {op["type"] for op in model.info()["ops"]}
    assert {"READ_VARIABLE", "ASSIGN_VARIABLE"} <= ops and not ops & {"VAR_HANDLE", "CALL_ONCE"}


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("name", WAKE_WORDS)
def test_stream_equals_litert(streams, compiled, name, variant, threads):
    stream = streams[name]
    with qnnweb.load(compiled[name], variant=variant, threads=threads) as model:
        assert model.threads == threads
        assert stream_outputs(model, stream.calls) == stream.expected


@pytest.mark.parametrize("name", WAKE_WORDS)
def test_reset_starts_a_new_stream(streams, compiled, name):
    stream = streams[name]
    model = qnnweb.load(compiled[name])
    stream_outputs(model, stream.calls[-100:])   # the wake word's part: the state is far from its start
    model.reset()
    assert stream_outputs(model, stream.calls) == stream.expected


def test_a_qnn_file_keeps_the_state_layout(streams, compiled, tmp_path):
    stream = streams["okay_nabu"]
    direct = qnnweb.load(stream.path)
    stored = CompiledModel.from_bytes(compiled["okay_nabu"])
    assert stored.state == direct._compiled.state
    path = tmp_path / "okay_nabu.qnn"
    path.write_bytes(compiled["okay_nabu"])
    model = qnnweb.load(path)
    assert stream_outputs(model, stream.calls[:150]) == stream.expected[:150]
    model.reset()
    assert stream_outputs(model, stream.calls) == stream.expected


def sliding_means(outputs, window):
    """The package's probabilities: the dequantized outputs (scale 1/256) averaged over the last
    ``window`` calls, 0 until that many calls have been made."""
    probabilities = [q / 256 for q in outputs]
    return [statistics.mean(probabilities[k - window + 1:k + 1]) if k >= window - 1 else 0.0
            for k in range(len(probabilities))]


@pytest.mark.parametrize("name", DETECTED)
def test_the_wake_word_is_heard_and_other_speech_is_not(streams, compiled, name):
    stream = streams[name]
    config = json.loads((MODELS_DIR / f"{name}.json").read_text())["micro"]
    means = sliding_means(stream_outputs(qnnweb.load(compiled[name]), stream.calls), config["sliding_window_size"])
    assert max(means[:stream.wake_from]) <= config["probability_cutoff"]
    assert max(means[stream.wake_from:]) > config["probability_cutoff"]


def test_the_calls_are_made_as_the_package_makes_them(streams):
    """pymicro-wakeword's own detector (its frontend's frames, its grouping and quantization, its
    libtensorflowlite_c) gives the probabilities of these calls. Its library is TFLite's builtin
    kernels without XNNPACK, which round a few outputs differently from ai-edge-litert's default
    (XNNPACK, what qnnweb equals): so it is compared with ai-edge-litert without delegates."""
    stream = streams["okay_nabu"]
    detector = MicroWakeWord.from_config(MODELS_DIR / "okay_nabu.json")
    frames = np.concatenate(stream.calls, axis=1).astype(np.float32)
    package = []
    for k in range(frames.shape[1]):
        # the frames the calls were quantized from, back from their int8 (quantizing them again is exact)
        probability = detector.process_streaming_prob((frames[:, k:k + 1] - detector.input_zero_point)
                                                      * detector.input_scale)
        if k % STRIDE == STRIDE - 1:
            package.append(probability)
    builtin = litert_outputs(stream.path, stream.calls, OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
    assert package == pytest.approx(sliding_means(builtin, detector.sliding_window_size), abs=1e-7)


def test_state_memory_is_never_shared():
    """The planner gives every variable bytes no other tensor uses: a run writes them only by ASSIGN."""
    graph = import_model((MODELS_DIR / "okay_nabu.tflite").read_bytes())
    steps = lower(graph)
    offsets, _ = plan_memory(steps, graph)
    assert graph.variables
    for variable in graph.variables:
        start, end = offsets[variable], offsets[variable] + graph.tensors[variable].nbytes
        for t, offset in offsets.items():
            if t != variable:
                assert offset + graph.tensors[t].nbytes <= start or offset >= end, graph.tensors[t].name


def _variable_graph(init_ops, init_tensors, main_ops):
    """``resource_variables``'s arguments for a main subgraph of a resource tensor (0) and an int8 [1, 2]
    activation (1), and an initialisation subgraph (1) of ``init_tensors`` and ``init_ops``."""
    tensors = [Tensor(0, "handle", (), "resource"), Tensor(1, "value", (1, 2), "int8", (0.5,), (0,))]

    def read_subgraph(_):
        return None, init_tensors, init_ops

    return tensors, main_ops, ["main", "init"], read_subgraph


def test_an_initialisation_subgraph_that_computes_is_refused():
    constant = Tensor(1, "zeros", (1, 2), "int8", (0.5,), (0,), data=b"\0\0")
    init_tensors = [Tensor(0, "h", (), "resource"), constant, Tensor(2, "sum", (1, 2), "int8", (0.5,), (0,))]
    init_ops = [Op(0, "VAR_HANDLE", [], [0], {"variable": "state"}), Op(1, "ADD", [1, 1], [2]),
                Op(2, "ASSIGN_VARIABLE", [0, 2], [])]
    main_ops = [Op(0, "CALL_ONCE", [], [], {"init_subgraph": 1}), Op(1, "VAR_HANDLE", [], [0], {"variable": "state"}),
                Op(2, "READ_VARIABLE", [0], [1])]
    with pytest.raises(UnsupportedModelError) as error:
        resource_variables(*_variable_graph(init_ops, init_tensors, main_ops))
    assert "(in CALL_ONCE subgraph 1)" in str(error.value) and "ADD" in str(error.value)
    assert "not a variable a CALL_ONCE subgraph gives an initial value" in str(error.value)


def test_a_variable_without_an_initial_value_is_refused():
    main_ops = [Op(0, "VAR_HANDLE", [], [0], {"variable": "state"}), Op(1, "READ_VARIABLE", [0], [1])]
    with pytest.raises(UnsupportedModelError, match="op 1 READ_VARIABLE: resource tensor 0 is not a variable"):
        resource_variables(*_variable_graph([], [], main_ops))


# Node: qnnweb.js on the scalar kernels, a .qnn and the calls' bytes (argv); prints the outputs of the
# stream, then of the stream again after reset().
NODE_STREAM = """
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [runtime, kernelsPath, modelPath, callsPath] = process.argv.slice(2);
const qnnweb = await import(pathToFileURL(runtime));
const kernels = qnnweb.instantiateKernelsFromBytes(readFileSync(kernelsPath));
const { meta, body } = qnnweb.parseCompiled(new Uint8Array(readFileSync(modelPath)));
const model = new qnnweb.Model(kernels, meta, body, "scalar");
const bytes = readFileSync(callsPath);
const calls = new Int8Array(bytes.buffer, bytes.byteOffset, bytes.length);
const size = model.inputs[0].nbytes;
const stream = () => Array.from({ length: calls.length / size },
  (_, k) => model.run(calls.subarray(size * k, size * (k + 1)))[0][0]);
const first = stream();
model.reset();
console.log(JSON.stringify({ first, again: stream() }));
"""


def test_the_javascript_runtime_resets_the_same_state(streams, compiled, tmp_path):
    """web/qnnweb.js (in Node, on the scalar kernels) gives the same outputs over the stream, and the
    same again after reset()."""
    stream = streams["okay_nabu"]
    calls = stream.calls[:120]
    paths = {name: tmp_path / name for name in ("stream.mjs", "model.qnn", "calls.bin")}
    paths["stream.mjs"].write_text(NODE_STREAM)
    paths["model.qnn"].write_bytes(compiled["okay_nabu"])
    paths["calls.bin"].write_bytes(b"".join(call.tobytes() for call in calls))
    arguments = [paths["stream.mjs"], WEB / "qnnweb.js", KERNELS / "qnnweb-scalar.wasm", paths["model.qnn"],
                 paths["calls.bin"]]
    done = subprocess.run(["node", *map(str, arguments)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    outputs = json.loads(done.stdout)
    assert outputs["first"] == stream.expected[:120] and outputs["again"] == stream.expected[:120]


def test_the_typescript_declarations_have_reset():
    assert "  reset(): void;" in (WEB / "qnnweb.d.ts").read_text()


def test_a_qnn_file_whose_state_lies_outside_the_arena_is_refused(compiled):
    model = CompiledModel.from_bytes(compiled["okay_nabu"])
    model.state[0] = model.state[0]._replace(offset=model.arena_bytes)
    with pytest.raises(qnnweb.ModelError, match=f"state '{model.state[0].name}' lies outside the arena"):
        CompiledModel.from_bytes(model.to_bytes())


def test_the_exporter_refuses_a_model_with_state():
    graph = import_model((MODELS_DIR / "okay_nabu.tflite").read_bytes())
    with pytest.raises(qnnweb.ModelError, match="resource variables"):
        export_tflite(graph)
