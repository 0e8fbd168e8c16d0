"""Compiled models (.qnn): qnnweb.compile's bytes load in every variant and give the outputs of the
model file itself; every damaged or foreign file is a ModelError naming the problem."""

import json
import os
import random
import struct
import zlib
from pathlib import Path

import numpy as np
import pymicro_wakeword
import pytest

import qnnweb
from qnnweb.compiled import HEADER, CompiledModel

DATA_DIR = Path(os.environ.get("QNNWEB_DATA_DIR", Path(__file__).resolve().parents[2] / "data"))

MODELS = ["visual_wake_words.tflite", "image_classification.tflite", "efficientnet_lite0_u8s8.onnx",
          "mobilenet_v2_u8s8.onnx"]


def model_path(name):
    path = DATA_DIR / "models" / name
    if not path.is_file():
        pytest.fail(f"{path} is missing: run ./build.sh build")
    return path


def random_input(info, seed=0):
    rng = np.random.default_rng(seed)
    if info.dtype == "float32":
        return rng.uniform(-1, 1, info.shape).astype(np.float32)
    return rng.integers(-128 if info.dtype == "int8" else 0, 128 if info.dtype == "int8" else 256,
                        info.shape).astype(info.dtype)


@pytest.mark.parametrize("name", MODELS)
def test_compiled_model_runs_as_the_model_file(name):
    path = model_path(name)
    data = qnnweb.compile(path, metadata={"labels": ["x", "y"], "task": "classification"})
    assert data[:4] == b"QNNW"
    for variant in qnnweb.VARIANTS if "wake" in name else ("relaxed",):
        direct = qnnweb.load(path, variant)
        compiled = qnnweb.load(data, variant)
        x = random_input(direct.inputs[0])
        assert [o.tobytes() for o in compiled.run(x)] == [o.tobytes() for o in direct.run(x)], variant
        assert compiled.weight_bytes == direct.weight_bytes and compiled.arena_bytes == direct.arena_bytes
        assert [repr(t) for t in compiled.inputs + compiled.outputs] == [repr(t) for t in direct.inputs + direct.outputs]
    assert compiled.metadata == {"labels": ["x", "y"], "task": "classification"}
    info = compiled.info()
    assert info["ops"] == direct.info()["ops"] and info["format"] == direct.info()["format"]
    assert qnnweb.describe(data) == qnnweb.describe(path)
    assert [r["family"] for r in compiled.profile(x, repeats=1)] == [r["family"] for r in direct.profile(x, repeats=1)]


def test_compiling_is_deterministic_and_needs_no_numpy_types():
    path = model_path("visual_wake_words.tflite")
    assert qnnweb.compile(path) == qnnweb.compile(path.read_bytes())


def test_keep_intermediates_is_compiled_in():
    path = model_path("visual_wake_words.tflite")
    direct = qnnweb.load(path, "scalar", keep_intermediates=True)
    compiled = qnnweb.load(qnnweb.compile(path, keep_intermediates=True), "scalar")
    x = random_input(direct.inputs[0])
    direct.run(x)
    compiled.run(x)
    names = list(direct._compiled.intermediates)
    assert len(names) > 10
    for name in names:
        assert compiled.intermediate(name).tobytes() == direct.intermediate(name).tobytes(), name
    with pytest.raises(ValueError, match="qnnweb.compile"):
        qnnweb.load(qnnweb.compile(path), keep_intermediates=True)
    with pytest.raises(ValueError, match="already a compiled model"):
        qnnweb.compile(qnnweb.compile(path))


def with_header(data, **fields):
    """``data`` with header fields replaced (version, abi) and the checksum made right again."""
    magic, version, abi, crc, meta_bytes, body_bytes = HEADER.unpack_from(data)
    version, abi = fields.get("version", version), fields.get("abi", abi)
    rest = data[16:]
    return magic + struct.pack("<III", version, abi, zlib.crc32(rest)) + rest


def with_meta(data, change):
    """``data`` with its metadata JSON changed by ``change(meta)``, sizes and checksum right."""
    _, version, abi, _, meta_bytes, body_bytes = HEADER.unpack_from(data)
    meta = json.loads(data[HEADER.size:HEADER.size + meta_bytes].rstrip(b"\0"))
    change(meta)
    new = json.dumps(meta).encode()
    new += bytes(-len(new) % 16)
    rest = struct.pack("<II8x", len(new), body_bytes) + new + data[HEADER.size + meta_bytes:]
    return b"QNNW" + struct.pack("<III", version, abi, zlib.crc32(rest)) + rest


@pytest.fixture(scope="module")
def vww_compiled():
    return qnnweb.compile(model_path("visual_wake_words.tflite"))


def test_damaged_files_are_model_errors(vww_compiled):
    data = vww_compiled
    cases = {
        "not a model qnnweb can read": b"QNNX" + data[4:],
        "format version 3": with_header(data, version=3),
        "format version 0": with_header(data, version=0),
        "kernel ABI version 0": with_header(data, abi=0),
        "truncated": data[:-100],
        "checksum": data[:-5] + bytes([data[-5] ^ 1]) + data[-4:],
        "bad metadata": with_meta(data, lambda m: m.pop("steps")),
        "lies outside the file": with_meta(data, lambda m: m["batches"][0].__setitem__(1, 1 << 40)),
        "outside the arena": with_meta(data, lambda m: m["inputs"][0].__setitem__("offset", 1 << 30)),
        "disagree on the number of records": with_meta(data, lambda m: m["steps"].pop()),
    }
    for expected, bad in cases.items():
        with pytest.raises(qnnweb.ModelError, match=expected):
            qnnweb.load(bad, "scalar")
    with pytest.raises(qnnweb.ModelError, match="compile the model again"):
        qnnweb.load(with_header(data, abi=0))


def test_format_version_says_whether_the_file_has_state(vww_compiled):
    """Files without resource-variable state stay version 1 (older runtimes read them); the wake-word
    models' files, whose state an older runtime would leave uninitialised, are version 2."""
    assert struct.unpack_from("<I", vww_compiled, 4)[0] == 1
    wake_word = Path(pymicro_wakeword.__file__).parent / "models" / "okay_nabu.tflite"
    stateful = qnnweb.compile(wake_word)
    assert struct.unpack_from("<I", stateful, 4)[0] == 2


def test_crafted_files_never_crash_the_loader(vww_compiled):
    """Random changes with the checksum made right (what a bug or a hand-made file could give):
    every load either works or raises ModelError; never another exception or a trap."""
    rng = random.Random(7)
    _, _, _, _, meta_bytes, _ = HEADER.unpack_from(vww_compiled)
    body_at = HEADER.size + meta_bytes
    outcomes = {"loaded": 0, "refused": 0}
    for _ in range(60):
        data = bytearray(vww_compiled)
        for _ in range(rng.choice([1, 4, 16])):
            at = rng.randrange(body_at, len(data))     # records, constants and relocations
            data[at] = rng.randrange(256)
        data = with_header(bytes(data))
        try:
            model = qnnweb.load(data, "scalar")
            model.run(bytes(model.inputs[0].nbytes))
            outcomes["loaded"] += 1
        except qnnweb.ModelError:
            outcomes["refused"] += 1
    assert outcomes["refused"] > 0 and sum(outcomes.values()) == 60, outcomes


def test_compiled_model_roundtrip_keeps_every_field(vww_compiled):
    model = CompiledModel.from_bytes(vww_compiled)
    assert model.to_bytes() == vww_compiled
