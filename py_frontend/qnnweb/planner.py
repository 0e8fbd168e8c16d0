"""Activation memory planning: liveness intervals, then greedy by size (as TFLite's arena planner).

Every activation tensor gets a byte offset in one arena. Two tensors share bytes only if their
lifetimes (first write .. last read, in step order) do not overlap; an op's output never shares
with its inputs because both are live at that step.
"""

ALIGNMENT = 16


def plan_memory(steps, graph, keep_all=False):
    """Returns ({tensor index: arena offset}, arena bytes) for every activation the steps touch.
    ``keep_all`` gives every tensor bytes of its own (nothing is overwritten: for inspection)."""
    root = {}

    def find(t):
        while root.get(t, t) != t:
            t = root[t]
        return t

    for step in steps:
        if step.alias:
            root[find(step.outputs[0])] = find(step.inputs[0])

    first, last = {}, {}

    def touch(t, when):
        r = find(t)
        first[r] = min(first.get(r, when), when)
        last[r] = max(last.get(r, when), when)

    for t in graph.inputs:
        touch(t, -1)
    for i, step in enumerate(steps):
        for t in step.inputs + step.outputs:
            touch(t, i)
    for t in graph.outputs:
        touch(t, len(steps))

    sizes = {}
    for t in list(first):
        sizes[t] = graph.tensors[t].nbytes
    for step in steps:
        for t in step.inputs + step.outputs:
            sizes[find(t)] = max(sizes[find(t)], graph.tensors[t].nbytes)

    placed = []  # (offset, end, first, last)
    offsets = {}
    for t in sorted(sizes, key=lambda t: (-sizes[t], first[t], t)):
        size = -(-sizes[t] // ALIGNMENT) * ALIGNMENT
        offset = 0
        for o, end, f, l in sorted(placed):
            if not keep_all and (l < first[t] or f > last[t]):
                continue
            if offset + size <= o:
                break
            offset = max(offset, end)
        placed.append((offset, offset + size, first[t], last[t]))
        offsets[t] = offset
    arena = max((end for _, end, _, _ in placed), default=0)
    return {t: offsets[find(t)] for t in set(first) | set(root)}, arena
