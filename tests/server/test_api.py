"""The FastAPI server against temporary folders: listing, metadata, ETag/304, headers, MIME types,
path traversal. Model parsing is faked (``get_describer`` overridden) except in the tests marked
"real", which run ``qnnweb.describe`` on the prepared VWW model and on garbage bytes."""

from __future__ import annotations

import concurrent.futures
import hashlib
import http.client
import json
import os
import shutil
import warnings
from pathlib import Path

import anyio
import pytest

with warnings.catch_warnings():  # starlette's "install httpx2" notice
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from qnnweb_server import Settings, create_app
from qnnweb_server.api.deps import get_describer
from qnnweb_server.core.config import get_settings
from server_folders import DATA_DIR, GOOD, ISOLATION, SECRET, FakeDescriber, Server, settle


def assert_isolated(response) -> None:
    for k, v in ISOLATION.items():
        assert response.headers.get(k) == v, f"{response.request.method} {response.request.url}: {k}"


# ---------------------------------------------------------------- listing and metadata


def test_list_models(client: TestClient, describer: FakeDescriber) -> None:
    r = client.get("/api/models")
    assert r.status_code == 200
    models = {m["name"]: m for m in r.json()["models"]}
    # not listed: .txt, hidden, a folder, a symlink out of the folder, a dangling symlink
    assert sorted(models) == ["alias", "corrupt", "good"]

    good = models["good"]
    assert good["file"] == "good.tflite"
    assert good["url"] == "/models/good.tflite"
    assert good["format"] == "tflite"
    assert good["size"] == len(GOOD)
    assert good["sha256"] == hashlib.sha256(GOOD).hexdigest()
    assert good["inputs"] == [{"name": "in", "shape": [1, 32, 32, 3], "dtype": "int8",
                               "scale": 0.0078125, "zero_point": 0}]
    assert good["outputs"][0]["shape"] == [1, 10] and good["outputs"][0]["dtype"] == "float32"
    assert good["labels"] == ["a", "b"]
    assert good["description"] == "a good model"
    assert good["preprocess"] == {"mean": [128, 128, 128], "std": [128, 128, 128], "resize": "bilinear"}
    assert good["error"] is None

    bad = models["corrupt"]
    assert "FakeModelError" in bad["error"] and "expected a TFLite flatbuffer" in bad["error"]
    assert bad["inputs"] == [] and bad["outputs"] == []
    assert bad["sha256"] == hashlib.sha256(b"\x00garbage" * 50).hexdigest()


def test_model_urls_are_percent_encoded(client: TestClient, folders: Settings) -> None:
    """A model file named with URL syntax (`#`, `?`, spaces) gets URLs that fetch it."""
    (folders.models_dir / "hash#q? x.tflite").write_bytes(GOOD)
    rec = client.get("/api/models/hash#q? x".replace("#", "%23").replace("?", "%3F").replace(" ", "%20")).json()
    assert rec["url"] == "/models/hash%23q%3F%20x.tflite", rec["url"]
    assert rec["compiled_url"].startswith("/models/hash%23q%3F%20x.tflite.qnn")
    r = client.get(rec["url"])
    assert r.status_code == 200 and r.content == GOOD


def test_get_one_model(client: TestClient) -> None:
    by_name = client.get("/api/models/good")
    by_file = client.get("/api/models/good.tflite")
    assert by_name.status_code == by_file.status_code == 200
    assert by_name.json() == by_file.json()
    assert by_name.json()["labels"] == ["a", "b"]
    assert client.get("/api/models/corrupt").json()["error"]
    assert client.get("/api/models/nope").status_code == 404


def test_describe_is_cached_by_mtime_and_size(client: TestClient, folders: Settings,
                                              describer: FakeDescriber) -> None:
    settle()  # files younger than a clock tick are not cached (versions.RACY_NS)
    client.get("/api/models")
    calls = describer.calls
    assert calls >= 2
    client.get("/api/models")
    client.get("/api/models/good")
    assert describer.calls == calls
    path = folders.models_dir / "good.tflite"
    path.write_bytes(GOOD + b"more")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    rec = client.get("/api/models/good").json()
    assert describer.calls == calls + 1
    assert rec["size"] == len(GOOD) + 4
    assert rec["sha256"] == hashlib.sha256(GOOD + b"more").hexdigest()


def test_bad_sidecar_is_reported_not_fatal(client: TestClient, folders: Settings) -> None:
    (folders.models_dir / "good.json").write_text("{not json")
    rec = client.get("/api/models/good").json()
    assert rec["inputs"] and rec["labels"] is None
    assert "good.json" in rec["error"]


