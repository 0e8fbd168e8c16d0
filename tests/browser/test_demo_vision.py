"""Models beyond classification in the demo page, per kernel variant, against CPython: MediaPipe's face
detector (BlazeFace, boxes + keypoints) and Face Mesh (468 landmarks), int8 files made by
ai-edge-quantizer from the trained float models (data/models, ``./build.sh build vision-models``); a
segmentation model (EfficientNet-Lite0's classifier at every position) and ESPCN x2 super-resolution,
int8 by onnxruntime's quantize_static (``./build.sh build pixel-models``).

The page must feed the model Pillow's pixels, get exactly CPython qnnweb's outputs (same variant), turn
them into the boxes / points CPython's ``qnnweb.vision`` gives (web/qnnweb-vision.js is its twin), list
them, and draw them over the photo where they are.
"""

from __future__ import annotations

import json
import math

import pytest
from browser_pages import pillow_input
from PIL import Image

DETECTOR = "face_detection_short_range"
MESH = "face_landmark"
# where the face's centre (y, x) is in the photo's centre square (read off the photos)
FACES = {"astronaut.png": (0.25, 0.46), "grace_hopper.jpg": (0.31, 0.51)}


def sidecar(demo_folders, name: str) -> dict:
    return json.loads((demo_folders["models"] / f"{name}.json").read_text())


def cpython_outputs(demo_folders, file: str, variant: str, rgb: bytes, pre: dict) -> dict:
    """{output name: dequantized values} of the model in CPython qnnweb (wasmtime) on ``rgb``."""
    import qnnweb
    from qnnweb.image import dequantize, rgb_to_input

    model = qnnweb.load(demo_folders["models"] / file, variant=variant)
    outs = model.run(rgb_to_input(rgb, model.inputs[0], pre["mean"], pre["std"]))
    return {t.name: dequantize(out, t) for t, out in zip(model.outputs, outs)}


def page_run(demo, demo_folders, variant: str, name: str, photo: str, task: str, suffix: str = ".tflite"):
    """Run ``name`` on ``photo`` in the page; check the run, its input and its raw outputs against
    CPython's. Returns (sidecar, CPython's outputs)."""
    state = demo.run(name, photo)
    assert state == "done", f"{name} on {photo} with {variant}: {demo.error_text()!r}"
    assert demo.results_meta() == {"model": name, "photo": photo, "variant": variant, "engine": "qnnweb.js",
                                   "task": task}
    side = sidecar(demo_folders, name)
    pre = side["preprocess"]
    rgb = bytes(demo.page.evaluate("Array.from(window.qnnwebDemo.lastInput)"))
    if (side.get("postprocess") or {}).get("roi"):
        # the square of the photo the detector's face gave: the photo resized (Pillow) and that window cut out
        plan = demo.page.evaluate("window.qnnwebDemo.lastPreprocess")
        image = Image.open(demo_folders["data"] / "samples" / photo).convert("RGB")
        image = image.resize((plan["rw"], plan["rh"]), Image.BILINEAR)
        window = image.crop((plan["x0"], plan["y0"], plan["x0"] + plan["cw"], plan["y0"] + plan["ch"]))
        assert rgb == window.tobytes(), "the page's input is not Pillow's"
    else:
        assert rgb == pillow_input(demo_folders["data"] / "samples" / photo, pre), "the page's input is not Pillow's"
    want = cpython_outputs(demo_folders, name + suffix, variant, rgb, pre)
    got = demo.page.evaluate("window.qnnwebDemo.lastOutput")
    assert got.keys() == want.keys() and all(got[k] == want[k] for k in want), \
        f"{name} on {photo} with {variant}: outputs differ from CPython's"
    return side, want


def overlay_pixels(demo, box=None) -> tuple[list[int], int]:
    """The overlay canvas's size and how many of its pixels are drawn (in ``box``: x0, y0, x1, y1)."""
    return demo.page.evaluate("""(box) => {
      const c = document.getElementById('overlay');
      const [x0, y0, x1, y1] = box || [0, 0, c.width, c.height];
      const data = c.getContext('2d').getImageData(x0, y0, x1 - x0, y1 - y0).data;
      let n = 0;
      for (let i = 3; i < data.length; i += 4) if (data[i]) n++;
      return [[c.width, c.height], n];
    }""", box)


def close(a, b, tol=1e-9) -> bool:
    return all(math.isclose(x, y, rel_tol=0, abs_tol=tol) for x, y in zip(a, b, strict=True))


