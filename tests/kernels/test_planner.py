"""qnnweb.planner.plan_memory on random chains and DAGs: tensors whose lifetimes overlap never share
bytes, aliases (RESHAPE) share their input's offset, everything fits in the arena, aligned."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import harness as H
from qnnweb.graph import Graph, Tensor
from qnnweb.ops import Step
from qnnweb.planner import ALIGNMENT, plan_memory


@st.composite
def programs(draw, chain=False):
    """(steps, graph): tensors 0..k-1 are graph inputs; each step reads 1-2 earlier tensors and
    writes a new one; some steps are aliases of their single input."""
    tensors = []

    def new_tensor():
        dtype = draw(st.sampled_from(["int8", "int8", "float32"]))
        size = draw(st.one_of(st.integers(1, 64), st.integers(1, 5000)))
        t = Tensor(len(tensors), f"t{len(tensors)}", (size,), dtype)
        tensors.append(t)
        return t.index

    inputs = [new_tensor() for _ in range(draw(st.integers(1, 1 if chain else 3)))]
    steps = []
    for _ in range(draw(st.integers(1, 25))):
        if chain:
            sources = [steps[-1].outputs[0] if steps else inputs[0]]
        else:
            sources = draw(st.lists(st.sampled_from(list(range(len(tensors)))), min_size=1, max_size=2))
        out = new_tensor()
        if len(sources) == 1 and draw(st.integers(0, 3)) == 0:
            steps.append(Step("copy", dict(input=sources[0], output=out, bytes=0), alias=True))
        elif len(sources) == 1:
            steps.append(Step("copy", dict(input=sources[0], output=out, bytes=0)))
        else:
            steps.append(Step("add", dict(input_a=sources[0], input_b=sources[1], output=out)))
    produced = [s.outputs[0] for s in steps]
    outputs = sorted(set([produced[-1]] + draw(st.lists(st.sampled_from(produced), max_size=3))))
    return steps, Graph(tensors, [], inputs, outputs)


def check_plan(steps, graph):
    offsets, arena = plan_memory(steps, graph)

    # Alias classes and lifetimes, computed here independently of the planner.
    parent = {}

    def find(t):
        while parent.get(t, t) != t:
            t = parent[t]
        return t

    for s in steps:
        if s.alias:
            a, b = find(s.outputs[0]), find(s.inputs[0])
            if a != b:
                parent[a] = b
    live = {}

    def touch(t, when):
        r = find(t)
        lo, hi = live.get(r, (when, when))
        live[r] = (min(lo, when), max(hi, when))

    for t in graph.inputs:
        touch(t, -1)
    for i, s in enumerate(steps):
        for t in s.inputs + s.outputs:
            touch(t, i)
    for t in graph.outputs:
        touch(t, len(steps))

    members = {}
    for t in {t for s in steps for t in s.inputs + s.outputs} | set(graph.inputs) | set(graph.outputs):
        assert t in offsets, f"tensor {t} has no offset"
        members.setdefault(find(t), []).append(t)
    for s in steps:
        if s.alias:
            assert offsets[s.outputs[0]] == offsets[s.inputs[0]], "an alias does not share its input's memory"

    extent = {}
    for r, ts in members.items():
        offset = offsets[r]
        assert all(offsets[t] == offset for t in ts)
        assert offset % ALIGNMENT == 0
        end = offset + max(graph.tensors[t].nbytes for t in ts)
        assert end <= arena
        extent[r] = (offset, end)
    roots = sorted(extent)
    for i, a in enumerate(roots):
        for b in roots[i + 1:]:
            (fa, la), (fb, lb) = live[a], live[b]
            if la < fb or lb < fa:
                continue
            (oa, ea), (ob, eb) = extent[a], extent[b]
            assert ea <= ob or eb <= oa, (
                f"tensors {members[a]} [{oa}, {ea}) live {live[a]} and {members[b]} [{ob}, {eb}) live {live[b]} overlap")
    # Never worse than giving every alias class its own bytes.
    total = sum(-(-(e - o) // ALIGNMENT) * ALIGNMENT for o, e in extent.values())
    assert arena <= total


@settings(max_examples=H.examples(300))
@given(program=programs())
def test_plan_memory_dag(program):
    check_plan(*program)


@settings(max_examples=H.examples(150))
@given(program=programs(chain=True))
def test_plan_memory_chain(program):
    check_plan(*program)


def test_plan_memory_chain_reuses_memory():
    """A 10-op chain of equal sizes needs two buffers (ping-pong), not ten."""
    tensors = [Tensor(i, f"t{i}", (1000,), "int8") for i in range(11)]
    steps = [Step("copy", dict(input=i, output=i + 1, bytes=1000)) for i in range(10)]
    offsets, arena = plan_memory(steps, Graph(tensors, [], [0], [10]))
    assert arena == 2 * 1008
    check_plan(steps, Graph(tensors, [], [0], [10]))


def test_plan_memory_alias_chain():
    """input -> reshape -> reshape -> op: the reshapes share the input's bytes."""
    tensors = [Tensor(i, f"t{i}", (64,), "int8") for i in range(4)]
    steps = [Step("copy", dict(input=0, output=1, bytes=64), alias=True),
             Step("copy", dict(input=1, output=2, bytes=64), alias=True),
             Step("copy", dict(input=2, output=3, bytes=64))]
    offsets, _ = plan_memory(steps, Graph(tensors, [], [0], [3]))
    assert offsets[0] == offsets[1] == offsets[2] != offsets[3]
    check_plan(steps, Graph(tensors, [], [0], [3]))
