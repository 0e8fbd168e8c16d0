"""The reference runtimes' arithmetic, which qnnweb's int8 results follow bit for bit: float32 rounding
(float32.py), onnxruntime's float32 kernels (onnxruntime.py), LiteRT's fixed point (tflite.py), the
values the 256-entry tables are indexed by (byte_values.py). Below both the importers and the
lowerings (qnnweb.ops): it imports neither."""