def test_a_sidecars_short_title_and_note_are_listed_and_checked(client: TestClient, folders: Settings) -> None:
    """The demo page shows ``short_title`` on narrow screens and ``note`` beside the model's answers."""
    side = folders.models_dir / "good.json"
    side.write_text(json.dumps({"title": "A good model (made for tests)", "short_title": "Good",
                                "note": "A tiny model: a guess."}))
    rec = client.get("/api/models/good").json()
    assert (rec["short_title"], rec["note"], rec["error"]) == ("Good", "A tiny model: a guess.", None)
    side.write_text(json.dumps({"short_title": "x" * 33, "note": 5}))
    error = client.get("/api/models/good").json()["error"]
    assert "short_title: String should have at most 32 characters" in error and "note: Input should be a valid string" in error


def test_missing_models_folder_is_an_empty_list(folders: Settings, describer: FakeDescriber) -> None:
    shutil.rmtree(folders.models_dir)
    with TestClient(create_app(folders)) as c:
        assert c.get("/api/models").json()["models"] == []


# ---------------------------------------------------------------- model files, ETag, 304


def test_model_file_etag_and_304(client: TestClient, folders: Settings) -> None:
    r = client.get("/models/good.tflite")
    assert r.status_code == 200
    assert r.content == GOOD
    assert r.headers["content-type"] == "application/octet-stream"
    assert int(r.headers["content-length"]) == len(GOOD)
    etag = r.headers["etag"]
    assert etag == f'"{hashlib.sha256(GOOD).hexdigest()}"'
    cc = r.headers["cache-control"]
    assert "must-revalidate" in cc or "no-cache" in cc

    for inm in [etag, f"W/{etag}", f'"other", {etag}', "*"]:
        r304 = client.get("/models/good.tflite", headers={"If-None-Match": inm})
        assert r304.status_code == 304, inm
        assert r304.content == b""
        assert r304.headers["etag"] == etag
        assert_isolated(r304)
    assert client.get("/models/good.tflite", headers={"If-None-Match": '"other"'}).status_code == 200

    # by stem too, and HEAD
    assert client.get("/models/good").content == GOOD
    head = client.head("/models/good.tflite")
    assert head.status_code == 200 and head.headers["etag"] == etag and head.content == b""

    # a changed file gets a new ETag; the old one no longer matches
    path = folders.models_dir / "good.tflite"
    path.write_bytes(b"GOOD v2")
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    r2 = client.get("/models/good.tflite", headers={"If-None-Match": etag})
    assert r2.status_code == 200 and r2.content == b"GOOD v2"
    assert r2.headers["etag"] == f'"{hashlib.sha256(b"GOOD v2").hexdigest()}"'


def test_corrupt_model_file_is_still_downloadable(client: TestClient) -> None:
    r = client.get("/models/corrupt.tflite")
    assert r.status_code == 200 and r.content.startswith(b"\x00garbage")


# ---------------------------------------------------------------- traversal


