"""The relaxed module's kernels for every outcome of config.c's engine probe, forced one by one.

Each form builds the relaxed module with the probe's answer forced (QNN_EXTRA_CFLAGS, see
wasm_kernels/build.sh and src/config.c) and runs convolutions through it against the numpy reference:
- "saturate", what config.c runs where the dot saturates (x86 engines without VNNI, wasmtime): the
  SIMD128 GEMM on packed int16 activations and the SIMD128 depthwise kernel;
- "halves" and "split", the exact two-dot IGEMM forms ("halves" is slower than the SIMD128 GEMM where
  the dot saturates; "split" is for engines of any other behaviour);
- "usdot", the kernels of engines whose dot reads its second operand as unsigned without saturating
  (x86 with VNNI: the browser on such machines): the one-dot 2x24c4 / 2x16c4 IGEMM, whose weights are
  that operand (packed as w + 128, the row sums correcting), and the four-tap depthwise kernel, whose
  activations are (x + 128). wasmtime on x86 reads the operand as unsigned too but may saturate i16
  pair sums (pmaddubsw), so its cases keep the weights in [-64, -1]: w + 128 in [64, 127] and
  2 * 127 * 128 fit in an i16 for the IGEMM, 2 * 64 * 255 for the depthwise kernel, and every unsigned
  engine is exact. (Whole models in Chromium check the full range where the machine has VNNI.)
- "sdot", the same kernels as ARM engines run them, reading the second operand as signed: the IGEMM's
  weights packed as they are (no row correction: the one form running the IGEMM's uncorrected body)
  and the depthwise activations as they are. wasmtime reads that operand as unsigned, so its cases keep
  the weights and the activations (and their zero point) in [0, 127], where both readings agree.
"""

import os
import subprocess
import sys
from pathlib import Path
from typing import Callable, NamedTuple

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings

import harness as H
from qnnweb import kernels
from qnnweb.model import Model
from qnnweb_dev.reference import int8 as ref
from test_batch_matmul import cases as batch_matmul_cases
from test_conv2d import _case, check_conv2d, conv_cases
from test_depthwise_conv2d import _case as _dw_case
from test_depthwise_conv2d import check_dwconv, dwconv_cases

pytestmark = pytest.mark.slow  # builds the relaxed module once per forced form (emcc)

ROOT = Path(__file__).resolve().parents[2]
FULL = (-128, 127)
# form: (flags, gemm kernel, depthwise kernel, (the weights' range, the activations' range) exact on wasmtime)
FORMS = {
    "saturate": ("-DQNN_RELAXED_DOT_KIND=3", "qs8-gemm-4x8c2-simd128-dot16x2 (relaxed dot saturates)",
                 "qs8-dwconv-c16-simd128-dot16x2", (FULL, FULL)),
    "halves": ("-DQNN_RELAXED_DOT_KIND=3 -DQNN_PREFER_RELAXED_HALVES=1", "qs8-igemm-2x16c4-relaxed-halves",
               "qs8-dwconv-c16-simd128-dot16x2", (FULL, FULL)),
    "split": ("-DQNN_RELAXED_DOT_KIND=0", "qs8-igemm-2x16c4-relaxed-split", "qs8-dwconv-c16-simd128-dot16x2",
              (FULL, FULL)),
    "usdot": ("-DQNN_RELAXED_DOT_KIND=1", "qs8-igemm-2x24c4-relaxed-usdot", "qs8-dwconv-c16-relaxed-tap4+3x3s1p2-usdot",
              ((-64, -1), FULL)),
    "sdot": ("-DQNN_RELAXED_DOT_KIND=2", "qs8-igemm-2x24c4-relaxed-sdot", "qs8-dwconv-c16-relaxed-tap4+3x3s1p2-sdot",
             ((0, 127), (0, 127))),
}


@pytest.fixture(scope="module", params=sorted(FORMS))
def relaxed_form(request, tmp_path_factory):
    flags, name, dw_name, bound = FORMS[request.param]
    out = tmp_path_factory.mktemp(request.param)
    # wasm-tools is installed in the virtualenv (./build.sh setup), next to this Python
    env = {**os.environ, "QNN_EXTRA_CFLAGS": flags,
           "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    proc = subprocess.run(["bash", str(ROOT / "wasm_kernels" / "build.sh"), str(out)], env=env,
                          capture_output=True, text=True)
    assert proc.returncode == 0, f"building the {request.param} form failed:\n{proc.stderr[-3000:]}"
    return (out / "qnnweb-relaxed.wasm").read_bytes(), (name, dw_name, bound)


