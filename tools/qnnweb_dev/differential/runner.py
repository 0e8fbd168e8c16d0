"""Run one differential case: quantize, run onnxruntime (the reference) and qnnweb, compare, classify.

Outcomes:
- ``pass``      within one quantum on >= 99.9 % of the outputs and the same argmax (compare.py; a
                quantize_dynamic case: within the bar of its float outputs, against onnxruntime running the
                graph as written);
- ``mismatch``  it ran but differs more; ``locate()`` names the first tensor that differs;
- ``crash``     qnnweb raised something other than a ``qnnweb.ModelError`` (load or run);
- ``rejected``  ``qnnweb.UnsupportedModelError`` / ``ModelError``, with its message;
- ``skipped``   the reference side failed (onnxruntime could not quantize or run the model): no verdict.

Every failing result has a ``failure_class``: the message with names and numbers taken out, so that
one class collects the cases that fail for the same reason.
"""

import collections
import json
import os
import re
import traceback
from dataclasses import dataclass, field

import numpy as np
import onnx
import onnxruntime
from onnx import numpy_helper

import qnnweb

from ..reference.dynamic_bar import fma3_softmax, onnxruntime_saturates_pairs
from ..reference.onnxruntime_session import int8_twin, uses_uint8
from .compare import combine, compare, compare_float
from .generator import make_case, model_bytes, quantize

OUTCOMES = ("pass", "mismatch", "crash", "rejected", "skipped")
# tools/campaigns/difftest.py's flag that draws a case's blocks as it was drawn (generator.BLOCK_DRAWS)
DRAW_FLAGS = {"mixed": "", "only": " --modern", "none": " --no-modern"}


@dataclass
class Result:
    case: object
    variant: str
    outcome: str
    message: str = ""
    failure_class: str = ""
    comparison: object = None
    quantized: bytes = None
    reference: list = None
    ours: list = None
    located: dict = field(default_factory=dict)

    @property
    def name(self):
        return self.case.name

    def line(self):
        detail = self.comparison.summary() if self.comparison is not None else self.message.splitlines()[0][:200] \
            if self.message else ""
        return f"{self.name} [{self.variant}] {self.outcome}: {detail}"


# ----------------------------------------------------------------------------------- reference side

def reference_session(data, twin=True, as_written=False):
    """``as_written``: onnxruntime runs the graph as written (ORT_ENABLE_BASIC: constants folded), the reference
    of a dynamically quantized model (its default session's fusions round otherwise: docs/supported-models.md)."""
    # uint8 models run as their exact int8 twins (onnxruntime's u8 paths are not exact on every CPU):
    # see qnnweb_dev/reference/onnxruntime_session.py
    if twin and uses_uint8(data):
        data = int8_twin(data)
    options = onnxruntime.SessionOptions()
    if as_written:
        options.graph_optimization_level = onnxruntime.GraphOptimizationLevel.ORT_ENABLE_BASIC
    options.intra_op_num_threads = 1
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.qdqisint8allowed", "1")
    return onnxruntime.InferenceSession(data, options, providers=["CPUExecutionProvider"])


def _initializers(model):
    return {t.name: t for t in model.graph.initializer}


def _scalar(inits, name):
    t = inits.get(name)
    return None if t is None else numpy_helper.to_array(t).reshape(-1)


def output_quanta(model):
    """Per graph output: the scale of the quantization its float value is dequantized from (walking
    back through float ops to the DequantizeLinear feeding them), or None."""
    inits = _initializers(model)
    producers = {o: n for n in model.graph.node for o in n.output}
    quanta = []
    for out in model.graph.output:
        name, scale = out.name, None
        for _ in range(len(model.graph.node) + 1):
            node = producers.get(name)
            if node is None:
                break
            if node.op_type == "DequantizeLinear":
                s = _scalar(inits, node.input[1])
                scale = float(s.max()) if s is not None and s.size else None
                break
            name = node.input[0] if node.input else None
        quanta.append(scale)
    return quanta


# ------------------------------------------------------------------------------------ classification

