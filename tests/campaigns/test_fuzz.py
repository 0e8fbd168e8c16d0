"""Mutation fuzzing, the bounded CI sample: a fixed set of mutants of the seed models (fixed seed, so
a failure reproduces), each loaded with two kernel variants and run once on zeros, in worker
processes. Every outcome must be a result or a qnnweb.ModelError: no other exception, wasm trap,
crash, hang or runaway memory. Long campaigns: ./build.sh fuzz --cases N [--seed S]."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
import qnnweb
from qnnweb import kernels

from qnnweb_dev.fuzz.campaign import SEEDS_DIR, campaign, format_summary, load_seeds

CASES = int(os.environ.get("QNNWEB_FUZZ_CASES", "700"))   # about 2 minutes on a 2-core machine
SEED = 20260101


def test_seeds_load():
    """The committed seeds load (a seed that does not only tests its first rejection)."""
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
    epsilon of another type than FLOAT, pads beyond 32 bits; --seed 20261211: a MatMul whose dequantized weights
    are a scalar) are refused cleanly."""
    with pytest.raises(qnnweb.ModelError):
        qnnweb.load(path.read_bytes(), variant="scalar")


MEMORY_MUTANTS = sorted((Path(__file__).resolve().parents[1] / "data" / "onnx" / "fuzz_memory").glob("*.onnx"))

# In a fresh interpreter: loads the seed (argv[2]) with both variants, then its mutant (argv[1]); prints the
# mutant's errors and how far the peak RSS grew (ru_maxrss: kilobytes on Linux) past the seed's loads.
_LOAD_MEASURED = """
import resource, sys
import qnnweb
for variant in ("scalar", "relaxed"):
    qnnweb.load(open(sys.argv[2], "rb").read(), variant=variant).close()
before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
data = open(sys.argv[1], "rb").read()
for variant in ("scalar", "relaxed"):
    try:
        qnnweb.load(data, variant=variant)
        print("loaded")
    except qnnweb.ModelError as e:
        print(type(e).__name__, str(e).replace("\\n", " "))
print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) * 1024)
"""


@pytest.mark.parametrize("path", MEMORY_MUTANTS, ids=[p.stem for p in MEMORY_MUTANTS])
def test_former_memory_outcomes_are_cheap_model_errors(path):
    """QOperator conv chains with an input dimension of 16,777,216 (./build.sh fuzz --seed 20261210): a
    2 GB activation arena that the kernels zeroed, touching every page, before refusing the transpose
    after it (a dimension beyond their 2^24). Fresh WebAssembly pages are zero already: the refusal, which
    names the tensor's shape, now costs no resident memory."""
    seed = SEEDS_DIR / "conv_chain_qop_u8.onnx"
    result = subprocess.run([sys.executable, "-c", _LOAD_MEASURED, str(path), str(seed)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    *errors, grown = result.stdout.splitlines()
    assert len(errors) == 2
    for error in errors:
        assert error.startswith("UnsupportedModelError") and "16777216" in error, error
    assert int(grown) < 128 << 20, f"peak RSS grew by {int(grown) >> 20} MiB"


# Node: web/qnnweb.js loads a .qnn (argv) on the scalar kernels; prints its error and the resident memory then
# (bytes; the kernels' memory is still referenced). Not the peak (ru_maxrss): Linux carries the parent's peak
# across fork and exec, so under pytest it would be pytest's own.
NODE_LOAD = """
import { readFileSync } from "node:fs";
import { pathToFileURL } from "node:url";
const [runtime, kernelsPath, modelPath] = process.argv.slice(2);
const qnnweb = await import(pathToFileURL(runtime));
const kernels = qnnweb.instantiateKernelsFromBytes(readFileSync(kernelsPath));
const { meta, body } = qnnweb.parseCompiled(new Uint8Array(readFileSync(modelPath)));
try {
  new qnnweb.Model(kernels, meta, body, "scalar");
  console.log("loaded");
} catch (e) {
  console.log(`${e.name} ${e.message}`);
}
console.log(process.memoryUsage().rss);
"""


def test_former_memory_outcome_is_a_cheap_model_error_in_javascript(tmp_path):
    """The same refusal in web/qnnweb.js (the kernels' allocator is the same), naming the tensor's shape."""
    (tmp_path / "load.mjs").write_text(NODE_LOAD)
    (tmp_path / "model.qnn").write_bytes(qnnweb.compile(MEMORY_MUTANTS[0].read_bytes()))
    (tmp_path / "qnnweb-scalar.wasm").write_bytes(kernels.wasm_bytes("scalar"))
    web = Path(__file__).resolve().parents[2] / "web"
    done = subprocess.run(["node", str(tmp_path / "load.mjs"), str(web / "qnnweb.js"),
                           str(tmp_path / "qnnweb-scalar.wasm"), str(tmp_path / "model.qnn")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    error, resident = done.stdout.splitlines()
    assert error.startswith("ModelError op 1 TRANSPOSE: the kernels refused its copy_strided record") and (
        "16777216" in error), error
    assert int(resident) < 256 << 20, f"resident memory {int(resident) >> 20} MiB"
