"""tools/bench/op_models.py: the layer-sized models for engine-against-engine op timings compute what
ai-edge-litert computes (so a timing of LiteRT.js on them times the same work), byte for byte, in every
variant."""

import sys

import numpy as np
import pytest
from bench import op_models
from qnnweb_dev.litert_check import assert_matches_litert


@pytest.mark.parametrize("name", sorted(op_models.MODELS))
def test_op_model_matches_litert(name):
    size, channels, chain = op_models.MODELS[name]
    data = op_models.build(size, channels, chain)
    x = np.random.default_rng(1).uniform(-10, 10, (1, size, size, channels)).astype(np.float32)
    assert_matches_litert(data, x)


def test_writes_every_model(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["op_models.py", "--out", str(tmp_path)])
    op_models.main()
    assert sorted(p.stem for p in tmp_path.glob("*.tflite")) == sorted(op_models.MODELS)
