"""Comparison of qnnweb's outputs with the reference runtime's, in quanta of the output.

An output is a float tensor dequantized from an int8 / uint8 one, so the reference and qnnweb differ
by whole quanta (the scale of that last quantization). A case passes when, for every output,
>= 99.9 % of the elements are within one quantum and the argmax agrees (up to ties: each side's
argmax is a maximum of the other side). ``exact`` is the bit-exact share (0 quanta).

A dynamically quantized model's outputs are float (compare_float): the bar of docs/supported-models.md, each
element within 1e-3 relative or 1e-5 absolute, takes the quantum's place.
"""

from dataclasses import dataclass

import numpy as np

WITHIN_ONE_REQUIRED = 0.999
RELATIVE, ABSOLUTE = 1e-3, 1e-5   # the bar for float outputs (compare_float)


@dataclass
class Comparison:
    elements: int
    exact: int               # elements with 0 quanta difference
    within_one: int          # elements within 1 quantum
    max_quanta: int
    argmax_ok: bool
    bar: bool = False        # float outputs: "quanta" are multiples of the bar (compare_float)

    @property
    def exact_share(self):
        return self.exact / self.elements if self.elements else 1.0

    @property
    def within_one_share(self):
        return self.within_one / self.elements if self.elements else 1.0

    @property
    def passed(self):
        return self.within_one_share >= WITHIN_ONE_REQUIRED and self.argmax_ok

    def summary(self):
        unit = "x the bar (1e-3 relative or 1e-5 absolute)" if self.bar else "quanta"
        return (f"{self.within_one}/{self.elements} within 1 {'bar' if self.bar else 'quantum'}, {self.exact} exact, "
                f"max {self.max_quanta} {unit}, argmax {'ok' if self.argmax_ok else 'DIFFERS'}")


def _argmax_ok(ours, theirs):
    ours, theirs = ours.reshape(-1), theirs.reshape(-1)
    if ours.size == 0:
        return True
    i, j = int(np.argmax(ours)), int(np.argmax(theirs))
    return i == j or (theirs[i] == theirs[j] and ours[j] == ours[i])


def compare(ours, theirs, quantum):
    """Comparison of one output (arrays of the same shape) in quanta of size ``quantum``."""
    ours = np.asarray(ours, dtype=np.float64)
    theirs = np.asarray(theirs, dtype=np.float64)
    if ours.shape != theirs.shape:
        ours = ours.reshape(theirs.shape) if ours.size == theirs.size else ours
    if ours.shape != theirs.shape:
        return Comparison(max(theirs.size, 1), 0, 0, 1 << 30, False)
    steps = np.abs(ours - theirs) / quantum
    steps = np.where(np.isfinite(steps), steps, 1 << 30)
    quanta = np.rint(steps).astype(np.int64)
    return Comparison(int(quanta.size), int((quanta == 0).sum()), int((quanta <= 1).sum()),
                      int(quanta.max()) if quanta.size else 0, _argmax_ok(ours, theirs))


def compare_float(ours, theirs):
    """Comparison of one float output: ``within_one`` counts the elements within the bar, ``max_quanta`` the worst
    element's difference in multiples of its bar, ``exact`` the bit-equal ones."""
    ours = np.asarray(ours, dtype=np.float32)
    theirs = np.asarray(theirs, dtype=np.float32)
    if ours.shape != theirs.shape and ours.size == theirs.size:
        ours = ours.reshape(theirs.shape)
    if ours.shape != theirs.shape:
        return Comparison(max(theirs.size, 1), 0, 0, 1 << 30, False, True)
    wide, bar = ours.astype(np.float64), np.maximum(RELATIVE * np.abs(theirs.astype(np.float64)), ABSOLUTE)
    steps = np.abs(wide - theirs) / bar
    steps = np.where(np.isfinite(steps), steps, np.where(ours == theirs, 0.0, 1 << 30))
    return Comparison(int(ours.size), int((ours.view(np.int32) == theirs.view(np.int32)).sum()),
                      int((steps <= 1).sum()), int(np.ceil(steps.max())) if ours.size else 0,
                      _argmax_ok(wide, theirs.astype(np.float64)), True)


def combine(comparisons):
    """One Comparison for several outputs (all must pass)."""
    return Comparison(sum(c.elements for c in comparisons), sum(c.exact for c in comparisons),
                      sum(c.within_one for c in comparisons), max((c.max_quanta for c in comparisons), default=0),
                      all(c.argmax_ok for c in comparisons), any(c.bar for c in comparisons))
