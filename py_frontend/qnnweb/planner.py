"""Activation memory planning: liveness intervals, then greedy by size (as TFLite's arena planner).

Every activation tensor gets a byte offset in one arena. Two tensors share bytes only if their
lifetimes (first write .. last read, in step order) do not overlap; an op's output never shares
with its inputs because both are live at that step. A resource variable (``Graph.variables``) lives
through the whole run, so its bytes are its own and survive from one run to the next.

Greedy by size: tensors are placed largest first, each at the lowest offset where it fits among the
already placed tensors whose lifetimes overlap its own. Only those matter, and an interval index over
step time finds them without looking at the others, so planning costs about the number of
overlapping lifetimes (near-linear in the number of ops for real graphs, where each tensor overlaps
few others) instead of a scan of every placed tensor per tensor (quadratic).
"""

ALIGNMENT = 16


class _Intervals:
    """Placed lifetimes [first, last] over integer time 0..span-1: which overlap a query interval.
    Those live at the query's first step come from a segment tree (each lifetime stored at the
    O(log span) nodes that cover it); those starting later inside the query from per-step lists, whose
    scan costs the query's length, i.e. the number of tensors live at once summed over the steps."""

    def __init__(self, span):
        size = 1
        while size < span:
            size *= 2
        self.size = size
        self.covering = [None] * (2 * size)   # segment-tree node -> lifetimes stored at that node
        self.starting = [None] * span         # step -> lifetimes that start there

    def add(self, item, first, last):
        covering = self.covering
        lo, hi = first + self.size, last + self.size + 1
        while lo < hi:
            if lo & 1:
                if covering[lo] is None:
                    covering[lo] = [item]
                else:
                    covering[lo].append(item)
                lo += 1
            if hi & 1:
                hi -= 1
                if covering[hi] is None:
                    covering[hi] = [item]
                else:
                    covering[hi].append(item)
            lo >>= 1
            hi >>= 1
        if self.starting[first] is None:
            self.starting[first] = [item]
        else:
            self.starting[first].append(item)

    def overlapping(self, first, last):
        """Every added lifetime that overlaps [first, last] (live at `first`, or starting in
        (first, last]: two disjoint sets)."""
        out = []
        covering = self.covering
        node = first + self.size
        while node:
            if covering[node] is not None:
                out.extend(covering[node])
            node >>= 1
        starting = self.starting
        for t in range(first + 1, last + 1):
            if starting[t] is not None:
                out.extend(starting[t])
        return out


def plan_memory(steps, graph, keep_all=False):
    """Returns ({tensor index: arena offset}, arena bytes) for every activation the steps touch.
    ``keep_all`` gives every tensor bytes of its own (nothing is overwritten: for inspection)."""
    # Aliases (RESHAPE, a contiguous SLICE) share their input's memory, at a byte offset: a tensor's
    # root is the tensor it lies in, delta its byte offset there.
    root, delta = {}, {}

    def find(t):
        path = []
        while root.get(t, t) != t:
            path.append(t)
            t = root[t]
        offset = 0
        for p in reversed(path):  # path compression: alias chains (RESHAPE after RESHAPE) stay cheap
            offset += delta[p]
            root[p], delta[p] = t, offset
        return t

    def offset_in_root(t):
        find(t)
        return delta.get(t, 0) if root.get(t, t) != t else 0

    for step in steps:
        if step.alias:
            out, source = step.outputs[0], step.inputs[0]
            out_root, source_root = find(out), find(source)
            shift = offset_in_root(source) + step.alias_offset - offset_in_root(out)
            if out_root != source_root:
                if shift < 0:
                    raise ValueError("planner: an alias would start before its input")
                root[out_root], delta[out_root] = source_root, shift
    representative = {t: find(t) for t in root}   # every tensor not in it is its own
    rep_of = representative.get
    within = {t: offset_in_root(t) for t in root}
    within_of = within.get

    first, last = {}, {}

    def touch(t, when):
        r = rep_of(t, t)
        if r in first:
            if when < first[r]:
                first[r] = when
            if when > last[r]:
                last[r] = when
        else:
            first[r] = last[r] = when

    for t in graph.inputs:
        touch(t, -1)
    touched = [step.inputs + step.outputs for step in steps]
    for i, tensors in enumerate(touched):
        for t in tensors:
            touch(t, i)
    for t in graph.outputs:
        touch(t, len(steps))
    for t in graph.variables:   # state kept between runs: live before the first step and after the last
        touch(t, -1)
        touch(t, len(steps))

    nbytes = {}

    def size_of(t):
        if t not in nbytes:
            nbytes[t] = graph.tensors[t].nbytes
        return nbytes[t]

    sizes = {}
    for t in list(first):
        sizes[t] = size_of(t)
    for tensors in touched:
        for t in tensors:
            r = rep_of(t, t)
            n = within_of(t, 0) + size_of(t)
            if n > sizes[r]:
                sizes[r] = n

    order = sorted(sizes, key=lambda t: (-sizes[t], first[t], t))
    offsets = {}
    arena = 0
    if keep_all:
        # Every tensor overlaps every other: each goes right after the ones placed before it.
        for t in order:
            offsets[t] = arena
            arena += -(-sizes[t] // ALIGNMENT) * ALIGNMENT
    else:
        index = _Intervals(len(steps) + 2)   # time -1 .. len(steps), shifted by one
        placed = {}                          # tensor -> (offset, end, first, last)
        for t in order:
            size = -(-sizes[t] // ALIGNMENT) * ALIGNMENT
            f, l = first[t] + 1, last[t] + 1
            offset = 0
            for o, end, _, _ in sorted(placed[p] for p in index.overlapping(f, l)):
                if offset + size <= o:
                    break
                offset = max(offset, end)
            placed[t] = (offset, offset + size, f, l)
            index.add(t, f, l)
            offsets[t] = offset
            arena = max(arena, offset + size)
    return {t: offsets[rep_of(t, t)] + within_of(t, 0) for t in set(first) | set(root)}, arena