@pytest.mark.parametrize("photo", list(FACES))
def test_face_detector_boxes_match_cpython_and_are_drawn(variant_page, demo_folders, photo):
    from qnnweb import vision

    variant, demo = variant_page
    side, outs = page_run(demo, demo_folders, variant, DETECTOR, photo, "detection")
    want = vision.ssd_detections(outs, side["postprocess"])
    got = demo.page.evaluate("window.qnnwebDemo.lastDetections")
    assert len(got) == len(want) == 1, f"{photo} with {variant}: page {got}, CPython {want}"
    (g,), (w,) = got, want
    # the scores go through exp (two libms) and weight the merged boxes: equal to rounding
    assert math.isclose(g["score"], w.score, rel_tol=1e-12)
    assert w.score > 0.8  # a face scores well above 0.5 (its int8 score head calibrated on face crops)
    assert close(g["box"], w.box) and all(close(p, q) for p, q in zip(g["keypoints"], w.keypoints, strict=True))
    ymin, xmin, ymax, xmax = w.box
    centre = FACES[photo]
    assert abs((ymin + ymax) / 2 - centre[0]) < 0.1 and abs((xmin + xmax) / 2 - centre[1]) < 0.1

    # listed, with the box
    items = demo.page.eval_on_selector_all("#results li", "els => els.map(e => [e.dataset.label, e.dataset.box])")
    assert [(label, json.loads(box)) for label, box in items] == [("face", g["box"])]
    assert demo.text("#results-title") == "1 face found"

    # drawn on the photo: the overlay has the photo's size and the box's outline lies around the face
    size, drawn = overlay_pixels(demo)
    plan = demo.page.evaluate("window.qnnwebDemo.lastPreprocess")
    assert size == plan["photo"]
    sx, sy = size[0] / plan["rw"], size[1] / plan["rh"]
    x0, y0 = (plan["x0"] + xmin * plan["cw"]) * sx, (plan["y0"] + ymin * plan["ch"]) * sy
    x1, y1 = (plan["x0"] + xmax * plan["cw"]) * sx, (plan["y0"] + ymax * plan["ch"]) * sy
    margin = 6
    _, on_top_edge = overlay_pixels(demo, [int(x0) + margin, int(y0) - margin, int(x1) - margin, int(y0) + margin])
    _, inside = overlay_pixels(demo, [int(x0) + margin, int(y0) + margin + 20, int(x1) - margin, int(y1) - margin])
    assert on_top_edge >= (x1 - x0 - 2 * margin), f"no box edge drawn at y={y0:.0f} ({on_top_edge} pixels)"
    assert drawn > on_top_edge and inside < drawn, "keypoints / box outline not drawn as expected"


@pytest.mark.parametrize("photo", list(FACES))
def test_face_mesh_on_the_detected_face_matches_cpython_and_is_drawn(variant_page, demo_folders, photo):
    """Face Mesh after BlazeFace, as MediaPipe runs them: the detector's face box, squared and scaled
    1.5x, is what the mesh model sees; its 468 points land on that face."""
    from qnnweb import vision

    variant, demo = variant_page
    side, outs = page_run(demo, demo_folders, variant, MESH, photo, "landmarks")
    pp = side["postprocess"]
    want = vision.scale_landmarks(outs[pp["points"]], pp["input_size"], dims=pp["dims"])
    got = demo.page.evaluate("window.qnnwebDemo.lastLandmarks")
    assert len(got) == len(want) == 468
    assert all(close(p, q, 1e-12) for p, q in zip(got, want, strict=True))

    # the square came from the detector's face, which the detector test checks against CPython
    roi = demo.page.evaluate("window.qnnwebDemo.lastROI")
    assert roi is not None, "the detector found no face"
    x0, y0, x1, y1 = roi["box"]
    plan = demo.page.evaluate("window.qnnwebDemo.lastPreprocess")
    size = plan["photo"]
    to_photo = [((plan["x0"] + x * plan["cw"]) * size[0] / plan["rw"], (plan["y0"] + y * plan["ch"]) * size[1] / plan["rh"])
                for x, y, _ in want]
    cx, cy = sum(p[0] for p in to_photo) / 468, sum(p[1] for p in to_photo) / 468
    assert x0 < cx < x1 and y0 < cy < y1, f"the mesh's centre ({cx:.0f}, {cy:.0f}) is not in the face box {roi['box']}"
    square = plan["cw"] * size[0] / plan["rw"]
    assert 1.0 * max(x1 - x0, y1 - y0) <= square <= 1.5 * max(x1 - x0, y1 - y0) + 1

    items = demo.page.eval_on_selector_all("#results li", "els => els.map(e => [e.dataset.label, e.dataset.points, +e.dataset.score])")
    score = 1 / (1 + math.exp(-outs[pp["score"]][0]))
    assert [(label, points) for label, points, _ in items] == [("face", "468")]
    assert math.isclose(items[0][2], score, rel_tol=1e-12) and score > 0.9
    assert demo.text("#results-title") == "468 landmarks"
    drawn_size, drawn = overlay_pixels(demo)
    assert drawn_size == size and drawn > 468


