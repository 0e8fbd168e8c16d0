"""Classify a photo, and find the faces in another, with qnnweb in Pyodide: a complete example for
Python users.

Run it in any Pyodide that a qnnweb server served (same origin: the server sends
Cross-Origin-Resource-Policy: same-origin), for instance

- the page /static/examples/index.html of the server, which loads Pyodide and runs this file;
- the demo page's Python panel (it starts with this file), or its DevTools console (the page's
  Python runs in a worker; runPython returns the script's output):
      await qnnwebDemo.runPython(await (await fetch("static/examples/classify.py")).text())
- a JupyterLite / PyScript-like notebook served from the same origin: paste it into a cell.

It uses top-level ``await`` (fine in Pyodide's runPythonAsync and in notebook cells; not a plain
CPython script). Set ``MODEL`` / ``PHOTO`` (and ``SERVER``) in the globals before running it to
classify something else, ``DETECTOR`` / ``FACES`` for the detection part.

What it does, without numpy (Pyodide has none offline):

1. installs qnnweb with ``pyodide_js.loadPackage("qnnweb")`` where Pyodide started with the
   server's lock file (/api/wheels/pyodide-lock.json), else the wheels the server lists in
   /api/wheels by URL (micropip would need PyPI; loadPackage works offline);
2. ``model = await qnnweb.load_async(url)`` with the model's URL from /api/models;
3. fetches the photo's bytes and lets the browser decode them (``createImageBitmap`` on a Blob,
   no colour management, read back through an ``OffscreenCanvas``), then resizes as the model's
   metadata says: the shorter side to ``preprocess["resize"]`` (the longer to
   int(resize * long / short)) and a centred ``preprocess["crop"]`` at round((size - crop) / 2),
   or straight to the input size when there is no numeric ``resize``. Photos up to 1.5 megapixels
   are resized with Pillow's own arithmetic (``Image.BILINEAR``, antialiased when shrinking) in
   pure Python: byte-identical to Pillow and to the demo page, well under a second. Larger ones go
   through the canvas's high-quality smoothing instead (the browser's filter, fast, *not*
   Pillow-exact: pixels may differ by a few levels, so scores can differ slightly);
4. ``qnnweb.image.rgb_to_input`` normalises ((pixel - mean) / std) and lays the pixels out as the
   model wants (NCHW for ONNX, NHWC for TFLite), ``model.run`` runs it, and
   ``qnnweb.image.top_k(..., logits=True)`` turns logits into probabilities (softmax);
5. prints the top-5 with the labels of /api/models;
6. runs the face detector (BlazeFace) on another photo and post-processes its raw outputs with
   ``qnnweb.vision`` as its sidecar's ``postprocess`` says (MediaPipe's SSD anchors and box
   decoding, weighted non-maximum suppression), then prints each face's box and keypoints.
"""

import importlib.util
import time
from urllib.parse import urljoin

import js
import pyodide_js
from pyodide.ffi import to_js


def server_root(href):
    """The qnnweb server's root URL, from the URL of a page or worker it served (its pages and
    workers are under <root>/static/; the demo page is <root>/): under a path prefix too."""
    href = href.split("#")[0].split("?")[0]
    return href.split("/static/")[0] + "/" if "/static/" in href else href.rsplit("/", 1)[0] + "/"


SERVER = globals().get("SERVER") or server_root(str(js.location.href))  # the qnnweb server (same origin)
MODEL = globals().get("MODEL") or "efficientnet_lite0_u8s8"
PHOTO = globals().get("PHOTO") or "coffee.png"  # a name from /api/samples, or any URL
DETECTOR = globals().get("DETECTOR") or "face_detection_short_range"  # a model whose task is detection
FACES = globals().get("FACES") or "astronaut.png"


async def fetch_json(url):
    response = await js.fetch(url)
    if not response.ok:
        raise OSError(f"{url}: HTTP {response.status}")
    return (await response.json()).to_py()


