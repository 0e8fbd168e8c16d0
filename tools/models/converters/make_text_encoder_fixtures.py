#!/usr/bin/env python3
"""Make the text-encoder fixtures of tests/onnx/test_onnx_text_encoders.py: transformers' BERT (the shape of
all-MiniLM-L6, at reduced width) and DistilBERT with seeded random weights, exported by torch.onnx as
transformers.js's conversion exports them (input_ids / attention_mask / token_type_ids int64, opset 14,
sequence length 16, and with symbolic batch and sequence axes) and quantized by onnxruntime's
quantize_dynamic as its "q8" recipe does (MatMulConstBOnly; QUInt8 weights per tensor, or QInt8 weights per
channel with reduce_range), committed under tests/data/onnx/text_encoders/ so that CI (which has no torch)
tests what the real tools write. onnxruntime runs them in the tests themselves.

Run with the arch-sweep virtualenv (torch, transformers, onnxruntime; ``./build.sh arch-sweep --help`` makes it):
  PYTHONPATH=py_frontend .cache/arch-sweep-venv/bin/python tools/models/converters/make_text_encoder_fixtures.py
``--minilm DIR`` writes the full-size all-MiniLM-L6 shape instead (vocabulary 30522, width 384, 6 layers,
12 heads; symbolic lengths; q8 with QUInt8 weights, 23 MB) to DIR/minilm_l6_q8.onnx, for measurements
(docs/performance-log.md). Deterministic: seeded weights.
"""
from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import torch
from onnxruntime.quantization import QuantType, quantize_dynamic

import arch_sweep_models  # noqa: F401 (torchvision's operator schemas, before transformers imports it)
from transformers import BertConfig, BertModel, DistilBertConfig, DistilBertModel  # noqa: E402

ROOT = Path(__file__).resolve().parents[3]
OUT = ROOT / "tests" / "data" / "onnx" / "text_encoders"
SEQUENCE = 16
VOCABULARY = 1000

# quantize_dynamic's settings per fixture suffix (transformers.js's scripts/quantize.py: MatMulConstBOnly,
# per-channel and reduce_range by model type, QUInt8 or QInt8 weights)
MODES = {"q8_u8": dict(weight_type=QuantType.QUInt8, per_channel=False, reduce_range=False),
         "q8_s8_rr": dict(weight_type=QuantType.QInt8, per_channel=True, reduce_range=True)}


class Encoder(torch.nn.Module):
    """The model called by keywords, as transformers.js feeds it: last_hidden_state (and BERT's pooler_output)."""

    def __init__(self, model, names):
        super().__init__()
        self.model, self.names = model, names

    def forward(self, *inputs):
        out = self.model(**dict(zip(self.names, inputs)))
        return (out.last_hidden_state, out.pooler_output) if hasattr(out, "pooler_output") else out.last_hidden_state


def bert():
    config = BertConfig(vocab_size=VOCABULARY, hidden_size=64, num_hidden_layers=2, num_attention_heads=4,
                        intermediate_size=128, max_position_embeddings=64)
    return BertModel(config), ["input_ids", "attention_mask", "token_type_ids"], ["last_hidden_state", "pooler_output"]


def minilm_l6():
    """all-MiniLM-L6-v2's shape (BertConfig's other defaults: 512 positions, GELU)."""
    config = BertConfig(vocab_size=30522, hidden_size=384, num_hidden_layers=6, num_attention_heads=12,
                        intermediate_size=1536)
    return BertModel(config), ["input_ids", "attention_mask", "token_type_ids"], ["last_hidden_state", "pooler_output"]


def distilbert():
    config = DistilBertConfig(vocab_size=VOCABULARY, dim=64, n_layers=2, n_heads=4, hidden_dim=128,
                              max_position_embeddings=64)
    return DistilBertModel(config), ["input_ids", "attention_mask"], ["last_hidden_state"]


def export(name, make, dynamic, folder):
    torch.manual_seed(0)
    model, inputs, outputs = make()
    model.eval()
    example = tuple(torch.ones(1, SEQUENCE, dtype=torch.long) for _ in inputs)
    axes = {n: {0: "batch_size", 1: "sequence_length"} for n in inputs + ["last_hidden_state"]} if dynamic else None
    path = folder / f"{name}.onnx"
    torch.onnx.export(Encoder(model, inputs), example, str(path), input_names=inputs, output_names=outputs,
                      opset_version=14, dynamic_axes=axes, dynamo=False)
    return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--minilm", metavar="DIR", help="write the full-size MiniLM-L6 shape to DIR instead")
    args = parser.parse_args()
    if args.minilm:
        with tempfile.TemporaryDirectory() as tmp:
            target = Path(args.minilm) / "minilm_l6_q8.onnx"
            target.parent.mkdir(parents=True, exist_ok=True)
            quantize_dynamic(str(export("minilm_l6", minilm_l6, True, Path(tmp))), str(target),
                             extra_options={"MatMulConstBOnly": True}, **MODES["q8_u8"])
            print(target, target.stat().st_size, "bytes")
        return
    OUT.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        for name, make, dynamic, modes in (("bert", bert, False, MODES), ("bert_dynamic_axes", bert, True, ["q8_u8"]),
                                           ("distilbert", distilbert, False, ["q8_u8"])):
            path = export(name, make, dynamic, Path(tmp))
            for mode in modes:
                target = OUT / f"{name}_{mode}.onnx"
                quantize_dynamic(str(path), str(target), extra_options={"MatMulConstBOnly": True}, **MODES[mode])
                print(target.relative_to(ROOT), target.stat().st_size, "bytes")


if __name__ == "__main__":
    main()