class Forced(NamedTuple):
    kernel_bytes: Callable  # Model's kernel_bytes: the form for the relaxed variant on one thread, else the shipped module
    gemm: str               # the kernels the form runs
    dwconv: str
    bound: tuple            # (the weights' range, the activations' range) exact on wasmtime


@pytest.fixture
def forced_relaxed(relaxed_form):
    data, form = relaxed_form

    def kernel_bytes(variant, threaded=False):
        return data if variant == "relaxed" and not threaded else kernels.wasm_bytes(variant, threaded)

    return Forced(kernel_bytes, *form)


def into(values, bounds):
    """int8 `values` moved into `bounds`: as they are for the full range, else lo + (v mod the
    range's width), so they stay spread."""
    lo, hi = bounds
    moved = values if (lo, hi) == FULL else lo + (np.asarray(values, np.int32) - lo) % (hi - lo + 1)
    return np.asarray(moved).astype(np.int8)


def bounded(case, bound):
    """The case with its weights, activations and input zero point in the form's ranges (see the
    module's docstring)."""
    weights, activations = bound
    return {**case, "w": into(case["w"], weights), "x": into(case["x"], activations),
            "x_zp": int(into(case["x_zp"], activations))}


def test_forced_form_is_bit_exact(forced_relaxed):
    bound = forced_relaxed.bound
    cases = [
        dict(args=_case(1, 1, 7, 5, 3, 8, (1, 1)), w_zp=0),
        dict(args=_case(2, 1, 9, 9, 24, 19, (3, 3), padding=(1, 1, 1, 1), x_zp=127), w_zp=0),
        dict(args=_case(3, 2, 5, 6, 37, 33, (3, 3), stride=(2, 2), padding=(0, 1, 1, 1), x_zp=-128), w_zp=-7),
        dict(args=_case(4, 1, 6, 6, 16, 21, (3, 3), padding=(1, 1, 1, 1)), w_zp=np.arange(21) % 7 * 37 - 128),
    ]
    for case in cases:
        args, w_zp = case["args"], case["w_zp"]
        if bound != (FULL, FULL):
            args, w_zp = bounded(args, bound), 0   # a weight zero point would widen the range again
        expected = ref.conv2d(**args, w_zp=w_zp)
        got = H.conv2d("relaxed", **args, w_zp=w_zp, kernel_bytes=forced_relaxed.kernel_bytes)
        np.testing.assert_array_equal(got, expected)
    # the largest products the ranges allow: x - x_zp = -255 (-127 in [0, 127]), w = the largest magnitude
    (w_lo, w_hi), (x_lo, x_hi) = bound
    x = np.full((2, 4, 4, 40), x_lo, np.int8)
    w = np.full((17, 3, 3, 40), w_lo if -w_lo >= w_hi else w_hi, np.int8)
    scales = (H.f32(0.001),)
    y_scale = H.output_scale_for(H.f32(0.05), 0.001, 360, 1 / 8)
    np.testing.assert_array_equal(
        H.conv2d("relaxed", x, H.f32(0.05), x_hi, w, scales, None, y_scale, -128, padding=(1, 1, 1, 1),
                 kernel_bytes=forced_relaxed.kernel_bytes),
        ref.conv2d(x, H.f32(0.05), x_hi, w, scales, None, y_scale, -128, padding=(1, 1, 1, 1)))


def test_forced_form_is_the_one_running(forced_relaxed):
    g = H.GraphBuilder()
    xi = g.input((1, 4), "int8", 0.1, 0)
    wi = g.constant(np.ones((3, 4), np.int8), "int8", (0.1,), (0,))
    yi = g.output((1, 3), "int8", 0.2, 0)
    g.op("FULLY_CONNECTED", [xi, wi], [yi], activation="NONE", weights_format=0)
    assert Model.from_graph(g.graph(), "relaxed", kernel_bytes=forced_relaxed.kernel_bytes).info()["kernels"] == {
        "gemm": forced_relaxed.gemm, "dwconv": forced_relaxed.dwconv}


@settings(max_examples=H.examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=conv_cases())
def test_forced_form_convolutions(forced_relaxed, case):
    check_conv2d("relaxed", **bounded(case, forced_relaxed.bound), kernel_bytes=forced_relaxed.kernel_bytes)


@settings(max_examples=H.examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=dwconv_cases())
def test_forced_form_depthwise(forced_relaxed, case):
    """Every tap count (ks % 4 = 0..3 for the four-tap kernel), channel tiles, multipliers."""
    check_dwconv("relaxed", **bounded(case, forced_relaxed.bound), kernel_bytes=forced_relaxed.kernel_bytes)