async def install_qnnweb(server):
    """Install qnnweb and its dependencies (flatbuffers, tflite, protobuf) from the server's wheels:
    by name where Pyodide started with the server's lock file (``lockFileURL:
    "/api/wheels/pyodide-lock.json"``, as this server's pages do), else by their URLs."""
    if importlib.util.find_spec("qnnweb") is not None:
        return  # already there (e.g. in the demo page's Pyodide)
    if hasattr(pyodide_js.lockfile.packages, "qnnweb"):
        await pyodide_js.loadPackage("qnnweb")
        return
    wheels = (await fetch_json(urljoin(server, "api/wheels")))["wheels"]
    await pyodide_js.loadPackage(to_js([urljoin(server, w) for w in wheels]))


def _js_object(d):
    return to_js(d, dict_converter=js.Object.fromEntries)


# Pillow's bilinear resampling (Image.resize(size, Image.BILINEAR), ImagingResample) in pure
# Python: a triangle filter widened by the scale when shrinking (antialiased), 22-bit fixed-point
# coefficients, horizontal pass then vertical, each rounded to 8 bits; a pass whose size does not
# change is skipped. Every inner sum is one C-level sum(map(mul, slice, coefficients)) call.
EXACT_MAX_PIXELS = 1_500_000  # larger photos are resized by the canvas (fast, not Pillow-exact)
_BITS = 22


def _coefficients(in_size, out_size):
    scale = in_size / out_size
    filterscale = max(scale, 1.0)
    support = filterscale  # the triangle filter's support (1) times the scale
    ss = 1.0 / filterscale
    result = []
    for xx in range(out_size):
        center = (xx + 0.5) * scale
        xmin = max(int(center - support + 0.5), 0)
        n = min(int(center + support + 0.5), in_size) - xmin
        weights = [max(0.0, 1.0 - abs((x + xmin - center + 0.5) * ss)) for x in range(n)]
        total = 0.0
        for w in weights:
            total += w
        if total != 0.0:
            weights = [w / total for w in weights]
        one = 1 << _BITS
        result.append((xmin, [int(-0.5 + w * one) if w < 0 else int(0.5 + w * one) for w in weights]))
    return result


def _clip8(acc):
    v = (acc + (1 << (_BITS - 1))) >> _BITS
    return 0 if v < 0 else 255 if v > 255 else v


def resize_crop_exact(pixels, channels, w0, h0, rw, rh, x0, y0, cw, ch):
    """``pixels`` (w0 x h0, ``channels`` bytes each) resized to rw x rh as Pillow's BILINEAR does
    it, then the window (x0, y0, cw, ch) of the result: cw * ch * 3 RGB bytes."""
    from operator import mul

    vert = _coefficients(h0, rh)[y0:y0 + ch] if rh != h0 else None
    if vert:
        lo = min(ymin for ymin, _ in vert)
        hi = max(ymin + len(k) for ymin, k in vert)
    else:
        lo, hi = y0, y0 + ch
    rows = hi - lo
    tmp = bytearray(rows * cw * 3)  # horizontal pass (or the window's columns) over rows lo..hi
    row_bytes = w0 * channels
    if rw != w0:
        horiz = _coefficients(w0, rw)[x0:x0 + cw]
        for y in range(rows):
            base = (y + lo) * row_bytes
            out = []
            for xmin, k in horiz:
                start = base + xmin * channels
                stop = start + len(k) * channels
                for c in range(3):
                    out.append(_clip8(sum(map(mul, pixels[start + c:stop:channels], k))))
            tmp[y * cw * 3:(y + 1) * cw * 3] = bytes(out)
    else:
        for y in range(rows):
            base = (y + lo) * row_bytes + x0 * channels
            for c in range(3):
                tmp[y * cw * 3 + c:(y + 1) * cw * 3:3] = pixels[base + c:base + cw * channels:channels]
    if not vert:
        return bytes(tmp)
    out = bytearray(cw * ch * 3)
    stride = cw * 3
    for yy, (ymin, k) in enumerate(vert):
        start = (ymin - lo) * stride
        stop = start + len(k) * stride
        out[yy * stride:(yy + 1) * stride] = bytes(
            _clip8(sum(map(mul, tmp[start + i:stop:stride], k))) for i in range(stride))
    return bytes(out)


