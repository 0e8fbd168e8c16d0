"""Mutation fuzzing, the bounded CI sample: a fixed set of mutants of the seed models (fixed seed, so
a failure reproduces), each loaded with two kernel variants and run once on zeros, in worker
processes. Every outcome must be a result or a qnnweb.ModelError: no other exception, wasm trap,
crash, hang or runaway memory. Long campaigns: ./build.sh fuzz --cases N [--seed S]."""

import os
from pathlib import Path

import pytest

from qnnweb_dev.fuzz.campaign import campaign, format_summary, load_seeds

CASES = int(os.environ.get("QNNWEB_FUZZ_CASES", "700"))   # about 2 minutes on a 2-core machine
SEED = 20260101


def test_seeds_load():
    """The committed seeds load (a seed that does not only tests its first rejection)."""
    import qnnweb

    seeds = load_seeds(demo=False)
    assert len(seeds) >= 8
    for name, (_, data) in seeds.items():
        qnnweb.load(data, variant="scalar")


@pytest.mark.slow
def test_fuzz_sample(tmp_path):
    seeds = load_seeds()
    if not any(fmt == "onnx" for fmt, _ in seeds.values()) or not any(fmt == "tflite" for fmt, _ in seeds.values()):
        pytest.fail("seed models are missing (tools/qnnweb_dev/fuzz/seeds/)")
    summary = campaign(CASES, seed=SEED, workers=1, timeout=60.0, seeds=seeds, out_dir=tmp_path / "fuzz")
    print(format_summary(summary))
    assert summary["failures"] == 0, (
        f"mutants escaped (saved under {tmp_path / 'fuzz'}; reproduce with "
        f"./build.sh fuzz --cases {CASES} --seed {SEED}):\n{format_summary(summary)}")
    # The sample must exercise both outcomes, or the mutator has gone blind.
    assert summary["counts"].get("ok", 0) > CASES // 20 and summary["counts"].get("rejected", 0) > CASES // 5


ESCAPES = sorted((Path(__file__).resolve().parents[1] / "data" / "onnx" / "fuzz_escapes").glob("*.onnx"))


@pytest.mark.parametrize("path", ESCAPES, ids=[p.stem for p in ESCAPES])
def test_former_escapes_are_model_errors(path):
    """Mutants that once escaped the error contract (./build.sh fuzz --seed 20261210: a quantization with
    no zero point, a Concat of scalars, a shared bias with fewer scales than channels; mutants of difftest
    models that run the float32 path: a Transpose perm out of range, on int8 and on float32 values, an
    epsilon of another type than FLOAT, pads beyond 32 bits) are refused cleanly."""
    import qnnweb

    with pytest.raises(qnnweb.ModelError):
        qnnweb.load(path.read_bytes(), variant="scalar")