def normalize(message):
    """A message with tensor names, numbers and shapes replaced: the class of a failure."""
    text = message.strip().splitlines()[0] if message.strip() else ""
    text = re.sub(r"'[^']*'", "'…'", text)
    text = re.sub(r'"[^"]*"', '"…"', text)
    text = re.sub(r"\[[-0-9, ]*\]", "[…]", text)
    text = re.sub(r"\bop \d+\b", "op N", text)
    text = re.sub(r"(?<![A-Za-z_])-?\d+(\.\d+)?(e-?\d+)?", "N", text)
    return text[:160]


def _label(op_type):
    return re.sub(r" '[^']*'", "", str(op_type))


def rejection_classes(error):
    problems = getattr(error, "problems", None)
    if problems:
        classes = sorted({f"{_label(op_type)}: {normalize(reason)}" for _, op_type, reason in problems})
        # "dequantizes 'x', which is not available": a consequence of another node's rejection
        primary = [c for c in classes if "which is not available" not in c]
        return primary or classes
    return [normalize(str(error))]


# --------------------------------------------------------------------------------------- one case

def run_case(case, variant, locate_mismatch=True, locate_inexact=False):
    """The Result of ``case`` (a generator.Case) on qnnweb's ``variant``. ``locate_inexact`` also
    locates the first differing tensor of passing cases that are not bit-exact."""
    def skipped(e):  # the reference side failed: no verdict on qnnweb
        return Result(case, variant, "skipped", f"reference: {type(e).__name__}: {e}",
                      f"reference: {type(e).__name__}: {normalize(str(e))}")

    dynamic = case.mode["format"] == "dynamic"
    try:
        quantized = quantize(case)
    except Exception as e:
        return skipped(e)
    if not any(n.op_type in ("QuantizeLinear", "QGemm", "DynamicQuantizeLinear") or n.op_type.startswith("QLinear")
               for n in onnx.load_from_string(quantized).graph.node):
        # e.g. a graph of only Tanh / Transpose: the quantizer leaves it float, nothing to compare
        return Result(case, variant, "skipped", "reference: quantize_static left the model float",
                      "reference: the quantizer left the model float")
    result = Result(case, variant, "pass", quantized=quantized)
    try:
        model = qnnweb.load(quantized, variant=variant)
    except qnnweb.ModelError as e:
        # onnxruntime is not run on a model qnnweb refuses: some of them crash it (a dilated MaxPool with
        # auto_pad SAME before an AveragePool: SIGFPE, which takes the whole campaign down with it)
        result.outcome, result.message = "rejected", str(e)
        result.failure_class = " | ".join(rejection_classes(e))
        return result
    except Exception as e:
        result.outcome, result.message = "crash", f"load: {type(e).__name__}: {e}\n{traceback.format_exc()}"
        result.failure_class = f"crash at load: {type(e).__name__}: {normalize(str(e))}"
        return result
    try:
        reference = result.reference = reference_session(quantized, twin=not dynamic, as_written=dynamic).run(
            None, case.inputs)
    except Exception as e:
        return skipped(e)
    try:
        ours = model.run(*[case.inputs[i.name] for i in model.inputs])
    except Exception as e:
        result.outcome, result.message = "crash", f"run: {type(e).__name__}: {e}\n{traceback.format_exc()}"
        result.failure_class = f"crash at run: {type(e).__name__}: {normalize(str(e))}"
        return result
    result.ours = [np.asarray(o) for o in ours]
    if dynamic:
        return _judge_dynamic(result, reference)
    quanta = output_quanta(onnx.load_from_string(quantized))
    comparisons = []
    for k, (o, t) in enumerate(zip(result.ours, reference)):
        quantum = quanta[k] if k < len(quanta) and quanta[k] else float(np.abs(t).max() or 1.0) / 255
        comparisons.append(compare(o, t, quantum))
    result.comparison = combine(comparisons)
    direct = uint8_model_outputs(quantized, case) if not all(c.passed for c in comparisons) else None
    if direct is not None and all(np.array_equal(o, t) for o, t in zip(result.ours, direct)):
        # The twin's QLinearAdd rounds in the int8 domain, onnxruntime's uint8 kernel (which qnnweb
        # follows for uint8 models) in uint8: where onnxruntime runs the uint8 model itself and gives
        # qnnweb's every byte (on VNNI machines its uint8 paths are exact), that is the verdict.
        result.reference = direct
        result.comparison = combine([compare(o, t, 1.0) for o, t in zip(result.ours, direct)])
        result.message = "bit-exact with onnxruntime on the uint8 model itself (its int8 twin differs)"
        return result
    if not all(c.passed for c in comparisons):
        result.outcome = "mismatch"
        result.message = result.comparison.summary()
        if locate_mismatch:
            try:
                result.located = locate(case, quantized, variant)
            except Exception as e:
                result.located = {"error": f"{type(e).__name__}: {e}"}
        result.failure_class = mismatch_class(case, result.located)
    elif locate_inexact and result.comparison.exact < result.comparison.elements:
        try:
            result.located = locate(case, quantized, variant)
        except Exception as e:
            result.located = {"error": f"{type(e).__name__}: {e}"}
    return result


