"""Exporters: a ``qnnweb.graph.Graph`` written back out in another engine's format."""

from .tflite import export_tflite

__all__ = ["export_tflite"]
