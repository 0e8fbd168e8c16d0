"""The differential generator's blocks of today's architectures (tools/qnnweb_dev/differential/modern.py:
LayerNorm, GELU, attention, unfused BatchNorm): the graphs are valid ONNX that onnxruntime quantizes and runs,
their quantized tensors keep many levels, they are drawn in about a third of a campaign's cases without
changing the other cases, and qnnweb gives each a verdict (a result or a clean UnsupportedModelError).
"""

import collections

import numpy as np
import onnx
import onnxruntime
import pytest

import qnnweb
from qnnweb_dev.differential import generator, runner
from qnnweb_dev.differential.generator import make_case, quantize

pytestmark = pytest.mark.slow  # a few dozen random models quantized by onnxruntime

SEED = 20261207
ONLY_BLOCKS = 24     # cases of a convolution and blocks alone


@pytest.fixture(scope="module")
def modern_cases():
    return [make_case(SEED, i, blocks="only") for i in range(ONLY_BLOCKS)]


def test_every_block_kind_is_drawn(modern_cases):
    kinds = collections.Counter(b for c in modern_cases for b in c.blocks)
    assert set(kinds) == {"LayerNorm", "GELU", "attention", "BatchNorm"}, kinds
    ops = {op for c in modern_cases for op in c.ops}
    assert {"LayerNormalization", "Erf", "Gelu", "Softmax", "BatchNormalization", "MatMul"} <= ops
    assert all(c.name == f"s{SEED}-m{c.index}" and c.draw == "only" for c in modern_cases)


def test_the_graphs_are_valid_and_onnxruntime_runs_them(modern_cases):
    """onnx's full checker; onnxruntime runs the float graph (finite, varied outputs) and the quantized one."""
    for case in modern_cases:
        onnx.checker.check_model(case.float_model, full_check=True)
        session = onnxruntime.InferenceSession(generator.model_bytes(case.float_model),
                                               providers=["CPUExecutionProvider"])
        (out,) = session.run(None, case.inputs)
        assert np.isfinite(out).all() and (out.size == 1 or out.std() > 1e-3), (case.describe(), out.std())
        quantized = quantize(case)
        reference = runner.reference_session(quantized).run(None, case.inputs)
        assert reference[0].shape == out.shape


def test_quantized_activations_are_not_degenerate(modern_cases):
    """Every quantized activation of the blocks' graphs spans more than a few levels on the case's input."""
    for case in modern_cases:
        model = onnx.load_from_string(quantize(case))
        tensors = [name for name, *_ in runner.quantized_tensors(model)]
        outputs = {o.name for o in model.graph.output}
        model.graph.output.extend(onnx.ValueInfoProto(name=n) for n in tensors if n not in outputs)
        session = runner.reference_session(generator.model_bytes(model))
        values = dict(zip([o.name for o in session.get_outputs()], session.run(None, case.inputs)))
        narrow = {n: len(np.unique(values[n])) for n in tensors if n in values and len(np.unique(values[n])) < 4
                  and values[n].size >= 16}
        assert not narrow, (case.describe(), narrow)


def test_about_a_third_of_a_campaign_has_blocks_and_the_others_are_unchanged():
    cases = [make_case(SEED, i) for i in range(120)]
    with_blocks = [c for c in cases if c.blocks]
    assert 0.25 <= len(with_blocks) / len(cases) <= 0.45, len(with_blocks)
    for case in cases[:40]:
        before = make_case(SEED, case.index, blocks="none")   # the case stream without modern blocks
        assert case.mode == before.mode
        if not case.blocks:
            assert generator.model_bytes(case.float_model) == generator.model_bytes(before.float_model)
            assert np.array_equal(case.inputs["input"], before.inputs["input"])
    with pytest.raises(ValueError, match="blocks="):
        make_case(SEED, 0, blocks="all")


def test_qnnweb_gives_every_block_case_a_verdict(modern_cases):
    """A result within a quantum, or a clean UnsupportedModelError naming the blocks' operators: never a
    crash (today's main refuses LayerNormalization, Erf / Gelu, BatchNormalization and activation x
    activation MatMul, which the campaign counts as rejected)."""
    outcomes = collections.Counter()
    for k, case in enumerate(modern_cases):
        result = runner.run_case(case, qnnweb.VARIANTS[k % len(qnnweb.VARIANTS)], locate_mismatch=False)
        outcomes[result.outcome] += 1
        assert result.outcome in ("pass", "rejected"), f"{result.line()} ({case.describe()})\n{result.message}"
        if result.outcome == "rejected":
            assert result.failure_class, result.message
    print(dict(outcomes))