@pytest.mark.parametrize("photo", ["coffee.png", "chelsea.png", "dog.jpg"])
def test_face_detector_finds_no_face_where_there_is_none(variant_page, demo_folders, photo):
    from qnnweb import vision

    variant, demo = variant_page
    side, outs = page_run(demo, demo_folders, variant, DETECTOR, photo, "detection")
    assert vision.ssd_detections(outs, side["postprocess"]) == []
    assert demo.page.evaluate("window.qnnwebDemo.lastDetections") == [] and demo.results() == []
    assert max(outs[side["postprocess"]["scores"]]) <= 0  # scores at most 0.5, below the sidecar's min_score


def test_face_mesh_below_its_presence_threshold_says_no_face(variant_page, demo_folders):
    """No face in the photo (a cup: whatever square BlazeFace passes on): Face Mesh's presence score is below
    the sidecar's min_score, and the page says "No face" instead of drawing 468 meaningless points."""
    variant, demo = variant_page
    side, outs = page_run(demo, demo_folders, variant, MESH, "coffee.png", "landmarks")
    pp = side["postprocess"]
    score = 1 / (1 + math.exp(-outs[pp["score"]][0]))
    assert score < pp["min_score"] == 0.5
    items = demo.page.eval_on_selector_all("#results li", "els => els.map(e => [e.dataset.label, e.dataset.points, +e.dataset.score])")
    assert [(label, points) for label, points, _ in items] == [("face", "0")]
    assert math.isclose(items[0][2], score, rel_tol=1e-12)
    assert demo.text("#results-title") == "No face"
    assert demo.page.evaluate("window.qnnwebDemo.lastLandmarks") == []
    assert demo.page.get_attribute("#overlay", "aria-label").startswith("no face")
    # only the dashed square the model saw is drawn: no dots inside it
    plan = demo.page.evaluate("window.qnnwebDemo.lastPreprocess")
    x0, y0 = (plan["x0"] * plan["photo"][0] / plan["rw"], plan["y0"] * plan["photo"][1] / plan["rh"])
    side_px = plan["cw"] * plan["photo"][0] / plan["rw"]
    inner = [round(x0 + 0.1 * side_px), round(y0 + 0.1 * side_px), round(x0 + 0.9 * side_px), round(y0 + 0.9 * side_px)]
    assert overlay_pixels(demo, inner)[1] == 0


SEGMENTATION = "efficientnet_lite0_segmentation"
# what the segmentation model must find in the photo's centre square (onnxruntime finds the same)
SEEN = {"chelsea.png": "cat", "coffee.png": "cup"}


@pytest.mark.parametrize("photo", list(SEEN))
def test_segmentation_mask_matches_cpython_and_is_drawn(variant_page, demo_folders, photo):
    from qnnweb import vision

    variant, demo = variant_page
    side, outs = page_run(demo, demo_folders, variant, SEGMENTATION, photo, "segmentation", ".onnx")
    pp = side["postprocess"]
    values = outs[pp["scores"]]
    classes = len(side["labels"])
    want = vision.mask_argmax(values, 64, 64, classes, channels_first=True, min_score=pp["min_score"])
    assert demo.page.evaluate("window.qnnwebDemo.lastMask") == want
    # the legend: the classes seen, largest share first, the expected one among them
    items = demo.page.eval_on_selector_all("#results li", "els => els.map(e => [e.dataset.label, +e.dataset.score])")
    counts = {c: want.count(c) for c in set(want) if c >= 0}
    order = sorted(counts, key=lambda c: (-counts[c], c))
    assert [label for label, _ in items] == [side["labels"][c] for c in order]
    assert all(math.isclose(share, counts[c] / len(want), rel_tol=1e-12) for (_, share), c in zip(items, order))
    assert SEEN[photo] == items[0][0], f"{photo} with {variant}: {items}"
    # painted over the part of the photo the model saw
    size, drawn = overlay_pixels(demo)
    plan = demo.page.evaluate("window.qnnwebDemo.lastPreprocess")
    assert size == plan["photo"]
    covered = sum(counts.values()) / len(want)
    window = (plan["cw"] * size[0] / plan["rw"]) * (plan["ch"] * size[1] / plan["rh"])
    assert abs(drawn / window - covered) < 0.1, f"{drawn} pixels painted, the mask covers {covered:.0%} of the window"


