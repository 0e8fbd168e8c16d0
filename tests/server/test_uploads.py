"""Uploads, replacements and deletions of hosted models (PUT / DELETE /api/models/...): every status of
the contract, atomic writes, concurrent writers, a server killed mid-upload, --workers and JSON access
logs (real server processes)."""

from __future__ import annotations

import hashlib
import http.client
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from urllib.parse import quote

import pytest
from fastapi.testclient import TestClient
from qnnweb_server import Settings, create_app
from qnnweb_server.api.deps import get_describer
from qnnweb_server.core import store
from server_folders import GOOD, REPO, FakeDescriber, load_test

TOKEN = "test-token-1234"
AUTH = {"Authorization": f"Bearer {TOKEN}"}


def with_token(settings: Settings, **changes: object) -> Settings:
    return Settings(**(settings.model_dump() | {"upload_token": TOKEN} | changes))


@pytest.fixture
def writable(folders: Settings) -> Settings:
    return with_token(folders, max_upload_mb=0.01)  # 10,485 bytes


@pytest.fixture
def uploads(writable: Settings, describer: FakeDescriber):
    app = create_app(writable)
    app.dependency_overrides[get_describer] = lambda: describer
    with TestClient(app, raise_server_exceptions=False) as c:
        yield c


def etag(data: bytes) -> str:
    return f'"{hashlib.sha256(data).hexdigest()}"'


def listed(client: TestClient) -> dict[str, dict]:
    return {m["file"]: m for m in client.get("/api/models").json()["models"]}


# ---------------------------------------------------------------- authorization


def test_uploads_are_disabled_without_a_token(client: TestClient, folders: Settings) -> None:
    for method, url in [("PUT", "/api/models/x.tflite"), ("DELETE", "/api/models/good.tflite"),
                        ("PUT", "/api/models/good/meta"), ("DELETE", "/api/models/good/meta")]:
        r = client.request(method, url, content=GOOD, headers=AUTH)
        assert r.status_code == 403 and "--upload-token" in r.json()["detail"], (method, url, r.text)
    assert (folders.models_dir / "good.tflite").read_bytes() == GOOD
    assert not (folders.models_dir / "x.tflite").exists()


@pytest.mark.parametrize("headers", [{}, {"Authorization": "Bearer wrong"}, {"Authorization": f"Basic {TOKEN}"},
                                     {"Authorization": f"Bearer {TOKEN}x"}, {"Authorization": TOKEN}])
def test_a_missing_or_wrong_token_is_a_401(uploads: TestClient, writable: Settings, headers: dict) -> None:
    r = uploads.put("/api/models/x.tflite", content=GOOD, headers=headers)
    assert r.status_code == 401 and r.headers["www-authenticate"] == "Bearer"
    assert uploads.delete("/api/models/good.tflite", headers=headers).status_code == 401
    assert not (writable.models_dir / "x.tflite").exists() and (writable.models_dir / "good.tflite").exists()


def test_the_token_comes_from_the_environment(tmp_path: Path) -> None:
    settings = Settings.from_env({"QNNWEB_UPLOAD_TOKEN": "abc", "QNNWEB_MAX_UPLOAD_MB": "2"}, data_dir=tmp_path)
    assert settings.upload_token.get_secret_value() == "abc" and settings.max_upload_mb == 2
    assert "abc" not in repr(settings)
    assert Settings.from_env(settings.to_env()) == settings


# ---------------------------------------------------------------- PUT a model


def test_upload_creates_the_model_and_answers_its_record(uploads: TestClient, writable: Settings) -> None:
    data = GOOD + b"new"
    r = uploads.put("/api/models/new.tflite", content=data, headers=AUTH)
    assert r.status_code == 201, r.text
    record = r.json()
    assert (record["file"], record["sha256"], record["size"], record["error"]) == (
        "new.tflite", hashlib.sha256(data).hexdigest(), len(data), None)
    assert r.headers["etag"] == etag(data) and r.headers["location"] == "/api/models/new.tflite"
    assert (writable.models_dir / "new.tflite").read_bytes() == data
    assert listed(uploads)["new.tflite"]["sha256"] == record["sha256"]
    assert uploads.get("/models/new.tflite").content == data
    assert not [p for p in writable.models_dir.iterdir() if p.name.startswith(store.UPLOAD_PREFIX)]


