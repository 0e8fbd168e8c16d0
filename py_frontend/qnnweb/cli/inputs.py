"""A model's inputs from the command line: image files preprocessed as the model's metadata says (as
the demo page does: web/qnnweb-image.js), .npy arrays, or random / zero data when none is given."""

import array
import io
import random
from pathlib import Path

from ..image import is_nchw, rgb_to_input
from ..model import as_array
from .errors import InputFileError, UsageError
from .files import read_bytes

try:  # optional: images need Pillow, .npy files numpy (pip install qnnweb[cli])
    from PIL import Image
except ImportError:
    Image = None
try:
    import numpy
except ImportError:
    numpy = None

IMAGE_SUFFIXES = {".jpg", ".jpeg", ".png", ".bmp", ".gif", ".webp", ".tif", ".tiff"}


def model_inputs(model, files, metadata, zeros=False):
    """(the inputs in the model's order, a line saying where they came from)."""
    if not files:
        made = [zero_input(info) if zeros else random_input(info, random.Random(i)) for i, info in enumerate(model.inputs)]
        return made, "zero inputs" if zeros else "random inputs (seed 0: float32 in [-1, 1), int8/uint8 any value)"
    if len(files) != len(model.inputs):
        raise UsageError(f"the model has {len(model.inputs)} input(s) ({', '.join(i.name for i in model.inputs)}), "
                         f"got {len(files)} --input file(s)")
    made = [file_input(info, path, metadata) for info, path in zip(model.inputs, files)]
    return made, "inputs from " + ", ".join(str(p) for p in files)


def zero_input(info):
    return as_array(bytes(info.nbytes), info.dtype, info.shape)


def random_input(info, rng):
    if info.dtype == "float32":
        data = array.array("f", [rng.uniform(-1.0, 1.0) for _ in range(info.size)]).tobytes()
    elif info.dtype in ("int8", "uint8"):
        data = rng.randbytes(info.nbytes)
    else:  # indices and sizes: random ones would mostly be out of range
        data = bytes(info.nbytes)
    return as_array(data, info.dtype, info.shape)


def file_input(info, path, metadata):
    path = Path(path)
    if path.suffix.lower() == ".npy":
        return npy_input(info, path)
    if path.suffix.lower() in IMAGE_SUFFIXES:
        return image_input(info, path, metadata.get("preprocess") or {})
    raise InputFileError(f"--input {path}: expected an image ({', '.join(sorted(IMAGE_SUFFIXES))}) or a .npy file")


def npy_input(info, path):
    if numpy is None:
        raise UsageError("reading .npy inputs needs numpy: pip install numpy")
    try:
        x = numpy.load(io.BytesIO(read_bytes(path, "input")), allow_pickle=False)
    except ValueError as error:
        raise InputFileError(f"--input {path} is not a .npy array: {error}") from None
    if x.dtype != numpy.dtype(info.dtype) or x.size != info.size:
        raise InputFileError(f"--input {path}: {x.dtype} {list(x.shape)}, but input {info.name} is "
                             f"{info.dtype} {list(info.shape)}")
    return x


def image_input(info, path, preprocess):
    if Image is None:
        raise UsageError("reading images needs Pillow: pip install pillow")
    try:
        photo = Image.open(io.BytesIO(read_bytes(path, "input"))).convert("RGB")
    except OSError:
        raise InputFileError(f"--input {path} is not an image Pillow reads") from None
    if len(info.shape) != 4 or 3 not in (info.shape[1], info.shape[3]):
        raise InputFileError(f"--input {path}: input {info.name} {list(info.shape)} is not an RGB image")
    height, width = info.shape[2:4] if is_nchw(info.shape) else info.shape[1:3]
    rgb = resized(photo, preprocess, width, height).tobytes()
    data = rgb_to_input(rgb, info, preprocess.get("mean", (0.0, 0.0, 0.0)), preprocess.get("std", (1.0, 1.0, 1.0)))
    return as_array(bytes(data), info.dtype, info.shape)


def resized(photo, preprocess, width, height):
    """The sidecar's plan (web/qnnweb-image.js preprocessPlan): a numeric ``resize`` takes the shorter
    side to it, then a centred ``crop`` (default: the input size); otherwise straight to the input size."""
    size = preprocess.get("resize")
    if not isinstance(size, int) or isinstance(size, bool):
        return photo.resize((width, height), Image.BILINEAR)
    w, h = photo.size
    rw, rh = (size, int(size * h / w)) if w <= h else (int(size * w / h), size)
    crop = preprocess.get("crop")
    cw, ch = (crop, crop) if isinstance(crop, int) else (crop[1], crop[0]) if crop else (width, height)
    if cw > rw or ch > rh:
        raise InputFileError(f"crop {cw}x{ch} is larger than the resized photo {rw}x{rh}")
    left, top = round((rw - cw) / 2), round((rh - ch) / 2)
    return photo.resize((rw, rh), Image.BILINEAR).crop((left, top, left + cw, top + ch))
