"""Numpy reference of the int8 ops, written from the TFLite int8 semantics as qnnweb defines them
(wasm_kernels/include/qnnweb.h, wasm_kernels/src/operators/*.c).

Every function takes plain numpy arrays and Python numbers and is independent of qnnweb: the
quantization parameters a test gives its graph are the ones it gives these functions.

Conventions
  * activations are NHWC int8; conv weights OHWI int8, depthwise weights [1, KH, KW, C*M] int8;
    scales per tensor or per output channel; weights are symmetric (zero point 0) except that conv2d
    and fully_connected take a per-tensor weight zero point w_zp; bias is int32.
  * padding is (top, bottom, left, right); stride and dilation are (h, w).
  * fp32 requantization (XNNPACK "minmax_fp32", qnnweb.h): float32(acc) * float32(scale), clamped
    in float32 to [min - zp, max - zp], rounded half to even, plus zp.
  * convolution requantization scales are float32(float32(input_scale * weight_scale) / output_scale),
    as the frontend, XNNPACK and onnxruntime compute them; other ops' scales are computed in float64
    and rounded to float32.

Modules: common (helpers), conv, elementwise, norm, pooling, resize; every name is here too
(`from qnnweb_dev.reference import int8 as ref; ref.conv2d(...)`).
"""

from .common import *  # noqa: F401,F403
from .conv import *  # noqa: F401,F403
from .elementwise import *  # noqa: F401,F403
from .pooling import *  # noqa: F401,F403
from .norm import *  # noqa: F401,F403
from .resize import *  # noqa: F401,F403