def test_forced_form_depthwise_3x3_stride1(forced_relaxed):
    """The 3x3 stride-1 pair kernel: pairs inside rows, a row's odd last pixel alone, pairs never across
    rows or images, every padding, partial channel tiles."""
    bound = forced_relaxed.bound
    for seed, (n, ih, iw, c, padding) in enumerate([
            (1, 5, 5, 16, (1, 1, 1, 1)), (2, 4, 7, 17, (1, 1, 1, 1)), (1, 6, 3, 40, (0, 0, 0, 0)),
            (1, 3, 9, 8, (0, 2, 2, 0)), (3, 1, 1, 33, (1, 1, 1, 1)), (1, 8, 6, 144, (1, 1, 0, 1))]):
        check_dwconv("relaxed", **bounded(_dw_case(seed, n, ih, iw, c, 1, (3, 3), padding=padding, activation="RELU6"),
                                          bound), kernel_bytes=forced_relaxed.kernel_bytes)


def test_forced_form_requantizes_products_past_the_magic_bias(forced_relaxed):
    """Requantization where acc * scale leaves the magic bias's range: where the operator proves every
    product within +-2^23 (qnn_qs8_minmax_params.products_bounded: |acc| <= 255 * sum |w|) the kernels
    clamp below after the narrows, products in (-2^23, -2^22] saturating there; past it (-1.5 * 2^23
    and below, where the magic-bias sum turns negative and its bits wrap) they must keep the i32
    clamp. RELU with a zero point above -128 makes the lower clamp visible. Channels alternate the
    weights' extremes, the two images are the activations' extremes and the input zero point is one
    of them, so the middle pixels (the padding taps add nothing) reach the largest |acc| of each
    sign; with the full activation range that is the operator's bound itself. The IGEMM and both
    relaxed depthwise kernels."""
    (w_lo, w_hi), (x_lo, x_hi) = forced_relaxed.bound
    x = np.array([x_lo, x_hi], np.int8).reshape(2, 1, 1, 1) * np.ones((1, 5, 5, 40), np.int8)
    extremes = np.where(np.arange(24) % 2 == 0, w_lo, w_hi).astype(np.int8)
    convolutions = [  # (weights, depthwise, stride): the IGEMM, the depthwise pair kernel and the four-tap one
        (extremes.reshape(24, 1, 1, 1) * np.ones((1, 3, 3, 40), np.int8), False, (1, 1)),
        (extremes[None, None, None, :] * np.ones((1, 3, 3, 1), np.int8), True, (1, 1)),
        (extremes[None, None, None, :] * np.ones((1, 3, 3, 1), np.int8), True, (2, 2))]
    x_scale, w_scale = H.f32(0.5), H.f32(0.25)
    for w, depthwise, stride in convolutions:
        xs = x[..., :w.shape[3]] if depthwise else x
        largest = (9 if depthwise else 9 * 40) * (x_hi - x_lo) * max(abs(w_lo), abs(w_hi))
        reference = ref.depthwise_conv2d if depthwise else ref.conv2d
        for x_zp in (x_lo, x_hi):
            for product in (0.45 * 2.0 ** 23, 0.7 * 2.0 ** 23, 0.9 * 2.0 ** 23, 3 * 2.0 ** 23, 2.0 ** 30):  # the largest |acc * scale|
                y_scale = H.f32(x_scale * w_scale * largest / product)
                args = (xs, x_scale, x_zp, w, (w_scale,), None, y_scale, -100, stride)
                np.testing.assert_array_equal(
                    H.conv2d("relaxed", *args, padding=(1, 1, 1, 1), activation="RELU", depthwise=depthwise,
                             kernel_bytes=forced_relaxed.kernel_bytes),
                    reference(*args, padding=(1, 1, 1, 1), activation="RELU"),
                    err_msg=f"depthwise {depthwise}, stride {stride}, x_zp {x_zp}, largest product {product}")


@settings(max_examples=H.examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(case=batch_matmul_cases())
def test_forced_form_batch_matmul(forced_relaxed, case):
    """BATCH_MATMUL's B packed at run time as the kernels' weights (XOR 0x80 and corrected by the row
    sums in the usdot form), its zero point the row correction's (0 outside the full range)."""
    weights, activations = forced_relaxed.bound
    if forced_relaxed.bound != (FULL, FULL):
        case = {**case, "a": into(case["a"], activations), "a_zp": int(into(case["a_zp"], activations)),
                "b": into(case["b"], weights), "b_zp": 0}
    expected = ref.batch_matmul(**case, fmt="onnx")
    got = H.batch_matmul("relaxed", **case, fmt="onnx", kernel_bytes=forced_relaxed.kernel_bytes)
    np.testing.assert_array_equal(got, expected)
