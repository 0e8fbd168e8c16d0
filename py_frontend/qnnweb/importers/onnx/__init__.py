"""ONNX (quantized) -> Graph.

Both forms onnxruntime's quantizer writes are read into the same int8 IR:
- QDQ: float ops wrapped in DequantizeLinear / QuantizeLinear. A float op whose activation inputs are
  dequantized int8 tensors, whose weights are dequantized int8 constants and whose output is
  quantized again is fused into one int8 op, so the model runs int8 end to end.
- QOperator: QLinearConv, QLinearMatMul, QGemm, QLinearAdd, ... map to the same int8 ops directly.

uint8 activations (onnxruntime's default "u8s8") are exactly int8 activations with the zero point
moved by 128 (q_s8 = q_u8 - 128): they become int8 here and only the model's own uint8 inputs or
outputs are converted, at the edges. 4-D activations are NCHW in ONNX and NHWC in the IR: the
importer transposes at the edges and wherever a layout-sensitive op (Reshape of a feature map) needs
it; weights keep their ONNX layout and are repacked by the kernels in C.

Every op that cannot run is collected and reported together (UnsupportedModelError).
"""

from .base import ImporterBase
from .conv import ConvMixin
from .elementwise import ElementwiseMixin
from .folding import FoldingMixin
from .pooling import PoolingMixin
from .proto import parse_model
from .qdq import QdqMixin
from .quantization import QuantizationMixin
from .resize import ResizeMixin
from .shape import ShapeMixin
from .slicing import SlicingMixin
from .unary import UnaryMixin


class OnnxImporter(FoldingMixin, ConvMixin, ElementwiseMixin, UnaryMixin, PoolingMixin, QdqMixin, ResizeMixin,
                   ShapeMixin, SlicingMixin, QuantizationMixin, ImporterBase):
    """One import: ``OnnxImporter(model).run()`` -> Graph. Each op family's handlers are a mixin."""


def import_onnx(data, input_shapes=None):
    return OnnxImporter(parse_model(data), input_shapes or {}).run()
