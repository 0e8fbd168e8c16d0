"""The kernel modules' size budget: each variant's module, single- and multi-threaded, within 128 KiB. A
page downloads and compiles one of them before its first result; kernels added later are compiled for size
where they are not a hot loop (QNN_PLAN_CODE, wasm_kernels/src/common.h) to stay within it."""

import pytest
from qnnweb import kernels

BUDGET = 128 * 1024


@pytest.mark.parametrize("threaded", [False, True], ids=["single", "threads"])
@pytest.mark.parametrize("variant", kernels.VARIANTS)
def test_module_within_budget(variant, threaded):
    size = len(kernels.wasm_bytes(variant, threaded=threaded))
    assert size <= BUDGET, f"qnnweb-{variant}{'-threads' if threaded else ''}.wasm is {size} bytes, over {BUDGET}"