def raw_get(app, path: str, raw_path: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    """Call the ASGI app with exactly this path (no client-side normalisation of '..')."""
    messages = []
    scope = {
        "type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET",
        "scheme": "http", "path": path, "raw_path": raw_path if raw_path is not None else path.encode("latin-1"),
        "root_path": "", "query_string": b"", "headers": [(b"host", b"testserver")],
        "client": ("127.0.0.1", 1234), "server": ("testserver", 80),
    }

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        messages.append(message)

    async def main():
        await app(scope, receive, send)

    # In a thread of its own: Playwright's sync API (browser tests in the same session) keeps an
    # event loop running in the main thread, and anyio refuses to nest.
    with concurrent.futures.ThreadPoolExecutor(1) as pool:
        pool.submit(anyio.run, main).result()
    start = next(m for m in messages if m["type"] == "http.response.start")
    body = b"".join(m.get("body", b"") for m in messages if m["type"] == "http.response.body")
    headers = {k.decode().lower(): v.decode() for k, v in start["headers"]}
    return start["status"], headers, body


TRAVERSALS = [
    # (decoded path as a server sees it, raw path as sent)
    ("/models/../secret.tflite", b"/models/../secret.tflite"),
    ("/models/../secret.tflite", b"/models/..%2fsecret.tflite"),
    ("/models/../secret.tflite", b"/models/%2e%2e%2fsecret.tflite"),
    ("/models/../../secret.tflite", b"/models/%2e%2e%2f%2e%2e%2fsecret.tflite"),
    ("/models/..\\secret.tflite", b"/models/..%5csecret.tflite"),
    ("/models/..", b"/models/.."),
    ("/models/%2e%2e%2fsecret.tflite", b"/models/%252e%252e%252fsecret.tflite"),  # double-encoded
    ("/models//etc/passwd", b"/models/%2fetc%2fpasswd"),
    ("/models/C:\\secret.tflite", b"/models/C:%5csecret.tflite"),
    ("/models/escape.tflite", b"/models/escape.tflite"),  # symlink to outside
    ("/models/escape", b"/models/escape"),
    ("/models/good.tflite\x00", b"/models/good.tflite%00"),
    ("/models/good.tflite\x00.json", b"/models/good.tflite%00.json"),
    ("/models/good.json", b"/models/good.json"),  # exists, but is not a model
    ("/models/notamodel.txt", b"/models/notamodel.txt"),
    ("/models/.hidden.tflite", b"/models/.hidden.tflite"),
    ("/models/sub.tflite", b"/models/sub.tflite"),
    ("/models/dangling.tflite", b"/models/dangling.tflite"),
    ("/api/models/../secret", b"/api/models/..%2fsecret"),
    ("/api/models/escape", b"/api/models/escape"),
    ("/api/models/escape.tflite", b"/api/models/escape.tflite"),
    ("/wheels/../secret.whl", b"/wheels/..%2fsecret.whl"),
    ("/wheels/escape.whl", b"/wheels/escape.whl"),
    ("/wheels/manifest.json", b"/wheels/manifest.json"),
    ("/samples/../secret.tflite", b"/samples/../secret.tflite"),
    ("/samples/../../secret.tflite", b"/samples/%2e%2e/%2e%2e/secret.tflite"),
    ("/pyodide/../secret.tflite", b"/pyodide/../secret.tflite"),
    ("/pyodide/..\\secret.tflite", b"/pyodide/..%5csecret.tflite"),
    ("/static/../secret.tflite", b"/static/../secret.tflite"),
    ("/static//etc/passwd", b"/static//etc/passwd"),
    ("/static-docs/../../../secret.tflite", b"/static-docs/../../../secret.tflite"),
]


@pytest.mark.parametrize("path,raw", TRAVERSALS, ids=[r.decode() for _, r in TRAVERSALS])
def test_traversal_is_404(app, path: str, raw: bytes) -> None:
    status, headers, body = raw_get(app, path, raw)
    assert status == 404, (path, status, body[:200])
    assert SECRET not in body and b"SECRET" not in body
    for k, v in ISOLATION.items():
        assert headers.get(k) == v


@pytest.mark.parametrize("url", [
    "/models/..%2fsecret.tflite", "/models/%2e%2e%2fsecret.tflite", "/models/escape.tflite",
    "/models/..%5csecret.tflite", "/models/%2Fetc%2Fpasswd", "/api/models/..%2f..%2fsecret",
    "/wheels/..%2fsecret.whl", "/samples/..%2f..%2fsecret.tflite", "/pyodide/%2e%2e/secret.tflite",
])
def test_traversal_through_the_client_is_404(client: TestClient, url: str) -> None:
    r = client.get(url)
    assert r.status_code == 404, url
    assert b"SECRET" not in r.content
    assert_isolated(r)


def test_escape_sidecar_is_not_read(client: TestClient, folders: Settings) -> None:
    # escape.json points outside: a model called "escape" must not pick it up as its sidecar
    (folders.models_dir / "escape.json").unlink()
    (folders.models_dir / "escape.json").symlink_to(folders.data_dir.parent / "secret.json")
    (folders.models_dir / "inside.tflite").write_bytes(GOOD)
    (folders.models_dir / "inside.json").symlink_to(folders.data_dir.parent / "secret.json")
    rec = client.get("/api/models/inside").json()
    assert rec["labels"] is None


# ---------------------------------------------------------------- headers and MIME types


@pytest.mark.parametrize("url,status,ctype", [
    ("/", 200, "text/html"),
    ("/static/app.js", 200, "text/javascript"),
    ("/static/style.css", 200, "text/css"),
    ("/static/missing.js", 404, None),
    ("/pyodide/pyodide.asm.wasm", 200, "application/wasm"),
    ("/pyodide/pyodide.mjs", 200, "text/javascript"),
    ("/pyodide/pyodide.js", 200, "text/javascript"),
    ("/pyodide/pyodide-lock.json", 200, "application/json"),
    ("/pyodide/python_stdlib.zip", 200, "application/zip"),
    ("/pyodide/missing.wasm", 404, None),
    ("/api/models", 200, "application/json"),
    ("/api/models/nope", 404, "application/json"),
    ("/models/good.tflite", 200, "application/octet-stream"),
    ("/models/nope.tflite", 404, "application/json"),
    ("/api/wheels", 200, "application/json"),
    ("/wheels/qnnweb-0.1.0-py3-none-any.whl", 200, "application/zip"),
    ("/wheels/nope.whl", 404, None),
    ("/api/samples", 200, "application/json"),
    ("/samples/cat.png", 200, "image/png"),
    ("/samples/person.jpg", 200, "image/jpeg"),
    ("/api/utils/health-check", 200, "application/json"),
    ("/docs", 200, "text/html"),
    ("/redoc", 200, "text/html"),
    ("/openapi.json", 200, "application/json"),
    ("/static-docs/swagger-ui-bundle.js", 200, "text/javascript"),
    ("/static-docs/swagger-ui.css", 200, "text/css"),
    ("/no/such/page", 404, None),
])
def test_headers_and_mime_types(client: TestClient, url: str, status: int, ctype: str | None) -> None:
    r = client.get(url)
    assert r.status_code == status, (url, r.text[:200])
    assert_isolated(r)
    if ctype:
        assert r.headers["content-type"].split(";")[0].strip() == ctype, url


def test_isolation_headers_on_304_head_405_and_500(client: TestClient, app) -> None:
    etag = client.get("/models/good.tflite").headers["etag"]
    assert_isolated(client.get("/models/good.tflite", headers={"If-None-Match": etag}))
    assert_isolated(client.head("/models/good.tflite"))
    assert client.head("/").status_code == 200
    r405 = client.post("/api/models")
    assert r405.status_code == 405
    assert_isolated(r405)

    def broken():
        raise RuntimeError("boom")

    app.dependency_overrides[get_describer] = broken
    r500 = client.get("/api/models")
    assert r500.status_code == 500
    assert_isolated(r500)


def test_static_files_revalidate(client: TestClient) -> None:
    r = client.get("/pyodide/pyodide.asm.wasm")
    assert r.content == b"\x00asm\x01\x00\x00\x00"
    r304 = client.get("/pyodide/pyodide.asm.wasm", headers={"If-None-Match": r.headers["etag"]})
    assert r304.status_code == 304
    assert_isolated(r304)


def test_a_static_folder_url_serves_its_index_html(app, folders: Settings) -> None:
    """/static/bench/ is the bench page (web/bench/index.html); /static/bench redirects there by path,
    not to the Host sent; a folder without index.html, or a missing file, is still a 404."""
    bench = folders.web_dir / "bench"
    (bench / "empty").mkdir(parents=True)
    (bench / "index.html").write_text("<!doctype html><title>bench</title>")
    with TestClient(app, raise_server_exceptions=False) as client:
        r = client.get("/static/bench/")
        assert r.status_code == 200 and r.text == "<!doctype html><title>bench</title>"
        assert r.headers["content-type"].startswith("text/html") and r.headers["cache-control"] == "no-cache"
        assert_isolated(r)
        moved = client.get("/static/bench?engine=qnnweb", headers={"Host": "evil.example"}, follow_redirects=False)
        assert moved.status_code == 307 and moved.headers["location"] == "/static/bench/?engine=qnnweb"
        assert_isolated(moved)
        for url in ("/static/bench/empty/", "/static/bench/missing.html", "/static/nope/"):
            r = client.get(url)
            assert r.status_code == 404, url
            assert_isolated(r)
        # the demo page itself is at / (its relative URLs work there only)
        assert client.get("/static/", follow_redirects=False).headers["location"] == "/"
    with Server(app, root_path="/hosted/qnnweb") as port:  # uvicorn's root_path (TestClient's differs)
        for url, location in (("/static/bench", "/hosted/qnnweb/static/bench/"), ("/static/", "/hosted/qnnweb/")):
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
            conn.request("GET", url)
            moved = conn.getresponse()
            assert moved.status == 307 and moved.getheader("location") == location, url
            conn.close()


# ---------------------------------------------------------------- wheels, samples, docs, page


def test_wheels_in_manifest_order(client: TestClient, folders: Settings) -> None:
    """Each URL names one version (its sha256; the file name last, as pyodide.loadPackage wants):
    immutable, and a 404 once the wheel has changed."""
    names = ["flatbuffers-25.1-py2.py3-none-any.whl", "tflite-2.18.0-py2.py3-none-any.whl",
             "qnnweb-0.1.0-py3-none-any.whl"]
    digests = [hashlib.sha256((folders.wheels_dir / n).read_bytes()).hexdigest() for n in names]
    r = client.get("/api/wheels")
    assert r.json() == {"wheels": [f"/wheels/{d}/{n}" for d, n in zip(digests, names)], "snapshot": None}
    for url, name in zip(r.json()["wheels"], names):
        got = client.get(url)
        assert got.status_code == 200 and got.content == (folders.wheels_dir / name).read_bytes()
        assert got.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert client.get(f"/wheels/{name}").headers["cache-control"] == "no-cache"
    (folders.wheels_dir / names[2]).write_bytes(b"PK rebuilt")
    assert client.get(r.json()["wheels"][2]).status_code == 404
    assert client.get(f"/wheels/{'0' * 64}/{names[0]}").status_code == 404


def _write_pyodide_lock(folders: Settings) -> None:
    """A lock file as tools/build/pyodide_lockfile.py writes it: Pyodide's packages (relative file names)
    plus the current wheels with their sha256."""
    packages = {"numpy": {"name": "numpy", "version": "2.4.6", "file_name": "numpy-2.4.6-cp314-cp314-pyemscripten_wasm32.whl",
                          "sha256": "0" * 64, "imports": ["numpy"], "depends": []}}
    for name in json.loads((folders.wheels_dir / "manifest.json").read_text())["wheels"]:
        package = name.split("-")[0]
        packages[package] = {"name": package, "version": name.split("-")[1], "file_name": name, "imports": [package],
                             "sha256": hashlib.sha256((folders.wheels_dir / name).read_bytes()).hexdigest(), "depends": []}
    lock = {"info": {"arch": "wasm32", "platform": "emscripten_5_0_3", "version": "314.0.7", "python": "3.14.2",
                     "abi_version": "2026_0"}, "packages": packages}
    (folders.wheels_dir / "pyodide-lock.json").write_text(json.dumps(lock))


def test_pyodide_lock_names_this_servers_wheels(app, folders: Settings) -> None:
    """/api/wheels/pyodide-lock.json: the build's lock file with every file name a URL of the server
    (the wheels' versioned URLs, Pyodide's packages under Pyodide's version, both under the root path),
    revalidated by ETag; a 503 saying what to build while it is missing, unreadable or made of other
    wheels (Pyodide would refuse their bytes)."""
    (folders.pyodide_dir / "package.json").write_text(json.dumps({"name": "pyodide", "version": "314.0.7"}))
    with TestClient(app, root_path="/hosted") as c:
        url = "/api/wheels/pyodide-lock.json"
        r = c.get(url)
        assert r.status_code == 503 and "./build.sh build pyodide-lock" in r.json()["detail"]
        _write_pyodide_lock(folders)
        r = c.get(url)
        assert r.status_code == 200 and r.headers["cache-control"] == "no-cache"
        assert_isolated(r)
        packages = r.json()["packages"]
        wheels = c.get("/api/wheels").json()["wheels"]
        assert [packages[n]["file_name"] for n in ("flatbuffers", "tflite", "qnnweb")] == wheels
        assert packages["numpy"]["file_name"] == "/hosted/pyodide/314.0.7/numpy-2.4.6-cp314-cp314-pyemscripten_wasm32.whl"
        assert c.get(url, headers={"If-None-Match": r.headers["etag"]}).status_code == 304
        settle()  # a file's sha256 is cached by version: let the edit be a new one
        (folders.wheels_dir / "qnnweb-0.1.0-py3-none-any.whl").write_bytes(b"PK rebuilt")
        r = c.get(url)
        assert r.status_code == 503 and "another build of qnnweb-0.1.0-py3-none-any.whl" in r.json()["detail"]
        (folders.wheels_dir / "pyodide-lock.json").write_text("{not json")
        assert c.get(url).status_code == 503


def test_the_built_pyodide_lock_holds_the_built_wheels() -> None:
    """data/wheels/pyodide-lock.json as ./build.sh build pyodide-lock made it (pyodide-lock): Pyodide's
    packages, and each wheel with its sha256, its import names (from its bytecode files) and the
    dependencies qnnweb needs (not tflite's numpy)."""
    lock = json.loads((DATA_DIR / "wheels" / "pyodide-lock.json").read_text())
    names = json.loads((DATA_DIR / "wheels" / "manifest.json").read_text())["wheels"]
    ours = {p["file_name"]: p for p in lock["packages"].values() if p["file_name"] in names}
    assert sorted(ours) == sorted(names)
    for name, package in ours.items():
        assert package["sha256"] == hashlib.sha256((DATA_DIR / "wheels" / name).read_bytes()).hexdigest(), name
    by_name = {p["name"]: p for p in ours.values()}
    assert by_name["qnnweb"]["imports"] == ["qnnweb"] and by_name["protobuf"]["imports"] == ["google"]
    assert sorted(by_name["qnnweb"]["depends"]) == ["flatbuffers", "protobuf", "tflite"]
    assert by_name["tflite"]["depends"] == ["flatbuffers"]
    assert "numpy" in lock["packages"] and len(lock["packages"]) > 300


def _write_pyodide_snapshot(folders: Settings) -> dict:
    """A snapshot and its .json as tools/build/pyodide_snapshot.mjs writes them, made of the current files."""
    sha = lambda path: hashlib.sha256(path.read_bytes()).hexdigest()  # noqa: E731
    pyodide = folders.pyodide_dir
    (pyodide / "package.json").write_text(json.dumps({"name": "pyodide", "version": "314.0.7"}))
    (pyodide / "python_stdlib_pyc.zip").write_bytes(b"PK bytecode stdlib")
    (pyodide / "qnnweb-snapshot.bin").write_bytes(b"\x00" * 4096 + b"heap")
    names = json.loads((folders.wheels_dir / "manifest.json").read_text())["wheels"]
    made = {
        "pyodide": "314.0.7",
        "stdlib": {"name": "python_stdlib_pyc.zip", "sha256": sha(pyodide / "python_stdlib_pyc.zip")},
        "wheels": [{"name": n, "sha256": sha(folders.wheels_dir / n)} for n in names],
        "snapshot": {"name": "qnnweb-snapshot.bin", "sha256": sha(pyodide / "qnnweb-snapshot.bin"), "bytes": 4100},
    }
    (pyodide / "qnnweb-snapshot.bin.json").write_text(json.dumps(made))
    return made


def test_pyodide_snapshot_only_with_the_files_it_was_made_of(client: TestClient, folders: Settings) -> None:
    """/api/wheels offers the Pyodide memory snapshot only while the Pyodide version, the bytecode stdlib,
    every wheel (in order) and the snapshot itself are the ones its .json names: restored beside other
    files it would run stale code or not start."""
    made = _write_pyodide_snapshot(folders)
    pyodide, manifest = folders.pyodide_dir, folders.pyodide_dir / "qnnweb-snapshot.bin.json"
    snapshot = lambda: client.get("/api/wheels").json()["snapshot"]  # noqa: E731
    assert snapshot() == "/pyodide/qnnweb-snapshot.bin"
    got = client.get(snapshot())
    assert got.status_code == 200 and got.content == (pyodide / "qnnweb-snapshot.bin").read_bytes()

    def changed(edit) -> None:
        settle()  # a file's sha256 is cached by version: let the edit be a new one
        edit()
        assert snapshot() is None
        _write_pyodide_snapshot(folders)
        assert snapshot() == "/pyodide/qnnweb-snapshot.bin"

    changed(lambda: (folders.wheels_dir / made["wheels"][1]["name"]).write_bytes(b"PK rebuilt"))
    changed(lambda: (pyodide / "python_stdlib_pyc.zip").write_bytes(b"PK another stdlib"))
    changed(lambda: (pyodide / "qnnweb-snapshot.bin").write_bytes(b"half-written"))
    changed(lambda: (pyodide / "package.json").write_text(json.dumps({"version": "315.0.0"})))
    changed(lambda: manifest.write_text(json.dumps({**made, "wheels": made["wheels"][::-1]})))
    changed(lambda: manifest.write_text("{not json"))
    changed(lambda: manifest.write_text(json.dumps({**made, "stdlib": None})))
    changed(lambda: (pyodide / "qnnweb-snapshot.bin").unlink())
    changed(lambda: manifest.unlink())


def test_wheels_without_manifest_put_qnnweb_last(client: TestClient, folders: Settings) -> None:
    (folders.wheels_dir / "manifest.json").unlink()
    (folders.wheels_dir / "escape.whl").unlink()
    names = [u.rsplit("/", 1)[1] for u in client.get("/api/wheels").json()["wheels"]]
    assert names[-1].startswith("qnnweb-") and len(names) == 3


def test_wheels_errors_are_503_with_a_reason(client: TestClient, folders: Settings) -> None:
    (folders.wheels_dir / "tflite-2.18.0-py2.py3-none-any.whl").unlink()
    r = client.get("/api/wheels")
    assert r.status_code == 503 and "tflite-2.18.0" in r.json()["detail"]
    shutil.rmtree(folders.wheels_dir)
    r = client.get("/api/wheels")
    assert r.status_code == 503 and "build.sh build" in r.json()["detail"]


def test_samples(client: TestClient) -> None:
    samples = client.get("/api/samples").json()["samples"]
    assert [s["name"] for s in samples] == ["cat.png", "person.jpg"]
    assert samples[0]["url"] == "/samples/cat.png"
    assert client.get(samples[1]["url"]).content == b"\xff\xd8 fake"


def test_docs_are_offline(client: TestClient) -> None:
    html = client.get("/docs").text
    assert "/static-docs/swagger-ui-bundle.js" in html and "/static-docs/swagger-ui.css" in html
    assert "cdn" not in html.lower() and "https://" not in html.replace("https://fastapi.tiangolo.com", "")
    redoc = client.get("/redoc").text
    assert "/static-docs/redoc.standalone.js" in redoc and "fonts.googleapis" not in redoc
    # Redoc's script as served: its sidebar's logo is no longer Redocly's CDN; revalidated by ETag
    script = client.get("/static-docs/redoc.standalone.js")
    assert script.headers["content-type"].startswith("text/javascript") and "API docs by Redocly" in script.text
    assert "cdn.redoc.ly" not in script.text and script.headers["cache-control"] == "no-cache"
    assert client.get("/static-docs/redoc.standalone.js",
                      headers={"If-None-Match": script.headers["etag"]}).status_code == 304
    head = client.head("/static-docs/redoc.standalone.js")
    assert head.headers["etag"] == script.headers["etag"] and head.content == b""
    schema = client.get("/openapi.json").json()
    assert {"/api/models", "/api/models/{name}", "/models/{name}", "/api/wheels", "/api/samples"} <= set(schema["paths"])


def test_missing_folders_are_404_not_500(tmp_path: Path) -> None:
    s = Settings(data_dir=tmp_path / "none", pyodide_dir=tmp_path / "nopyodide", web_dir=tmp_path / "noweb")
    with TestClient(create_app(s), raise_server_exceptions=False) as c:
        for url in ["/", "/pyodide/pyodide.mjs", "/samples/a.png", "/static/app.js", "/models/x.tflite"]:
            r = c.get(url)
            assert r.status_code == 404, url
            assert_isolated(r)
        assert c.get("/api/samples").json() == {"samples": []}
        assert c.get("/api/wheels").status_code == 503


# ---------------------------------------------------------------- settings


def test_settings_from_env(tmp_path: Path) -> None:
    env = {"QNNWEB_DATA_DIR": str(tmp_path / "d"), "QNNWEB_MODELS_DIR": str(tmp_path / "m")}
    s = Settings.from_env(env)
    assert s.data_dir == (tmp_path / "d").resolve()
    assert s.models_dir == (tmp_path / "m").resolve()
    assert s.wheels_dir == (tmp_path / "d" / "wheels").resolve()
    s2 = Settings.from_env(env, models_dir=tmp_path / "cli")
    assert s2.models_dir == (tmp_path / "cli").resolve()


def test_get_settings_is_overridable(folders: Settings) -> None:
    app = create_app(folders)
    app.dependency_overrides[get_settings] = lambda: Settings(data_dir=folders.data_dir / "empty")
    with TestClient(app) as c:
        assert c.get("/api/models").json()["models"] == []


# ---------------------------------------------------------------- real qnnweb.describe


@pytest.fixture
def real_models(tmp_path: Path) -> Settings:
    src = DATA_DIR / "models"
    for name in ["visual_wake_words.tflite", "visual_wake_words.json"]:
        if not (src / name).is_file():
            pytest.fail(f"{src / name} is missing: run ./build.sh build (it prepares the demo models)")
    models = tmp_path / "models"
    models.mkdir()
    for name in ["visual_wake_words.tflite", "visual_wake_words.json"]:
        shutil.copy(src / name, models / name)
    (models / "corrupt.tflite").write_bytes(b"this is not a flatbuffer" * 20)
    data = (src / "visual_wake_words.tflite").read_bytes()
    (models / "truncated.tflite").write_bytes(data[: len(data) // 3])
    return Settings(data_dir=tmp_path, models_dir=models, compiled_dir=tmp_path / "compiled")


def test_real_describe(real_models: Settings) -> None:
    with TestClient(create_app(real_models)) as c:
        models = {m["name"]: m for m in c.get("/api/models").json()["models"]}
    vww = models["visual_wake_words"]
    assert vww["error"] is None, vww["error"]
    assert vww["format"] == "tflite"
    assert vww["inputs"][0]["shape"] == [1, 96, 96, 3] and vww["inputs"][0]["dtype"] == "float32"
    assert vww["outputs"][0]["shape"] == [1, 2]
    assert vww["labels"] == ["person", "non_person"]
    assert vww["preprocess"]["mean"] == [0, 0, 0]
    assert len(vww["ops"]) >= 30
    for bad in ("corrupt", "truncated"):
        assert models[bad]["error"] and "ModelError" in models[bad]["error"], models[bad]


# ---------------------------------------------------------------- compiled models (.qnn)


def test_compiled_model_is_served_cached_and_revalidated(real_models: Settings) -> None:
    import numpy as np
    import qnnweb

    with TestClient(create_app(real_models)) as c:
        rec = c.get("/api/models/visual_wake_words").json()
        url, version = rec["compiled_url"].split("?v=")
        assert url == "/models/visual_wake_words.tflite.qnn" and version.startswith(rec["sha256"])
        r = c.get(rec["compiled_url"])
        assert r.status_code == 200, r.text
        assert r.headers["content-type"] == "application/octet-stream"
        assert r.headers["cache-control"] == "public, max-age=31536000, immutable"   # this version, for good
        assert_isolated(r)
        etag = r.headers["etag"]
        assert etag == f'"{version}"'
        unversioned = c.get(url)
        assert unversioned.content == r.content and unversioned.headers["cache-control"].endswith("must-revalidate")
        assert c.get(url + "?v=old").headers["cache-control"].endswith("must-revalidate")
        by_stem = c.get("/models/visual_wake_words.qnn")
        assert by_stem.content == r.content and by_stem.headers["etag"] == etag
        assert c.get(url, headers={"If-None-Match": etag}).status_code == 304
        assert c.head(url).status_code == 200
        assert [p.suffix for p in real_models.compiled_dir.iterdir()] == [".qnn"]   # compiled once

        # the same numbers as the model file itself, and the sidecar's labels inside
        compiled = qnnweb.load(r.content, "scalar")
        direct = qnnweb.load(real_models.models_dir / "visual_wake_words.tflite", "scalar")
        x = np.random.default_rng(1).uniform(0, 1, compiled.inputs[0].shape).astype(np.float32)
        assert compiled.run(x)[0].tobytes() == direct.run(x)[0].tobytes()
        assert compiled.metadata["labels"] == ["person", "non_person"]

        # a new sidecar is a new compilation (its labels are in the file), with a new ETag
        side = real_models.models_dir / "visual_wake_words.json"
        side.write_text(json.dumps(dict(json.loads(side.read_text()), labels=["yes", "no"])))
        again = c.get(url, headers={"If-None-Match": etag})
        assert again.status_code == 200 and again.headers["etag"] != etag
        assert c.get("/api/models/visual_wake_words").json()["compiled_url"] != rec["compiled_url"]
        assert qnnweb.load(again.content, "scalar").metadata["labels"] == ["yes", "no"]


def test_precompile_compiles_every_model_once(real_models: Settings) -> None:
    from qnnweb_server.core.compiled import precompile_all

    outcome = precompile_all(real_models)
    assert outcome["visual_wake_words.tflite"] is None
    assert "ModelError" in outcome["corrupt.tflite"] and "ModelError" in outcome["truncated.tflite"]
    files = sorted(p.suffix for p in real_models.compiled_dir.iterdir())
    assert files == [".error", ".error", ".qnn"]
    assert precompile_all(real_models) == outcome and len(list(real_models.compiled_dir.iterdir())) == 3


def test_compiled_model_errors_are_4xx(real_models: Settings) -> None:
    with TestClient(create_app(real_models), raise_server_exceptions=False) as c:
        for bad in ("corrupt", "truncated.tflite"):
            r = c.get(f"/models/{bad}.qnn")
            assert r.status_code == 422, r.text
            assert "cannot be compiled" in r.json()["detail"] and "ModelError" in r.json()["detail"]
            assert str(real_models.models_dir) not in r.text
        assert c.get("/models/nope.qnn").status_code == 404
        assert c.get("/models/..%2Fsecret.qnn").status_code == 404


def test_kernels_are_served_for_the_javascript_runtime(real_models: Settings) -> None:
    from qnnweb import VARIANTS, kernels

    with TestClient(create_app(real_models)) as c:
        for variant in VARIANTS:
            r = c.get(f"/kernels/qnnweb-{variant}.wasm")
            assert r.status_code == 200 and r.content == kernels.wasm_bytes(variant)
            assert r.headers["content-type"] == "application/wasm"
            assert c.get(f"/kernels/qnnweb-{variant}.wasm",
                         headers={"If-None-Match": r.headers["etag"]}).status_code == 304


def test_urls_in_answers_carry_the_root_path(app) -> None:
    """Behind a proxy serving the server under a prefix (--root-path): every URL the API hands out, the
    favicon redirect and the docs page's assets are under that prefix."""
    with TestClient(app, root_path="/hosted/qnnweb", raise_server_exceptions=False) as c:
        models = c.get("/api/models").json()["models"]
        assert models and all(m["url"].startswith("/hosted/qnnweb/models/") and
                              m["compiled_url"].startswith("/hosted/qnnweb/models/") for m in models)
        assert c.get("/api/models/good").json()["url"] == "/hosted/qnnweb/models/good.tflite"
        assert all(w.startswith("/hosted/qnnweb/wheels/") for w in c.get("/api/wheels").json()["wheels"])
        assert all(s["url"].startswith("/hosted/qnnweb/samples/") for s in c.get("/api/samples").json()["samples"])
        r = c.get("/favicon.ico", follow_redirects=False)
        assert r.headers["location"] == "/hosted/qnnweb/static/favicon.svg"
        docs = c.get("/docs").text
        assert "/hosted/qnnweb/openapi.json" in docs and "/hosted/qnnweb/static-docs/" in docs
    with TestClient(app, raise_server_exceptions=False) as c:  # and the same app at the root again
        assert c.get("/api/models/good").json()["url"] == "/models/good.tflite"
