"""TFLite RESIZE_BILINEAR and RESIZE_NEAREST_NEIGHBOR (FPN and YOLO upsampling, segmentation heads)
against ai-edge-litert: one-op int8 models written with tflite_builder, every mode (align_corners,
half_pixel_centers, neither), up- and downscaling, batches, channels around the SIMD width, and the
sizes where TFLite's fixed-point nearest rule and its float rule disagree; every variant, bit-exact."""

from importlib import import_module

import numpy as np
import pytest
import qnnweb
from qnnweb_dev.litert_check import assert_matches_litert
from qnnweb import UnsupportedModelError
from qnnweb.exporters import export_tflite
from qnnweb.importers import import_model
from tflite.BuiltinOptions import BuiltinOptions
from qnnweb_dev.tflite_builder import ModelBuilder

OPTIONS = {"RESIZE_BILINEAR": (BuiltinOptions.ResizeBilinearOptions, import_module("tflite.ResizeBilinearOptions")),
           "RESIZE_NEAREST_NEIGHBOR": (BuiltinOptions.ResizeNearestNeighborOptions,
                                       import_module("tflite.ResizeNearestNeighborOptions"))}
MODES = {"legacy": (False, False), "align_corners": (True, False), "half_pixel": (False, True)}


def resize_model(op_type, shape, size, align_corners, half_pixel_centers, output_quantization=(0.05, -3),
                 size_tensor=None):
    kind, module = OPTIONS[op_type]

    def write(b):
        module.Start(b)
        module.AddAlignCorners(b, align_corners)
        module.AddHalfPixelCenters(b, half_pixel_centers)
        return module.End(b)

    m = ModelBuilder()
    x = m.tensor("x", shape, "int8", [0.05], [-3])
    s = size_tensor(m) if size_tensor else m.constant_int32("size", list(size))
    scale, zp = output_quantization
    y = m.tensor("y", [shape[0], size[0], size[1], shape[3]], "int8", [scale], [zp])
    m.op(op_type, [x, s], [y], (kind, write))
    return m.build([x], [y])


SHAPES = [([1, 5, 7, 3], (10, 14)), ([1, 4, 4, 16], (7, 9)), ([2, 6, 5, 20], (3, 2)), ([1, 3, 3, 8], (8, 8)),
          ([1, 13, 13, 33], (26, 26)), ([1, 9, 9, 24], (1, 1)), ([1, 1, 1, 5], (4, 3))]


@pytest.mark.parametrize("op_type", sorted(OPTIONS))
@pytest.mark.parametrize("mode", sorted(MODES))
@pytest.mark.parametrize("shape, size", SHAPES, ids=str)
def test_matches_litert(op_type, mode, shape, size):
    x = np.random.default_rng(sum(shape) + sum(size)).integers(-128, 128, shape).astype(np.int8)
    assert_matches_litert(resize_model(op_type, shape, size, *MODES[mode]), x)


@pytest.mark.parametrize("height, out_height", [(2, 82), (2, 164), (3, 123), (7, 200), (200, 7)])
def test_nearest_follows_tflites_fixed_point_rule(height, out_height):
    """Without options TFLite's kernel maps rows in 16.16 fixed point: here its answer differs from the
    float rule the options use (2 -> 82: output row 41 reads input row 0, not 1)."""
    x = np.random.default_rng(height).integers(-128, 128, [1, height, 3, 4]).astype(np.int8)
    assert_matches_litert(resize_model("RESIZE_NEAREST_NEIGHBOR", [1, height, 3, 4], (out_height, 5), False, False), x)


@pytest.mark.parametrize("op_type", sorted(OPTIONS))
def test_export_keeps_the_options(op_type):
    data = resize_model(op_type, [1, 5, 6, 8], (11, 9), *MODES["half_pixel"])
    x = np.random.default_rng(2).integers(-128, 128, [1, 5, 6, 8]).astype(np.int8)
    (exported,) = qnnweb.load(export_tflite(import_model(data))).run(x)
    np.testing.assert_array_equal(exported, qnnweb.load(data).run(x)[0])


@pytest.mark.parametrize("case, words", [
    (dict(align_corners=True, half_pixel_centers=True), "both set"),
    (dict(output_quantization=(0.1, -3)), "quantization differ"),
    (dict(size_tensor=lambda m: m.tensor("size", [2], "int32")), "constant of two int32"),
])
def test_unsupported_forms_are_named(case, words):
    options = dict(align_corners=False, half_pixel_centers=False)
    options.update({k: case[k] for k in ("align_corners", "half_pixel_centers") if k in case})
    extra = {k: v for k, v in case.items() if k not in options}
    data = resize_model("RESIZE_BILINEAR", [1, 4, 4, 3], (8, 8), options["align_corners"], options["half_pixel_centers"],
                        **extra)
    with pytest.raises(UnsupportedModelError, match=words):
        qnnweb.load(data)
