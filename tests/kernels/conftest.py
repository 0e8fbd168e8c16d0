"""Kernel tests: every op, every kernel variant, against tools/qnnweb_dev/reference (numpy).

qnnweb is imported as installed; a plain checkout (no editable install) falls back to py_frontend/.
A missing kernel module makes the tests of its variant FAIL (wasm_bytes raises), never skip.
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TESTS = os.path.dirname(HERE)
ROOT = os.path.dirname(TESTS)

try:
    import qnnweb  # noqa: F401
except ImportError:
    sys.path.insert(0, os.path.join(ROOT, "py_frontend"))
    import qnnweb  # noqa: F401

if HERE not in sys.path:  # `import harness`
    sys.path.insert(0, HERE)

from hypothesis import HealthCheck, settings  # noqa: E402

# The suite has to stay fast on 2 cores: a modest number of examples per (test, variant), no
# deadline (wasm instantiation and the first module compile take a few ms to a second).
settings.register_profile(
    "kernels", deadline=None, max_examples=40, derandomize=False, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.register_profile(
    "kernels-thorough", deadline=None, max_examples=400, print_blob=True,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
settings.load_profile(os.environ.get("QNNWEB_HYPOTHESIS_PROFILE", "kernels"))