def test_an_existing_name_is_a_409_unless_overwrite_or_a_matching_if_match(uploads: TestClient,
                                                                             writable: Settings) -> None:
    path = writable.models_dir / "good.tflite"
    r = uploads.put("/api/models/good.tflite", content=GOOD + b"2", headers=AUTH)
    assert r.status_code == 409 and "overwrite" in r.json()["detail"] and path.read_bytes() == GOOD

    r = uploads.put("/api/models/good.tflite?overwrite=true", content=GOOD + b"2", headers=AUTH)
    assert r.status_code == 200 and r.json()["sha256"] == hashlib.sha256(GOOD + b"2").hexdigest()

    stale = {**AUTH, "If-Match": etag(GOOD)}
    r = uploads.put("/api/models/good.tflite", content=GOOD + b"3", headers=stale)
    assert r.status_code == 409 and hashlib.sha256(GOOD + b"2").hexdigest() in r.json()["detail"]
    assert path.read_bytes() == GOOD + b"2"

    r = uploads.put("/api/models/good.tflite", content=GOOD + b"3", headers={**AUTH, "If-Match": etag(GOOD + b"2")})
    assert r.status_code == 200 and path.read_bytes() == GOOD + b"3"

    r = uploads.put("/api/models/absent.tflite", content=GOOD, headers={**AUTH, "If-Match": etag(GOOD)})
    assert r.status_code == 412 and not (writable.models_dir / "absent.tflite").exists()
    r = uploads.put("/api/models/good.tflite", content=GOOD, headers={**AUTH, "If-None-Match": "*"})
    assert r.status_code == 412 and path.read_bytes() == GOOD + b"3"


def test_too_large_is_a_413_by_length_and_while_streaming(uploads: TestClient, writable: Settings) -> None:
    big = GOOD + b"x" * 20_000
    r = uploads.put("/api/models/big.tflite", content=big, headers=AUTH)
    assert r.status_code == 413 and "10485 bytes" in r.json()["detail"]

    def chunks():  # no Content-Length: the limit is enforced on the bytes received
        yield GOOD
        for _ in range(20):
            yield b"x" * 1000

    r = uploads.put("/api/models/big.tflite", content=chunks(), headers=AUTH)
    assert r.status_code == 413
    assert sorted(p.name for p in writable.models_dir.iterdir() if "big" in p.name or "upload" in p.name) == []


def test_bytes_that_are_not_a_model_are_a_422_with_the_parsers_message(uploads: TestClient,
                                                                      writable: Settings) -> None:
    r = uploads.put("/api/models/bad.tflite", content=b"\x00garbage", headers=AUTH)
    assert r.status_code == 422 and "not a model qnnweb can read" in r.json()["detail"]
    r = uploads.put("/api/models/good.onnx", content=GOOD, headers=AUTH)  # the parser says: a TFLite model
    assert r.status_code == 422 and "holds a tflite model, not onnx" in r.json()["detail"]
    r = uploads.put("/api/models/x.qnn", content=GOOD, headers=AUTH)
    assert r.status_code == 422 and "qnnweb.compile" in r.json()["detail"]
    r = uploads.put("/api/models/good.tflite?overwrite=true", content=b"\x00garbage", headers=AUTH)
    assert r.status_code == 422 and (writable.models_dir / "good.tflite").read_bytes() == GOOD
    assert not {"bad.tflite", "good.onnx", "x.qnn"} & {p.name for p in writable.models_dir.iterdir()}


@pytest.mark.parametrize("name", ["x.txt", "x.json", ".x.tflite", ".tflite", "a\\b.tflite", "x\x01.tflite",
                                  "x" * 250 + ".tflite", "x.tflite.part"])
def test_a_name_that_is_not_a_plain_model_file_name_is_a_400(uploads: TestClient, name: str) -> None:
    url = f"/api/models/{quote(name, safe='')}"
    r = uploads.put(url, content=GOOD, headers=AUTH)
    assert r.status_code == 400, (name, r.status_code, r.text)
    assert uploads.delete(url, headers=AUTH).status_code == 400


def test_path_tricks_write_nothing_outside_the_folder(uploads: TestClient, writable: Settings,
                                                      tmp_path: Path) -> None:
    before = sorted(str(p) for p in tmp_path.rglob("*"))
    for url in ["/api/models/..%2Fx.tflite", "/api/models/%2E%2E%2Fx.tflite", "/api/models/../x.tflite",
                "/api/models/sub.tflite%2Fx.tflite", "/api/models/%00.tflite"]:
        r = uploads.put(url, content=GOOD, headers=AUTH)
        assert r.status_code in (400, 404, 405), (url, r.status_code)
    r = uploads.put("/api/models/sub.tflite?overwrite=true", content=GOOD, headers=AUTH)  # a folder by that name
    assert r.status_code in (409, 422) or r.status_code < 300
    after = sorted(str(p) for p in tmp_path.rglob("*") if store.LOCK_NAME not in str(p) and "changes.jsonl" not in str(p)
                   and not str(p).endswith("sub.tflite"))
    assert [p for p in after if p not in before] == []