def test_super_resolution_image_matches_cpython(variant_page, demo_folders):
    from qnnweb.image import output_to_rgb

    variant, demo = variant_page
    side, outs = page_run(demo, demo_folders, variant, "espcn_x2", "astronaut.png", "image-to-image", ".onnx")
    pp = side["postprocess"]
    want = output_to_rgb(outs[pp["image"]], (1, 3, 256, 256), pp["range"])
    assert bytes(demo.page.evaluate("Array.from(window.qnnwebDemo.lastImage)")) == want
    shown = demo.page.evaluate("""() => {
      const c = document.getElementById('result-canvas');
      const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
      const rgb = [];
      for (let i = 0; i < d.length; i += 4) rgb.push(d[i], d[i + 1], d[i + 2]);
      return [c.width, c.height, rgb];
    }""")
    assert shown[:2] == [256, 256] and bytes(shown[2]) == want
    assert demo.page.is_visible("#result-image") and demo.text("#result-size") == "256×256"
    # the picture is the photo's, twice the size: close to Pillow's bicubic upscaling of the input
    import numpy as np
    from PIL import Image

    rgb = bytes(demo.page.evaluate("Array.from(window.qnnwebDemo.lastInput)"))
    bicubic = np.asarray(Image.frombytes("RGB", (128, 128), rgb).resize((256, 256), Image.BICUBIC), np.float64)
    got = np.frombuffer(want, np.uint8).reshape(256, 256, 3).astype(np.float64)
    assert np.mean(np.abs(got - bicubic)) < 6, "the output does not look like the photo"


def test_model_list_shows_titles_tasks_and_sizes(open_demo, demo_folders):
    demo = open_demo("?autorun=0")
    options = dict(demo.page.eval_on_selector_all("#model-select option", "els => els.map(e => [e.value, e.textContent])"))
    for name in (DETECTOR, MESH, SEGMENTATION, "espcn_x2", "efficientnet_lite0_u8s8", "visual_wake_words"):
        side = sidecar(demo_folders, name)
        title, task, size = options[name].split(" · ")[:3]
        assert title == side["title"] and task == side.get("task", "classification")
        assert size.endswith(("KB", "MB"))
    assert options["corrupt"].startswith("corrupt · classification · ")
    assert " · unusable: ModelError: not a model qnnweb can read" in options["corrupt"]


def test_detection_postprocess_helper_in_javascript_is_python_s(browser, server_url):
    """web/qnnweb-vision.js detectionPostprocess, the JavaScript twin of qnnweb.vision.detection_postprocess
    (TFLite_Detection_PostProcess for SSD models exported without the op), gives the same detections on random
    heads: fast NMS with 1 and 2 classes per detection (ties between classes included), regular NMS, with and
    without a background column."""
    import numpy as np
    from browser_pages import open_page
    from qnnweb import vision

    context, page, errors = open_page(browser, server_url)
    try:
        rng = np.random.default_rng(11)
        for case, options in enumerate([dict(num_classes=3, max_detections=10),
                                        dict(num_classes=4, max_detections=8, max_classes_per_detection=2),
                                        dict(num_classes=5, max_detections=12, use_regular_nms=True, detections_per_class=4),
                                        dict(num_classes=3, max_detections=6, nms_iou_threshold=0.3)]):
            n, columns = 80, options["num_classes"] + (case % 2)
            boxes = ((rng.integers(-128, 128, n * 4) - 3) * np.float32(0.05)).astype(np.float32).tolist()
            scores = ((rng.integers(0, 256, n * columns)) * np.float32(1 / 256)).astype(np.float32).tolist()
            anchors = np.stack([rng.uniform(0, 1, n), rng.uniform(0, 1, n), rng.uniform(0.05, 0.4, n),
                                rng.uniform(0.05, 0.4, n)], 1).astype(np.float32).ravel().tolist()
            options = dict(nms_score_threshold=0.3, **options)
            want = vision.detection_postprocess(boxes, scores, anchors, **options)
            js = {"".join(w.capitalize() if k else w for k, w in enumerate(key.split("_"))): v for key, v in options.items()}
            got = page.evaluate("""async ([boxes, scores, anchors, options]) => {
              const vision = await import("/static/qnnweb-vision.js");
              return vision.detectionPostprocess(boxes, scores, anchors, options);
            }""", [boxes, scores, anchors, js])
            assert got["count"] == want[3] and want[3] > 0, (case, got["count"], want[3])
            assert got["classes"] == want[1] and got["scores"] == want[2], case
            assert [list(b) for b in want[0]] == got["boxes"], case
        assert errors == []
    finally:
        context.close()