def _judge_dynamic(result, reference):
    """The verdict on a quantize_dynamic case: its float outputs within the bar of onnxruntime's (the graph as
    written). A mismatch gets no verdict where this machine's onnxruntime computes otherwise than the arithmetic
    qnnweb follows: full-range int8 weights where it saturates pairs of products (x86 AVX2 without VNNI; qnnweb
    sums exactly, as MatMulInteger / ConvInteger are defined), a float Softmax where it runs MLAS's AVX-512
    kernel (qnnweb follows the FMA3 one)."""
    result.comparison = combine([compare_float(o, t) for o, t in zip(result.ours, reference)])
    if result.comparison.passed:
        return result
    mode = result.case.mode
    if mode["weight_type"] == "QInt8" and not mode["reduce_range"] and onnxruntime_saturates_pairs():
        result.outcome, result.message = "skipped", ("reference: this machine's onnxruntime sums int8 weights' "
                                                      "products in pairs saturated to int16; " +
                                                      result.comparison.summary())
        result.failure_class = "reference: onnxruntime saturates pairs of products (x86 AVX2 without VNNI)"
        return result
    if "Softmax" in result.case.ops and not fma3_softmax():
        # qnnweb sums a float Softmax as MLAS's FMA3 kernel does; an AVX-512 machine's onnxruntime sums in 16 lanes,
        # a last-bit difference that the next run-time quantization turns into whole quanta
        result.outcome, result.message = "skipped", ("reference: this machine's onnxruntime runs MLAS's AVX-512 "
                                                      "softmax (qnnweb follows its FMA3 kernel); " +
                                                      result.comparison.summary())
        result.failure_class = "reference: onnxruntime's AVX-512 softmax sums in other lanes than its FMA3 kernel"
        return result
    result.outcome, result.message = "mismatch", result.comparison.summary()
    result.failure_class = f"mismatch (dynamic {mode['weight_type']} weights; not located)"
    return result


def rejection_problems(results, allowed, max_share):
    """What a campaign's sample does not allow in its rejections (a list of lines, empty when none): a rejection
    whose message no pattern of ``allowed`` finds (qnnweb should run it), or more than ``max_share`` of the cases
    with a verdict rejected."""
    wrongly = collections.defaultdict(list)
    for r in results:
        if r.outcome == "rejected" and not any(pattern.search(r.message) for pattern in allowed):
            wrongly[r.failure_class].append(r.name)
    problems = [f"rejected although qnnweb should run them: {len(names)} x {cls} (e.g. {', '.join(names[:3])})"
                for cls, names in wrongly.items()]
    verdicts = [r for r in results if r.outcome != "skipped"]
    rejected = sum(r.outcome == "rejected" for r in verdicts)
    if rejected > max_share * len(verdicts):
        problems.append(f"{rejected} of {len(verdicts)} cases rejected (more than {max_share:.0%})")
    return problems