def tiny_tflite() -> bytes:
    """A one-op int8 TFLite model (for the tests that run qnnweb's real parser in the server)."""
    from qnnweb.exporters.tflite import export_tflite
    from qnnweb.graph import Graph, Op, Tensor

    tensors = [Tensor(0, "x", (1, 4, 4, 8), "int8", (0.05,), (0,)), Tensor(1, "y", (1, 4, 4, 8), "int8", (0.1,), (3,))]
    return export_tflite(Graph(tensors, [Op(0, "ADD", [0, 0], [1], {"activation": "NONE"})], [0], [1]))


def test_a_compiled_model_uploads_and_downloads_as_itself(folders: Settings) -> None:
    """With the real parser: a .qnn file from qnnweb.compile is listed and served as it was sent."""
    import qnnweb

    source = tiny_tflite()
    data = qnnweb.compile(source)
    with TestClient(create_app(with_token(folders)), raise_server_exceptions=False) as c:
        r = c.put("/api/models/tiny.qnn", content=data, headers=AUTH)
        assert r.status_code == 201, r.text
        assert r.json()["format"] == "qnn" and r.json()["error"] is None
        assert r.json()["outputs"][0]["shape"] == [1, 4, 4, 8]
        got = c.get(r.json()["compiled_url"])
        assert got.content == data and "immutable" in got.headers["cache-control"]
        assert c.get("/models/tiny.qnn").content == data
        r = c.put("/api/models/tiny.tflite", content=source, headers=AUTH)
        assert r.status_code == 201 and r.json()["format"] == "tflite"
        assert c.get("/models/tiny.qnn").content == data  # the uploaded file, not tiny.tflite compiled


# ---------------------------------------------------------------- sidecars and DELETE


def test_sidecar_upload_is_validated_and_listed(uploads: TestClient, writable: Settings) -> None:
    side = {"labels": ["x", "y"], "task": "detection", "title": "Good", "postprocess": {"min_score": 0.4}, "mine": 1}
    r = uploads.put("/api/models/good.tflite/meta", json=side, headers=AUTH)
    assert r.status_code == 200 and r.json()["labels"] == ["x", "y"]
    assert {k: r.json()[k] for k in ("task", "title", "postprocess")} == {k: side[k] for k in ("task", "title", "postprocess")}
    assert json.loads((writable.models_dir / "good.json").read_text()) == side  # other keys kept as they are
    r = uploads.put("/api/models/good/meta", json={"task": "classify"}, headers=AUTH)
    assert r.status_code == 422 and "task" in r.json()["detail"] and "detection" in r.json()["detail"]
    r = uploads.put("/api/models/good/meta", json={"labels": "person"}, headers=AUTH)
    assert r.status_code == 422 and "labels" in r.json()["detail"]
    r = uploads.put("/api/models/good/meta", content=b"{not json", headers=AUTH)
    assert r.status_code == 422 and "not JSON" in r.json()["detail"]
    r = uploads.put("/api/models/good/meta", content=b"[1]", headers=AUTH)
    assert r.status_code == 422
    r = uploads.put("/api/models/good/meta", content=b'{"description": "' + b"x" * (1 << 20) + b'"}', headers=AUTH)
    assert r.status_code == 413
    assert uploads.put("/api/models/absent/meta", json={}, headers=AUTH).status_code == 404
    assert listed(uploads)["good.tflite"]["labels"] == ["x", "y"]
    assert uploads.delete("/api/models/good/meta", headers=AUTH).status_code == 204
    assert listed(uploads)["good.tflite"]["labels"] is None and listed(uploads)["good.tflite"]["task"] == "classification"
    assert uploads.delete("/api/models/good/meta", headers=AUTH).status_code == 404


