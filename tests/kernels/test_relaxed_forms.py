"""The relaxed module's exact two-dot IGEMM forms, which config.c picks only on some engines.

On this machine kind's engines the relaxed dot saturates, and config.c then runs the SIMD128 IGEMM
(faster here than the "halves" form); the "split" form is for engines of any other behaviour. Both
forms must stay bit-exact wherever they run, so this test builds the relaxed module with each one
forced (QNN_EXTRA_CFLAGS, see wasm_kernels/build.sh and src/config.c) and runs convolutions through
it against the numpy reference.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import harness as H
from qnnweb import kernels
from reference import int8 as ref
from test_conv2d import _case

ROOT = Path(__file__).resolve().parents[2]
FORMS = {
    "halves": ("-DQNN_RELAXED_DOT_KIND=3 -DQNN_PREFER_RELAXED_HALVES=1", "qs8-igemm-4x16c4-relaxed-halves"),
    "split": ("-DQNN_RELAXED_DOT_KIND=0", "qs8-igemm-4x16c4-relaxed-split"),
}


@pytest.fixture(scope="module", params=sorted(FORMS))
def relaxed_form(request, tmp_path_factory):
    flags, name = FORMS[request.param]
    out = tmp_path_factory.mktemp(request.param)
    # wasm-tools is installed in the virtualenv (./build.sh setup), next to this Python
    env = {**os.environ, "QNN_EXTRA_CFLAGS": flags,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(["bash", str(ROOT / "wasm_kernels" / "build.sh"), str(out)], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"building the {request.param} form failed:\n{proc.stderr[-3000:]}"
    return (out / "qnnweb-relaxed.wasm").read_bytes(), name


@pytest.fixture
def forced_relaxed(relaxed_form, monkeypatch):
    data, name = relaxed_form
    real = kernels.wasm_bytes
    monkeypatch.setattr(kernels, "wasm_bytes", lambda variant, threaded=False:
                        data if variant == "relaxed" and not threaded else real(variant, threaded))
    return name


def test_forced_form_is_bit_exact(forced_relaxed):
    cases = [
        dict(args=_case(1, 1, 7, 5, 3, 8, (1, 1)), w_zp=0),
        dict(args=_case(2, 1, 9, 9, 24, 19, (3, 3), padding=(1, 1, 1, 1), x_zp=127), w_zp=0),
        dict(args=_case(3, 2, 5, 6, 37, 33, (3, 3), stride=(2, 2), padding=(0, 1, 1, 1), x_zp=-128), w_zp=-7),
        dict(args=_case(4, 1, 6, 6, 16, 21, (3, 3), padding=(1, 1, 1, 1)), w_zp=np.arange(21) % 7 * 37 - 128),
    ]
    for case in cases:
        args, w_zp = case["args"], case["w_zp"]
        expected = ref.conv2d(**args, w_zp=w_zp)
        got = H.conv2d("relaxed", **args, w_zp=w_zp)
        np.testing.assert_array_equal(got, expected)
    x = np.full((2, 4, 4, 40), -128, np.int8)  # the largest products: (x - x_zp) = -255, w = -128
    w = np.full((17, 3, 3, 40), -128, np.int8)
    scales = (H.f32(0.001),)
    y_scale = H.output_scale_for(H.f32(0.05), 0.001, 360, 1 / 8)
    np.testing.assert_array_equal(
        H.conv2d("relaxed", x, H.f32(0.05), 127, w, scales, None, y_scale, -128, padding=(1, 1, 1, 1)),
        ref.conv2d(x, H.f32(0.05), 127, w, scales, None, y_scale, -128, padding=(1, 1, 1, 1)))


def test_forced_form_is_the_one_running(forced_relaxed):
    from qnnweb.model import Model

    g = H.GraphBuilder()
    xi = g.input((1, 4), "int8", 0.1, 0)
    wi = g.constant(np.ones((3, 4), np.int8), "int8", (0.1,), (0,))
    yi = g.output((1, 3), "int8", 0.2, 0)
    g.op("FULLY_CONNECTED", [xi, wi], [yi], activation="NONE", weights_format=0)
    assert Model.from_graph(g.graph(), "relaxed").info()["kernels"]["gemm"] == forced_relaxed
