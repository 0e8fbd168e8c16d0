"""One-op (or few-op) TFLite models against ai-edge-litert's default kernels, in every variant."""

import numpy as np
import qnnweb
from qnnweb.cli.reference_litert import litert_outputs


def litert(data, *inputs):
    """The first output of ai-edge-litert (XNNPACK delegate, one thread) on ``inputs``."""
    return litert_outputs(data, *inputs)[0]


def assert_matches_litert(data, *inputs):
    """qnnweb's outputs equal LiteRT's, byte for byte, in every kernel variant."""
    expected = litert_outputs(data, *inputs)
    for variant in qnnweb.VARIANTS:
        ours = qnnweb.load(data, variant=variant).run(*inputs)
        assert len(ours) == len(expected)
        for k, (got, want) in enumerate(zip(ours, expected)):
            np.testing.assert_array_equal(got, want, err_msg=f"{variant}, output {k}")