def test_delete_removes_the_model_and_its_sidecar(uploads: TestClient, writable: Settings) -> None:
    r = uploads.delete("/api/models/good.tflite", headers={**AUTH, "If-Match": etag(b"other")})
    assert r.status_code == 409 and (writable.models_dir / "good.tflite").exists()
    r = uploads.delete("/api/models/good.tflite", headers={**AUTH, "If-Match": etag(GOOD)})
    assert r.status_code == 204 and r.content == b""
    assert not (writable.models_dir / "good.tflite").exists() and not (writable.models_dir / "good.json").exists()
    assert "good.tflite" not in listed(uploads)
    assert uploads.get("/models/good.tflite").status_code == 404
    assert uploads.delete("/api/models/good.tflite", headers=AUTH).status_code == 404


def test_every_change_is_in_the_change_log(uploads: TestClient, writable: Settings) -> None:
    uploads.put("/api/models/a.tflite", content=GOOD, headers=AUTH)
    uploads.put("/api/models/a.tflite?overwrite=true", content=GOOD + b"!", headers=AUTH)
    uploads.put("/api/models/a/meta", json={"labels": ["z"]}, headers=AUTH)
    uploads.delete("/api/models/a.tflite", headers=AUTH)
    uploads.put("/api/models/b.tflite", content=b"bad", headers=AUTH)  # refused: no change
    lines = [json.loads(line) for line in (writable.data_dir / "changes.jsonl").read_text().splitlines()]
    assert [(e["action"], e["name"]) for e in lines] == [
        ("create", "a.tflite"), ("replace", "a.tflite"), ("meta", "a.json"), ("delete", "a.tflite"),
        ("delete-meta", "a.json")]
    assert lines[1]["sha256"] == hashlib.sha256(GOOD + b"!").hexdigest() and lines[0]["client"]


def test_concurrent_uploads_of_one_name_end_with_one_whole_version(writable: Settings) -> None:
    settings = with_token(writable, max_upload_mb=8)
    versions = [GOOD + bytes([65 + i]) * (300_000 + 50_000 * i) for i in range(6)]
    app = create_app(settings)
    app.dependency_overrides[get_describer] = lambda: FakeDescriber()
    with TestClient(app, raise_server_exceptions=False) as c, ThreadPoolExecutor(6) as pool:
        statuses = list(pool.map(
            lambda v: c.put("/api/models/race.tflite?overwrite=true", content=v, headers=AUTH).status_code,
            versions * 3))
    assert sorted(set(statuses)) in ([200, 201], [201]) and statuses.count(201) == 1, statuses
    assert (settings.models_dir / "race.tflite").read_bytes() in versions
    assert not [p for p in settings.models_dir.iterdir() if p.name.startswith(store.UPLOAD_PREFIX)]


def test_stale_uploads_are_removed_but_not_live_ones(writable: Settings) -> None:
    folder = writable.models_dir
    dead = folder / f"{store.UPLOAD_PREFIX}dead.part"
    dead.write_bytes(b"half a model")
    os.utime(dead, (time.time() - 3600, time.time() - 3600))
    live = store.Upload(folder, 1000)
    os.utime(live.path, (time.time() - 3600, time.time() - 3600))
    try:
        assert store.remove_stale_uploads(folder) == [dead.name]
        assert live.path.exists() and not dead.exists()
    finally:
        live.discard()


# ---------------------------------------------------------------- real server processes


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class ServerProcess:
    """``python -m qnnweb_server`` in a subprocess, on a free loopback port."""

    def __init__(self, settings: Settings, *args: str) -> None:
        self.port = free_port()
        env = {**os.environ, **settings.to_env(), "QNNWEB_UPLOAD_TOKEN": TOKEN}
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "qnnweb_server", "--port", str(self.port), "--no-precompile", *args],
            env=env, cwd=REPO, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            start_new_session=True)
        deadline = time.monotonic() + 60
        while True:
            try:
                if self.request("GET", "/api/utils/health-check")[0] == 200:
                    return
            except OSError:
                pass
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the server did not start: {self.proc.stdout.read()}")
            time.sleep(0.1)

    def request(self, method: str, url: str, body: bytes | None = None,
                headers: dict | None = None) -> tuple[int, bytes]:
        conn = http.client.HTTPConnection("127.0.0.1", self.port, timeout=30)
        try:
            conn.request(method, url, body=body, headers=headers or {})
            r = conn.getresponse()
            return r.status, r.read()
        finally:
            conn.close()

    def stop(self, sig: int = signal.SIGTERM) -> str:
        os.killpg(self.proc.pid, sig)
        out, _ = self.proc.communicate(timeout=30)
        return out


