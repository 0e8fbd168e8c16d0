"""Mutation fuzzing of the TFLite and ONNX parsers: mutators.py makes the mutants of the seed models
(seeds/), campaign.py runs them in worker processes and counts the outcomes."""