def blazeface_fixture_outputs():
    """(name, anchor settings, {output name: dequantized values}) of CPython qnnweb on the BlazeFace fixtures
    (tests/data/tflite, short and full range) for each of their sample inputs."""
    import numpy as np
    import qnnweb
    from browser_pages import REPO
    from qnnweb import vision
    from qnnweb.image import dequantize

    fixtures = REPO / "tests" / "data" / "tflite"
    for name, config in [("face_detection_short_range", vision.BLAZEFACE_SHORT_RANGE),
                         ("face_detection_full_range", vision.BLAZEFACE_FULL_RANGE)]:
        model = qnnweb.load((fixtures / f"{name}.tflite").read_bytes())
        anchors = {k: config[k] for k in ("input_size", "strides", "anchors_per_cell")}
        for x in np.load(fixtures / f"{name}.npz")["input_0"]:
            yield name, anchors, {t.name: dequantize(v, t) for v, t in zip(model.run(x), model.outputs)}


def test_ssd_detections_helper_in_javascript_is_python_s(blank_page):
    """web/qnnweb-vision.js ssdDetections, the JavaScript twin of qnnweb.vision.ssd_detections (the demo page's
    detections), gives the same detections on the BlazeFace fixtures' outputs: with the demo sidecar's settings,
    with the defaults alone, and with a low min_score (many candidates, tied scores), hard and weighted NMS,
    max_detections and an anchor offset."""
    from qnnweb import vision

    compared = 0
    for name, anchors, outputs in blazeface_fixture_outputs():
        boxes, scores = list(outputs)
        base = {"boxes": boxes, "scores": scores, "anchors": anchors}
        settings = [dict(base, keypoints=6, min_score=0.5, iou_threshold=0.3, weighted=True),   # the sidecar's
                    base,
                    dict(base, keypoints=6, min_score=0.05, iou_threshold=0.3),
                    dict(base, anchors=dict(anchors, offset=0.25), keypoints=6, min_score=0.05, iou_threshold=0.2,
                         max_detections=5, weighted=True)]
        got_all = blank_page.evaluate("""async ([outputs, settings]) => {
          const { ssdDetections } = await import("/static/qnnweb-vision.js");
          return settings.map((postprocess) => ssdDetections(outputs, postprocess));
        }""", [outputs, settings])
        for postprocess, got in zip(settings, got_all, strict=True):
            want = vision.ssd_detections(outputs, postprocess)
            assert len(got) == len(want), (name, postprocess, got, want)
            for g, w in zip(got, want):
                # the scores go through exp (two libms) and weight the merged boxes: equal to rounding
                assert math.isclose(g["score"], w.score, rel_tol=1e-12), (name, postprocess)
                assert close(g["box"], w.box) and g["label"] == w.label, (name, postprocess)
                assert all(close(p, q) for p, q in zip(g["keypoints"], w.keypoints, strict=True)), (name, postprocess)
            compared += len(want)
    assert compared > 50, compared


def test_ssd_detections_helper_in_javascript_names_what_is_missing(blank_page):
    """No anchor settings (Python's ValueError, word for word) or an output the settings name that the model does
    not have: an Error that says which."""
    from qnnweb import vision

    outputs = {"regressors": [0.0] * 16, "classificators": [0.0]}
    anchors = {"input_size": 128, "strides": [128], "anchors_per_cell": [1]}
    cases = [{"boxes": "regressors", "scores": "classificators"},
             None,
             {"boxes": "boxes", "scores": "classificators", "anchors": anchors},
             {"boxes": "regressors", "scores": "scores", "anchors": anchors}]
    messages = blank_page.evaluate("""async ([outputs, cases]) => {
      const { ssdDetections } = await import("/static/qnnweb-vision.js");
      return cases.map((postprocess) => {
        try {
          ssdDetections(outputs, postprocess ?? undefined);
          return null;
        } catch (err) {
          return `${err.name}: ${err.message}`;
        }
      });
    }""", [outputs, cases])
    with pytest.raises(ValueError) as python_error:
        vision.ssd_detections(outputs, cases[0])
    assert messages[:2] == [f"Error: {python_error.value}"] * 2, messages
    for message, postprocess in zip(messages[2:], cases[2:], strict=True):   # Python's ValueError, word for word
        with pytest.raises(ValueError) as python_error:
            vision.ssd_detections(outputs, postprocess)
        assert message == f"Error: {python_error.value}", message
    assert len(vision.ssd_detections(outputs, cases[2] | {"boxes": "regressors"})) == 1   # the cases' only flaw