def test_a_server_killed_mid_upload_leaves_the_old_model(writable: Settings) -> None:
    """kill -9 while the body is half sent: the model keeps its old bytes, no partial file is listed,
    and the next server start removes the unfinished upload (once it is older than STALE_SECONDS)."""
    folder = writable.models_dir
    server = ServerProcess(writable)
    try:
        sock = socket.create_connection(("127.0.0.1", server.port))
        sock.sendall(b"PUT /api/models/good.tflite?overwrite=true HTTP/1.1\r\nHost: x\r\n"
                     b"Authorization: Bearer " + TOKEN.encode() + b"\r\nContent-Length: 10000\r\n\r\n" + GOOD[:1500])
        deadline = time.monotonic() + 30
        while not [p for p in folder.iterdir() if p.name.startswith(store.UPLOAD_PREFIX)]:
            assert time.monotonic() < deadline, "the upload never started"
            time.sleep(0.05)
    finally:
        server.stop(signal.SIGKILL)
        sock.close()
    assert (folder / "good.tflite").read_bytes() == GOOD
    partial = [p for p in folder.iterdir() if p.name.startswith(store.UPLOAD_PREFIX)]
    assert len(partial) == 1
    for p in partial:
        os.utime(p, (time.time() - 3600, time.time() - 3600))
    with TestClient(create_app(writable)) as c:
        assert "good.tflite" in listed(c) and not any(".upload" in f for f in listed(c))
    assert not [p for p in folder.iterdir() if p.name.startswith(store.UPLOAD_PREFIX)]


def test_workers_share_the_models_folder_and_log_json(writable: Settings) -> None:
    """--workers 2 --access-log json: a model uploaded through one process is listed and served by
    every process (each request on a new connection, answered by either); one JSON line per request."""
    model = tiny_tflite()
    server = ServerProcess(writable, "--workers", "2", "--access-log", "json")
    try:
        assert server.request("PUT", "/api/models/w.tflite", GOOD, AUTH)[0] == 422  # the real parser runs
        assert server.request("PUT", "/api/models/w.tflite", model, AUTH)[0] == 201
        for _ in range(10):
            status, body = server.request("GET", "/api/models")
            assert status == 200 and "w.tflite" in {m["file"] for m in json.loads(body)["models"]}
            assert server.request("GET", "/models/w.tflite") == (200, model)
    finally:
        out = server.stop()
    access = [json.loads(line) for line in out.splitlines() if line.startswith("{") and '"method"' in line]
    assert {(e["method"], e["path"], e["status"]) for e in access} >= {
        ("PUT", "/api/models/w.tflite", 422), ("PUT", "/api/models/w.tflite", 201), ("GET", "/api/models", 200),
        ("GET", "/models/w.tflite", 200)}, out
    assert all(e["ms"] >= 0 and e["client"] == "127.0.0.1" for e in access)
    pids = {line.split("[")[1].split("]")[0] for line in out.splitlines() if "Started server process" in line}
    assert len(pids) == 2, out


def test_downloads_while_models_are_uploaded(writable: Settings) -> None:
    """A few seconds of clients downloading and listing a model while another client keeps replacing
    it through the API (and deleting it now and then): no 5xx, no dropped connection, every download
    one whole version with its ETag, every record of one version."""
    settings = with_token(writable, max_upload_mb=8)
    versions = [GOOD + b"A" * 300_000, GOOD + b"B" * 700_000]
    digests = {hashlib.sha256(v).hexdigest(): v for v in versions}
    (settings.models_dir / "live.tflite").write_bytes(versions[0])
    app = create_app(settings)
    app.dependency_overrides[get_describer] = lambda: FakeDescriber()

    def uploader(port: int, stop: threading.Event, problems: list, counts: dict) -> None:
        conn, i = http.client.HTTPConnection("127.0.0.1", port, timeout=30), 0
        while not stop.is_set():
            i += 1
            if i % 9 == 0:
                conn.request("DELETE", "/api/models/live.tflite", headers=AUTH)
            else:
                conn.request("PUT", "/api/models/live.tflite?overwrite=true", body=versions[i % 2], headers=AUTH)
            r = conn.getresponse()
            r.read()
            if r.status not in (200, 201, 204, 404):
                problems.append(f"upload: {r.status}")
            counts["uploads"] = counts.get("uploads", 0) + 1

    problems, counts = load_test(app, uploader, digests)
    assert not problems, f"{len(problems)} of {counts}: {problems[:5]}"
    assert counts["uploads"] > 10 and counts["requests"] > 50, counts
