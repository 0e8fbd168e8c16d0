"""Exceptions raised by qnnweb. All are ValueErrors: the model or the input is wrong, not qnnweb."""


class ModelError(ValueError):
    """The model file is corrupt, truncated, or not a format qnnweb reads."""


class UnsupportedModelError(ModelError):
    """The model is valid but uses operators or data types qnnweb does not run.

    ``problems`` lists every one of them as ``(op_index, op_type, reason)``, so a user sees the
    whole list at once instead of fixing one op per attempt.
    """

    def __init__(self, problems):
        self.problems = list(problems)
        lines = [f"  op {index} {op_type}: {reason}" for index, op_type, reason in self.problems]
        super().__init__(
            f"the model uses {len(self.problems)} unsupported operator(s) or data type(s):\n" + "\n".join(lines)
        )


class QuantizationModeError(UnsupportedModelError):
    """The model is quantized, but in a mode qnnweb does not run (dynamic range, weight only, 16-bit
    activations): one message says which and how to make a file qnnweb runs, instead of a problem per op."""

    def __init__(self, message):
        self.problems = [(-1, "model", message)]
        ModelError.__init__(self, message)


class KernelError(RuntimeError):
    """The WebAssembly kernels refused a plan: a bug in qnnweb, reported with the kernel's message."""


class Unsupported(Exception):
    """Raised while an op is lowered or its arithmetic computed (qnnweb.ops, qnnweb.numerics): the reason
    this op cannot run. Collected per op into an UnsupportedModelError, never raised to the user."""
