"""qnnweb.image.rgb_to_input for an int8 model input: the bytes LiteRT's QUANTIZE makes of the float32
image (pixel - mean) / std, which a float-input twin of the model would quantize with its first op.
Every pixel value in every channel, byte for byte against ai-edge-litert (XNNPACK's convert); and
web/qnnweb-image.js's rgbToInput (node) gives the same bytes."""

import json
import subprocess
from pathlib import Path

import numpy as np
import pytest
from qnnweb_dev.litert_check import litert
from qnnweb_dev.tflite_builder import ModelBuilder

import qnnweb
from qnnweb.image import rgb_to_input

WEB = Path(__file__).resolve().parents[2] / "web"
SHAPE = [1, 16, 16, 3]   # 256 pixels: pixel k is (k, 255 - k, (k + 85) % 256)
RGB = np.stack([np.arange(256), 255 - np.arange(256), (np.arange(256) + 85) % 256], axis=-1).astype(np.uint8)


def quantize_model(scale, zero_point):
    """float32 [1, 16, 16, 3] -> QUANTIZE -> int8: the model's int8 input as its float twin makes it."""
    m = ModelBuilder()
    x = m.tensor("x", SHAPE, "float32")
    y = m.tensor("y", SHAPE, "int8", [scale], [zero_point])
    m.op("QUANTIZE", [x], [y])
    return m.build([x], [y])


CASES = pytest.mark.parametrize("mean, std, scale, zero_point", [
    (127.5, 127.5, 1 / 127.5, -1),   # MediaPipe's face detector: (pixel - 127.5) / 127.5 lands on ties
    (127.5, 127.5, 1 / 127.5, 0),
    (128.0, 128.0, 1 / 128, 0),
    (0.0, 255.0, 1 / 255, -128),
    (123.675, 58.395, 0.0186584, -14),
])

# Node: web/qnnweb-image.js's rgbToInput on argv's JSON {rgb, tensor, mean, std}; prints the input's values.
NODE_RGB_TO_INPUT = """
import { pathToFileURL } from "node:url";
const [image, args] = process.argv.slice(2);
const { rgbToInput } = await import(pathToFileURL(image));
const { rgb, tensor, mean, std } = JSON.parse(args);
console.log(JSON.stringify(Array.from(rgbToInput(rgb, tensor, mean, std))));
"""


@CASES
def test_int8_input_is_litert_quantize_of_the_float_image(mean, std, scale, zero_point):
    data = quantize_model(scale, zero_point)
    x = (RGB.astype(np.float32) - np.float32(mean)) / np.float32(std)
    expected = litert(data, x.reshape(SHAPE))
    info = qnnweb.load(data, variant="scalar").outputs[0]   # the int8 tensor: what an int8 input's info says
    ours = rgb_to_input(RGB.tobytes(), info, [mean] * 3, [std] * 3)
    np.testing.assert_array_equal(np.frombuffer(bytes(ours), np.int8), expected.ravel())


def test_face_detector_pixels_lie_on_ties():
    """Why the arithmetic matters: with mean = std = 127.5 and scale 1 / 127.5, every pixel's float
    lands within float32 rounding of a .5; LiteRT rounds the float32 product half to even, which
    rounding the double quotient half away from zero disagrees with for a quarter of the pixels."""
    scale = float(np.float32(1 / 127.5))
    exact = (np.arange(256) - 127.5) / 127.5 / scale
    assert np.all(np.abs(exact - np.floor(exact) - 0.5) < 1e-4)
    data = quantize_model(scale, -1)
    info = qnnweb.load(data, variant="scalar").outputs[0]
    ours = np.frombuffer(bytes(rgb_to_input(RGB.tobytes(), info, [127.5] * 3, [127.5] * 3)), np.int8)
    half_away = np.clip(np.sign(exact) * np.floor(np.abs(exact) + 0.5) - 1, -128, 127)[RGB.ravel()]
    assert 0.2 < np.mean(ours != half_away) < 0.3


@CASES
def test_javascript_rgb_to_input_gives_the_same_bytes(mean, std, scale, zero_point, tmp_path):
    info = qnnweb.load(quantize_model(scale, zero_point), variant="scalar").outputs[0]
    ours = np.frombuffer(bytes(rgb_to_input(RGB.tobytes(), info, [mean] * 3, [std] * 3)), np.int8)
    script = tmp_path / "rgb_to_input.mjs"
    script.write_text(NODE_RGB_TO_INPUT)
    tensor = {"shape": info.shape, "size": info.size, "dtype": info.dtype, "scale": info.scale,
              "zero_point": info.zero_point}
    args = json.dumps({"rgb": RGB.ravel().tolist(), "tensor": tensor, "mean": [mean] * 3, "std": [std] * 3})
    done = subprocess.run(["node", str(script), str(WEB / "qnnweb-image.js"), args], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout) == ours.tolist()