def crop_plan(preprocess, w0, h0, width, height):
    """(rw, rh, x0, y0, cw, ch): resize the photo to rw x rh, keep the window (x0, y0, cw, ch)."""
    resize = preprocess.get("resize")
    if not isinstance(resize, (int, float)) or isinstance(resize, bool):
        return width, height, 0, 0, width, height  # straight to the input size
    resize = int(resize)  # the shorter side; the longer is int(resize * long / short)
    rw, rh = (resize, int(resize * h0 / w0)) if w0 <= h0 else (int(resize * w0 / h0), resize)
    crop = preprocess.get("crop") or [height, width]
    ch, cw = (crop, crop) if isinstance(crop, int) else crop
    return rw, rh, round((rw - cw) / 2), round((rh - ch) / 2), cw, ch  # Python's round, as the sidecars say


async def photo_to_rgb(photo_bytes, preprocess, width, height, exact=None):
    """Decode ``photo_bytes`` in the browser and return ``width * height * 3`` RGB bytes, resized
    and centre-cropped as ``preprocess`` (the model's metadata) says. ``exact`` (default: photos
    up to EXACT_MAX_PIXELS) resizes with Pillow's arithmetic in Python, else with the canvas."""
    blob = js.Blob.new(to_js([to_js(photo_bytes)]))
    bitmap = await js.createImageBitmap(blob, _js_object({"colorSpaceConversion": "none",
                                                          "premultiplyAlpha": "none"}))
    w0, h0 = bitmap.width, bitmap.height
    rw, rh, x0, y0, cw, ch = crop_plan(preprocess, w0, h0, width, height)
    if exact is None:
        exact = w0 * h0 <= EXACT_MAX_PIXELS
    if exact:
        canvas = js.OffscreenCanvas.new(w0, h0)
        ctx = canvas.getContext("2d", _js_object({"willReadFrequently": True}))
        ctx.drawImage(bitmap, 0, 0)
        bitmap.close()
        rgba = ctx.getImageData(0, 0, w0, h0).data.to_bytes()
        rgb = resize_crop_exact(rgba, 4, w0, h0, rw, rh, x0, y0, cw, ch)
        if (cw, ch) != (width, height):
            rgb = resize_crop_exact(rgb, 3, cw, ch, width, height, 0, 0, width, height)
        return rgb
    canvas = js.OffscreenCanvas.new(rw, rh)
    ctx = canvas.getContext("2d", _js_object({"willReadFrequently": True}))
    ctx.imageSmoothingEnabled = True
    ctx.imageSmoothingQuality = "high"
    ctx.drawImage(bitmap, 0, 0, rw, rh)
    bitmap.close()
    if (cw, ch) != (width, height):  # a crop that is not the input size: one more resize
        small = js.OffscreenCanvas.new(width, height)
        sctx = small.getContext("2d", _js_object({"willReadFrequently": True}))
        sctx.imageSmoothingQuality = "high"
        sctx.drawImage(canvas, x0, y0, cw, ch, 0, 0, width, height)
        ctx, x0, y0 = sctx, 0, 0
    rgba = ctx.getImageData(x0, y0, width, height).data.to_bytes()
    rgb = bytearray(width * height * 3)
    for c in range(3):  # drop alpha: slice assignments, fast without numpy
        rgb[c::3] = rgba[c::4]
    return bytes(rgb)