def uint8_model_outputs(quantized, case):
    """onnxruntime's outputs for a uint8 model run as it is (not as its int8 twin), or None."""
    if not uses_uint8(quantized):
        return None
    try:
        return reference_session(quantized, twin=False).run(None, case.inputs)
    except Exception:
        return None


def inexact_class(case, located):
    """Where a passing but not bit-exact case first differs (for aiming at bit-exactness)."""
    where = located.get("first_inexact")
    return f"{where['op']} ({case.mode['format']} {case.mode['activation_type']})" if where else "not located"


def mismatch_class(case, located):
    where = located.get("first_beyond_one") or located.get("first_inexact")
    fmt = f"{case.mode['format']} {case.mode['activation_type']}"
    if not where:
        return f"mismatch ({fmt}; not located: {located.get('error', 'every compared tensor within 1 quantum')})"
    return f"mismatch at {where['op']} ({fmt})"


# -------------------------------------------------------------------------- locating a mismatch

# int8 ops whose output keeps its input's quantization (QOperator leaves them between QLinear ops)
PASS_THROUGH = {"MaxPool", "Transpose", "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Relu", "Clip",
                "Resize", "Slice", "Gather", "Pad", "DepthToSpace", "SpaceToDepth"}
# QOperator ops: the index of their output scale and zero point inputs.
QLINEAR_OUTPUT_QPARAMS = {
    "QLinearConv": (6, 7), "QLinearMatMul": (6, 7), "QLinearAdd": (6, 7), "QLinearMul": (6, 7),
    "QGemm": (6, 7), "QLinearAveragePool": (3, 4), "QLinearGlobalAveragePool": (3, 4),
    "QLinearLeakyRelu": (3, 4), "QLinearSigmoid": (3, 4), "QLinearSoftmax": (3, 4), "QLinearConcat": (0, 1),
}


def quantized_tensors(model):
    """[(tensor name, producing op label, scale, zero point)] of every int8 / uint8 activation in
    topological (node) order, with the float op a QuantizeLinear quantizes (QDQ) as its label."""
    inits = _initializers(model)
    producers = {o: n for n in model.graph.node for o in n.output}
    found, qparams = [], {}
    for node in model.graph.node:
        if not node.output:
            continue
        out = node.output[0]
        if node.op_type == "QuantizeLinear" and node.input[0] not in inits:
            scale, zp = _scalar(inits, node.input[1]), _scalar(inits, node.input[2]) if len(node.input) > 2 else None
            if scale is None or scale.size != 1:
                continue
            source = producers.get(node.input[0])
            label = source.op_type if source is not None else "input"
            qparams[out] = (float(scale[0]), int(zp[0]) if zp is not None else 0)
            found.append((out, label, *qparams[out]))
        elif node.op_type in QLINEAR_OUTPUT_QPARAMS:
            i_s, i_z = QLINEAR_OUTPUT_QPARAMS[node.op_type]
            if node.op_type == "QGemm" and len(node.input) == 9:
                i_s, i_z = 7, 8
            scale = _scalar(inits, node.input[i_s]) if len(node.input) > i_s else None
            zp = _scalar(inits, node.input[i_z]) if len(node.input) > i_z and node.input[i_z] else None
            if scale is None or scale.size != 1:
                continue
            qparams[out] = (float(scale[0]), int(zp[0]) if zp is not None else 0)
            found.append((out, node.op_type, *qparams[out]))
        elif node.op_type in PASS_THROUGH and node.input and node.input[0] in qparams:
            qparams[out] = qparams[node.input[0]]
            found.append((out, node.op_type, *qparams[out]))
    return found


def _as_onnx_layout(ours, shape):
    if ours.shape == tuple(shape):
        return ours
    if ours.ndim == 4 and len(shape) == 4 and ours.transpose(0, 3, 1, 2).shape == tuple(shape):
        return ours.transpose(0, 3, 1, 2)
    return ours.reshape(shape) if ours.size == int(np.prod(shape)) else None


