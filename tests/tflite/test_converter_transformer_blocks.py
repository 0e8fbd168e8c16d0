"""The transformer pieces as Google's converter writes them, bit-exact with ai-edge-litert in every variant:
committed fixtures of tests/data/tflite/random/ (tools/models/converters/random_graphs.py, made by
litert-torch and quantized by ai-edge-quantizer in each of its full-int8 recipes, with ai-edge-litert's
outputs; `./build.sh tflite-fixtures`):

- layer_norm: patch tokens through nn.LayerNorm, which litert-torch writes out as MEAN, SQUARED_DIFFERENCE,
  ADD eps, RSQRT, MUL and SUB;
- class_token: a constant class token concatenated before the patch tokens, plus position embeddings;
- softmax_written_out: a softmax over another axis than the last, which litert-torch writes out (REDUCE_MAX,
  MAXIMUM, SUB, EXP, SUM, DIV).

ai-edge-quantizer's OCTAV recipes fail on these graphs (the manifest's failures say why): the min/max ones
are the fixtures.

(test_converter_tflite.py runs them too, with the looser bound every fixture has.)"""

import json
from pathlib import Path

import numpy as np
import pytest

import qnnweb

DATA = Path(__file__).resolve().parents[1] / "data" / "tflite"
MANIFEST = json.loads((DATA / "manifest.json").read_text())
CASES = ("layer_norm", "class_token", "softmax_written_out")
FILES = sorted(name for name in MANIFEST["files"] if name.startswith(tuple(f"random/{c}_" for c in CASES)))


def test_every_case_has_a_fixture_or_a_failure_in_every_recipe():
    for case in CASES:
        made = {MANIFEST["files"][name]["recipe"] for name in FILES if name.startswith(f"random/{case}_")}
        failed = {name.rsplit("_", 1)[1] for name in MANIFEST["failures"] if name.startswith(f"random/{case}_")}
        assert {"mmpc", "mmpt", "mmpcsym", "mmptsym"} <= made and made | failed == set(MANIFEST["recipes"]), case


def test_fixtures_hold_the_forms_they_stand_for():
    ops = {case: set().union(*(MANIFEST["files"][n]["ops"] for n in FILES if n.startswith(f"random/{case}_")))
           for case in CASES}
    assert {"MEAN", "SQUARED_DIFFERENCE", "RSQRT"} <= ops["layer_norm"]
    assert "CONCATENATION" in ops["class_token"]
    assert {"REDUCE_MAX", "EXP", "SUM", "DIV"} <= ops["softmax_written_out"]


@pytest.mark.parametrize("variant", qnnweb.VARIANTS)
@pytest.mark.parametrize("name", FILES)
def test_matches_litert_bit_exact(name, variant):
    path = DATA / name
    reference = np.load(path.with_suffix(".npz"))
    model = qnnweb.load(path, variant=variant)
    for i, x in enumerate(reference["input_0"]):
        for k, ours in enumerate(model.run(x)):
            np.testing.assert_array_equal(ours, reference[f"output_{k}"][i], err_msg=f"{name} sample {i} output {k}")
