"""What the server tests share: temporary data folders and a fake model parser."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import threading
import time
from pathlib import Path

import uvicorn
from qnnweb_server import Settings
from qnnweb_server.core.versions import RACY_NS

REPO = Path(__file__).resolve().parents[2]
DATA_DIR = Path(os.environ.get("QNNWEB_DATA_DIR", REPO / "data"))
ISOLATION = {
    "cross-origin-opener-policy": "same-origin",
    "cross-origin-embedder-policy": "require-corp",
    "cross-origin-resource-policy": "same-origin",
}
SECRET = b"TOP SECRET: never served"
GOOD = b"GOOD model bytes " * 100


class FakeModelError(ValueError):
    pass


class FakeDescriber:
    """Parses b"GOOD..." into a fixed description; anything else is corrupt. Counts calls; ``delay``
    makes each parse take that long (so that concurrent requests overlap)."""

    def __init__(self, delay: float = 0.0) -> None:
        self.calls = 0
        self.delay = delay
        self._lock = threading.Lock()

    def __call__(self, data: bytes) -> dict:
        with self._lock:
            self.calls += 1
        time.sleep(self.delay)
        if not data.startswith(b"GOOD"):
            raise FakeModelError("not a model qnnweb can read: expected a TFLite flatbuffer")
        return {
            "format": "tflite",
            "inputs": [{"name": "in", "shape": [1, 32, 32, 3], "dtype": "int8", "scale": 0.0078125, "zero_point": 0}],
            "outputs": [{"name": "out", "shape": [1, 10], "dtype": "float32", "scale": None, "zero_point": None}],
            "ops": [{"index": 0, "type": "CONV_2D"}],
        }


def make_folders(tmp_path: Path) -> Settings:
    """A data folder with good, corrupt, hidden, symlinked and escaping models, wheels, samples,
    Pyodide and web files, next to secrets outside it that must never be served."""
    (tmp_path / "secret.tflite").write_bytes(SECRET)
    (tmp_path / "secret.whl").write_bytes(SECRET)
    (tmp_path / "secret.json").write_text(json.dumps({"labels": ["SECRET"]}))
    data = tmp_path / "data"

    models = data / "models"
    models.mkdir(parents=True)
    (models / "good.tflite").write_bytes(GOOD)
    (models / "good.json").write_text(json.dumps({
        "labels": ["a", "b"], "description": "a good model",
        "preprocess": {"mean": [128, 128, 128], "std": [128, 128, 128], "resize": "bilinear"},
    }))
    (models / "corrupt.tflite").write_bytes(b"\x00garbage" * 50)
    (models / "notamodel.txt").write_bytes(b"text")
    (models / ".hidden.tflite").write_bytes(GOOD)
    (models / "sub.tflite").mkdir()  # a folder with a model's name
    (models / "escape.tflite").symlink_to(tmp_path / "secret.tflite")
    (models / "escape.json").symlink_to(tmp_path / "secret.json")
    (models / "alias.tflite").symlink_to(models / "good.tflite")  # inside: allowed
    (models / "dangling.tflite").symlink_to(tmp_path / "nowhere.tflite")

    wheels = data / "wheels"
    wheels.mkdir()
    for name in ["flatbuffers-25.1-py2.py3-none-any.whl", "tflite-2.18.0-py2.py3-none-any.whl",
                 "qnnweb-0.1.0-py3-none-any.whl"]:
        (wheels / name).write_bytes(b"PK" + name.encode())
    (wheels / "manifest.json").write_text(json.dumps({"wheels": [
        "flatbuffers-25.1-py2.py3-none-any.whl", "tflite-2.18.0-py2.py3-none-any.whl",
        "qnnweb-0.1.0-py3-none-any.whl"]}))
    (wheels / "escape.whl").symlink_to(tmp_path / "secret.whl")

    samples = data / "samples"
    samples.mkdir()
    (samples / "cat.png").write_bytes(b"\x89PNG fake")
    (samples / "person.jpg").write_bytes(b"\xff\xd8 fake")
    (samples / "notes.txt").write_bytes(b"not a photo")

    pyodide = tmp_path / "pyodide"
    pyodide.mkdir()
    (pyodide / "pyodide.asm.wasm").write_bytes(b"\x00asm\x01\x00\x00\x00")
    (pyodide / "pyodide.mjs").write_text("export const x = 1;\n")
    (pyodide / "pyodide.js").write_text("var x = 1;\n")
    (pyodide / "pyodide-lock.json").write_text("{}")
    (pyodide / "python_stdlib.zip").write_bytes(b"PK\x05\x06" + b"\x00" * 18)

    web = tmp_path / "web"
    web.mkdir()
    (web / "index.html").write_text('<!doctype html><script type="module" src="/static/app.js"></script>')
    (web / "app.js").write_text("console.log(1);\n")
    (web / "style.css").write_text("body{}\n")
    return Settings(data_dir=data, pyodide_dir=pyodide, web_dir=web)


def settle() -> None:
    """Wait until files written just now are old enough to be cached (``versions.RACY_NS``)."""
    time.sleep(2 * RACY_NS / 1e9)


class Server:
    """uvicorn on a free loopback port, in a thread (``root_path``: as ``--root-path`` behind a proxy)."""

    def __init__(self, app, root_path: str = "") -> None:
        self.server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=0, log_level="warning",
                                                    root_path=root_path))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> int:
        self.thread.start()
        while not self.server.started:
            time.sleep(0.01)
        return self.server.servers[0].sockets[0].getsockname()[1]

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(10)


def read_live_model(port: int, stop: threading.Event, digests: dict[str, bytes], problems: list[str],
                    counts: dict[str, int]) -> None:
    """A client of the load tests: downloads, describes and lists ``live.tflite`` until ``stop``,
    noting in ``problems`` every 5xx or other unexpected status, dropped connection, download that is
    not one whole version of ``digests`` (sha256 -> bytes) with its ETag and length, and record whose
    sha256 and size belong to different versions. A 404 (the model deleted meanwhile) is counted."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
    while not stop.is_set():
        for url in ("/models/live.tflite", "/api/models/live", "/api/models"):
            try:
                conn.request("GET", url)
                r = conn.getresponse()
                body = r.read()
            except (OSError, http.client.HTTPException) as exc:
                problems.append(f"{url}: connection failed: {exc!r}")
                conn = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
                continue
            counts["requests"] = counts.get("requests", 0) + 1
            if r.status == 404 and url != "/api/models":
                counts["404"] = counts.get("404", 0) + 1
                continue
            if r.status != 200:
                problems.append(f"{url}: {r.status} {body[:200]!r}")
                continue
            if url == "/models/live.tflite":
                digest = hashlib.sha256(body).hexdigest()
                if digest not in digests or r.getheader("etag") != f'"{digest}"' \
                        or int(r.getheader("content-length")) != len(body):
                    problems.append(f"download: {len(body)} bytes, etag {r.getheader('etag')}: not one version")
            else:
                records = [json.loads(body)] if url != "/api/models" else json.loads(body)["models"]
                for rec in records:
                    if rec["file"] == "live.tflite" and (rec["sha256"] not in digests
                                                         or len(digests[rec["sha256"]]) != rec["size"]):
                        problems.append(f"{url}: sha256 and size of different versions: {rec}")


def load_test(app, writer, digests: dict[str, bytes], seconds: float = 4, readers: int = 6) -> tuple[list, dict]:
    """``readers`` clients of ``read_live_model`` and one ``writer(port, stop, problems, counts)`` that
    changes live.tflite meanwhile, for ``seconds``, on a loopback server: (problems, counts)."""
    stop, problems, counts = threading.Event(), [], {"requests": 0}
    with Server(app) as port:
        threads = [threading.Thread(target=writer, args=(port, stop, problems, counts))] + [
            threading.Thread(target=read_live_model, args=(port, stop, digests, problems, counts))
            for _ in range(readers)]
        for t in threads:
            t.start()
        time.sleep(seconds)
        stop.set()
        for t in threads:
            t.join(60)
    return problems, counts