def locate(case, quantized, variant):
    """The first quantized tensor (node order) where qnnweb differs from onnxruntime: exposes every
    quantized activation as an output of the reference and reads qnnweb's intermediates."""
    model = onnx.load_from_string(quantized)
    tensors = quantized_tensors(model)
    outputs = {o.name for o in model.graph.output}
    for name, *_ in tensors:
        if name not in outputs:
            model.graph.output.append(onnx.ValueInfoProto(name=name))
    session = reference_session(model_bytes(model))
    names = [o.name for o in session.get_outputs()]
    values = dict(zip(names, session.run(None, case.inputs)))
    ours_model = qnnweb.load(quantized, variant=variant, keep_intermediates=True)
    ours_model.run(*[case.inputs[i.name] for i in ours_model.inputs])
    report = {"compared": 0}
    for name, label, scale, zp in tensors:
        theirs = values.get(name)
        if theirs is None:
            continue
        try:
            raw = ours_model.intermediate(name)
        except KeyError:
            continue
        entry = ours_model._compiled.intermediates[name]   # the tensor intermediate() read
        if entry["scale"] is None:
            continue   # per-channel
        ours_f = (np.asarray(raw, dtype=np.float64) - entry["zero_point"]) * entry["scale"]
        ours_f = _as_onnx_layout(ours_f, theirs.shape)
        if ours_f is None:
            continue
        if theirs.dtype == np.int8 and zp > 127:   # onnxruntime ran this uint8 tensor as int8 (zp - 128)
            zp -= 128
        theirs_f = (theirs.astype(np.float64) - zp) * scale
        quanta = np.rint(np.abs(ours_f - theirs_f) / scale).astype(np.int64)
        report["compared"] += 1
        entry = {"tensor": name, "op": label, "max_quanta": int(quanta.max()),
                 "differing": int((quanta > 0).sum()), "elements": int(quanta.size)}
        if "first_inexact" not in report and quanta.max() > 0:
            report["first_inexact"] = entry
        if "first_beyond_one" not in report and quanta.max() > 1:
            report["first_beyond_one"] = entry
            break
    return report


# ------------------------------------------------------------------------------------------ saving

def save(result, root):
    """Writes a failing case for reproduction under root/<case>/ (returns the folder)."""
    folder = os.path.join(root, result.name)
    os.makedirs(folder, exist_ok=True)
    case = result.case
    onnx.save(case.float_model, os.path.join(folder, "float.onnx"))
    if result.quantized is not None:
        with open(os.path.join(folder, "model.onnx"), "wb") as f:
            f.write(result.quantized)
    np.savez(os.path.join(folder, "inputs.npz"), **case.inputs)
    if result.reference is not None:
        np.savez(os.path.join(folder, "reference.npz"), *result.reference)
    if result.ours is not None:
        np.savez(os.path.join(folder, "qnnweb.npz"), *result.ours)
    info = {
        "case": case.name, "seed": case.seed, "index": case.index, "variant": result.variant,
        "outcome": result.outcome, "failure_class": result.failure_class, "mode": case.mode,
        "ops": case.ops, "blocks": case.blocks, "draw": case.draw,
        "comparison": result.comparison.summary() if result.comparison else None,
        "located": result.located,
    }
    with open(os.path.join(folder, "case.json"), "w") as f:
        json.dump(info, f, indent=2)
    with open(os.path.join(folder, "message.txt"), "w") as f:
        f.write(f"{case.name} [{result.variant}] {result.outcome}\n{case.describe()}\n"
                f"class: {result.failure_class}\n\n{result.message}\n\n"
                f"reproduce: ./build.sh difftest --seed {case.seed} --start {case.index} --cases 1 "
                f"--variants {result.variant}{DRAW_FLAGS[case.draw]}\n"
                f"or: qnnweb.load(open('{folder}/model.onnx','rb').read(), variant='{result.variant}')"
                f".run(numpy.load('{folder}/inputs.npz')['input'])\n")
    return folder


def run_index(seed, index, variant, locate_mismatch=True, blocks="mixed"):
    return run_case(make_case(seed, index, blocks), variant, locate_mismatch)
