"""What prepares the models: the demo models (prepare_*_models.py) and the TFLite converter fixtures
(converters/) (tools/README.md)."""
