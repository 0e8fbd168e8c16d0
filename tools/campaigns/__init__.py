"""The long campaigns: difftest.py (differential, against onnxruntime) and fuzz.py (mutation fuzzing);
their code is in qnnweb_dev (tools/README.md)."""
