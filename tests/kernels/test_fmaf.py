"""qnn_fmaf (wasm_kernels/src/fmaf.c), the float32 fused multiply-add every MLAS function of unary_f32 and
LAYER_NORM's variance rest on, is the correctly rounded fma: compiled for the host with the kernels' clang
and compared with the C library's fmaf on 10 million cases (native/fmaf_check.c): random bit patterns of
every class and sums built to land the double on a float32 midpoint, subnormal and overflowing results too.
In wasm the same double arithmetic runs (IEEE, no excess precision); test_unary_f32.py checks the wasm build
through the functions."""

import os
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
SOURCES = os.path.join(HERE, "..", "..", "wasm_kernels", "src")


def test_qnn_fmaf_is_the_correctly_rounded_fma(tmp_path):
    clang = os.environ.get("CLANG19", "clang-19")   # the compiler wasm_kernels/build.sh uses
    binary = tmp_path / "fmaf_check"
    subprocess.run([clang, "-O2", "-ffp-contract=off", f"-I{SOURCES}", os.path.join(HERE, "native", "fmaf_check.c"),
                    os.path.join(SOURCES, "fmaf.c"), "-lm", "-o", str(binary)], check=True)
    result = subprocess.run([str(binary), "2000000", "20261207"], capture_output=True, text=True)
    cases, mismatches, ties_undone = map(int, result.stdout.split()[-3:])
    assert (cases, mismatches) == (10_000_000, 0), result.stdout
    assert ties_undone > 1_000_000, "the cases built to round twice in double did not"