def input_size(shape):
    """(width, height) of an NCHW ([1, 3, H, W]) or NHWC ([1, H, W, 3]) image input."""
    if len(shape) == 4 and shape[1] == 3 and shape[3] != 3:
        return shape[3], shape[2]
    return shape[2], shape[1]


async def run_on_photo(photo, model_name, server):
    """(the model's /api/models record, the model, its input's RGB pixels (after resize and crop), its
    outputs) on ``photo`` (a sample's name or a URL)."""
    await install_qnnweb(server)
    import qnnweb
    import qnnweb.image

    record = await fetch_json(urljoin(server, f"api/models/{model_name}"))
    model = await qnnweb.load_async(urljoin(server, record["url"]))
    print(f"{record['file']}: {model.variant} kernels, input {list(model.inputs[0].shape)} {model.inputs[0].dtype}")

    url = photo if "/" in photo else urljoin(server, f"samples/{photo}")
    response = await js.fetch(url)
    if not response.ok:
        raise OSError(f"{url}: HTTP {response.status}")
    photo_bytes = (await response.arrayBuffer()).to_bytes()

    pre = record.get("preprocess") or {}
    width, height = input_size(model.inputs[0].shape)
    rgb = await photo_to_rgb(photo_bytes, pre, width, height)
    x = qnnweb.image.rgb_to_input(rgb, model.inputs[0], pre.get("mean", [0, 0, 0]), pre.get("std", [1, 1, 1]))

    t0 = time.perf_counter()
    outputs = model.run(x)
    print(f"inference: {(time.perf_counter() - t0) * 1000:.1f} ms")
    return record, model, rgb, outputs


async def classify(photo, model_name=MODEL, server=SERVER, k=5):
    """Top-k [(label, probability)] of ``model_name`` on ``photo`` (a sample's name or a URL)."""
    record, model, rgb, (scores,) = await run_on_photo(photo, model_name, server)  # installs qnnweb
    import qnnweb.image

    globals()["LAST_INPUT"] = rgb  # the classifier's pixels, to look at
    logits = "logit" in ((record.get("output") or {}).get("meaning") or "")
    top = qnnweb.image.top_k(scores, model.outputs[0], k, logits=logits)
    labels = record.get("labels") or []
    return [(labels[i] if i < len(labels) else f"class {i}", p) for i, p in top]


async def detect(photo, model_name=DETECTOR, server=SERVER):
    """The detections (qnnweb.vision.Detection: box (ymin, xmin, ymax, xmax) and keypoints (x, y),
    normalized to the model's input, score) of an SSD-style detector on ``photo``, as its sidecar's
    ``postprocess`` says: the outputs holding boxes and scores, the anchors, the score threshold and
    the non-maximum suppression."""
    record, model, _, outputs = await run_on_photo(photo, model_name, server)  # installs qnnweb
    from qnnweb import vision
    from qnnweb.image import dequantize

    values = {t.name: dequantize(v, t) for v, t in zip(outputs, model.outputs)}
    return vision.ssd_detections(values, record["postprocess"])


async def main():
    top = await classify(PHOTO, MODEL, SERVER)
    print(f"top-{len(top)} for {PHOTO}:")
    for rank, (label, p) in enumerate(top, 1):
        print(f"{rank}. {label:<24} {p:7.2%}")
    models = {m["name"] for m in (await fetch_json(urljoin(SERVER, "api/models")))["models"]}
    if DETECTOR in models:
        faces = await detect(FACES, DETECTOR, SERVER)
        print(f"{len(faces)} face(s) in {FACES}:")
        for face in faces:
            ymin, xmin, ymax, xmax = face.box
            points = " ".join(f"({x:.3f}, {y:.3f})" for x, y in face.keypoints)
            print(f"face {face.score:.2f}: box y {ymin:.3f}-{ymax:.3f} x {xmin:.3f}-{xmax:.3f}, keypoints {points}")
    return top


top5 = await main()  # noqa: F704 (top-level await: Pyodide's runPythonAsync, notebook cells)
