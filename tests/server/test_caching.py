"""Caching and compression: pre-compressed siblings sent by Accept-Encoding, GZip on the fly for the API
and the page's scripts, immutable versioned URLs (Pyodide under its version, wheels and compiled models
under their sha256), validators elsewhere."""

from __future__ import annotations

import gzip
import os
import re
import time

import brotli
import pytest
from fastapi.testclient import TestClient
from qnnweb_server import Settings, create_app
from qnnweb_server.precompress import precompress
from qnnweb_server.static import accepted_encodings
from server_folders import REPO

WASM = b"\x00asm\x01\x00\x00\x00" + bytes(range(256)) * 400  # compressible, 100 KB


@pytest.fixture
def pyodide(folders: Settings) -> Settings:
    """A Pyodide folder with a version, a large module and its siblings."""
    (folders.pyodide_dir / "package.json").write_text('{"name": "pyodide", "version": "314.0.7"}')
    (folders.pyodide_dir / "pyodide.asm.wasm").write_bytes(WASM)
    made = precompress(folders.pyodide_dir)
    assert {os.path.basename(m) for m in made} == {"pyodide.asm.wasm.br", "pyodide.asm.wasm.gz"}
    assert precompress(folders.pyodide_dir) == []  # fresh siblings are not made again
    return folders


@pytest.fixture
def raw(pyodide: Settings):
    """A client that leaves the bodies as sent (encoded)."""
    with TestClient(create_app(pyodide)) as c:
        yield c


def get_raw(client: TestClient, url: str, accept: str) -> tuple[dict, bytes]:
    with client.stream("GET", url, headers={"Accept-Encoding": accept}) as r:
        assert r.status_code == 200, (url, r.status_code)
        return dict(r.headers), b"".join(r.iter_raw())


@pytest.mark.parametrize(("accept", "encoding", "decode"), [
    ("gzip, deflate, br, zstd", "br", brotli.decompress),
    ("gzip;q=1.0, br;q=0", "gzip", gzip.decompress),
    ("identity", None, bytes),
    ("", None, bytes),
])
def test_a_precompressed_sibling_is_sent_by_accept_encoding(raw: TestClient, accept: str, encoding: str | None,
                                                           decode) -> None:
    headers, body = get_raw(raw, "/pyodide/314.0.7/pyodide.asm.wasm", accept)
    assert headers.get("content-encoding") == encoding
    assert headers["content-type"] == "application/wasm" and headers["vary"] == "Accept-Encoding"
    assert int(headers["content-length"]) == len(body) and decode(body) == WASM
    if encoding:
        assert len(body) < len(WASM) / 4


def test_siblings_have_their_own_etag_and_revalidate(raw: TestClient) -> None:
    tags = {get_raw(raw, "/pyodide/pyodide.asm.wasm", accept)[0]["etag"] for accept in ("br", "gzip", "identity")}
    assert len(tags) == 3
    for accept in ("br", "gzip", "identity"):
        tag = get_raw(raw, "/pyodide/pyodide.asm.wasm", accept)[0]["etag"]
        r = raw.get("/pyodide/pyodide.asm.wasm", headers={"Accept-Encoding": accept, "If-None-Match": tag})
        assert r.status_code == 304
    head = raw.head("/pyodide/pyodide.asm.wasm", headers={"Accept-Encoding": "br"})
    assert head.status_code == 200 and head.headers["content-encoding"] == "br" and head.content == b""


def test_a_stale_sibling_is_not_sent(raw: TestClient, pyodide: Settings) -> None:
    """An original rewritten after its siblings were made is sent as it is (until precompress runs)."""
    new = WASM + b"new"
    earlier = time.time() - 60
    for suffix in (".br", ".gz"):  # made a minute before the original's rewrite
        os.utime(pyodide.pyodide_dir / f"pyodide.asm.wasm{suffix}", (earlier, earlier))
    (pyodide.pyodide_dir / "pyodide.asm.wasm").write_bytes(new)
    headers, body = get_raw(raw, "/pyodide/pyodide.asm.wasm", "br, gzip")
    assert "content-encoding" not in headers and body == new
    precompress(pyodide.pyodide_dir)
    headers, body = get_raw(raw, "/pyodide/pyodide.asm.wasm", "br, gzip")
    assert headers["content-encoding"] == "br" and brotli.decompress(body) == new


def test_cache_control_by_url(raw: TestClient) -> None:
    immutable = "public, max-age=31536000, immutable"
    assert raw.get("/pyodide/314.0.7/pyodide.mjs").headers["cache-control"] == immutable
    assert raw.get("/pyodide/pyodide.mjs").headers["cache-control"] == "no-cache"
    assert raw.get("/pyodide/315.0.0/pyodide.mjs").status_code == 404
    for url in ("/static/app.js", "/samples/cat.png", "/"):
        r = raw.get(url)
        assert r.status_code == 200 and r.headers["cache-control"] == "no-cache" and (
            "etag" in r.headers or url == "/"), url


def test_api_json_and_scripts_are_gzipped_on_the_fly(raw: TestClient, pyodide: Settings) -> None:
    (pyodide.web_dir / "app.js").write_text("console.log('qnnweb');\n" * 200)
    for url in ("/api/models", "/static/app.js", "/openapi.json"):
        headers, body = get_raw(raw, url, "gzip")
        assert headers["content-encoding"] == "gzip", url
        assert gzip.decompress(body) == raw.get(url, headers={"Accept-Encoding": "identity"}).content
    headers, _ = get_raw(raw, "/models/good.tflite", "gzip")
    assert "content-encoding" not in headers  # model files: sent as they are (Range, ETag of the bytes)


def test_accept_encoding_parsing() -> None:
    assert accepted_encodings("gzip, deflate, br, zstd") == {"gzip", "deflate", "br", "zstd"}
    assert accepted_encodings("br;q=0, gzip;q=0.5") == {"gzip"}
    assert accepted_encodings("BR ; q=0.9 , gzip;q=bad") == {"br"}
    assert accepted_encodings("") == set()


def test_the_page_loads_the_pyodide_version_build_sh_installs() -> None:
    build = re.search(r'^PYODIDE_VERSION="([^"]+)"', (REPO / "build.sh").read_text(), re.MULTILINE).group(1)
    page = re.search(r'PYODIDE_VERSION = "([^"]+)"', (REPO / "web" / "pyodide-start.js").read_text()).group(1)
    assert page == build


def test_kernels_under_their_digest_are_immutable(folders: Settings, tmp_path) -> None:
    """/api/models names the kernel modules' version (kernels_url): immutable there, a 404 once they
    are rebuilt; /kernels/{file} is the current one, revalidated."""
    kernels = tmp_path / "kernels"
    kernels.mkdir()
    for variant in ("scalar", "simd128"):
        (kernels / f"qnnweb-{variant}.wasm").write_bytes(WASM + variant.encode())
    settings = Settings(**(folders.model_dump() | {"kernels_dir": kernels}))
    with TestClient(create_app(settings)) as c:
        url = c.get("/api/models").json()["kernels_url"]
        assert re.fullmatch(r"/kernels/[0-9a-f]{64}/", url)
        r = c.get(url + "qnnweb-scalar.wasm")
        assert r.status_code == 200 and r.content == WASM + b"scalar"
        assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
        assert r.headers["content-type"] == "application/wasm"
        assert c.get("/kernels/qnnweb-scalar.wasm").headers["cache-control"] == "no-cache"
        assert c.get(url + "qnnweb-relaxed.wasm").status_code == 404
        (kernels / "qnnweb-simd128.wasm").write_bytes(WASM + b"rebuilt")
        assert c.get(url + "qnnweb-scalar.wasm").status_code == 404
        assert c.get("/api/models").json()["kernels_url"] != url
    empty = Settings(**(folders.model_dump() | {"kernels_dir": tmp_path / "none"}))
    with TestClient(create_app(empty)) as c:
        assert c.get("/api/models").json()["kernels_url"] is None


def test_vendor_packages_under_their_version_are_immutable(folders: Settings, tmp_path) -> None:
    """/vendor/{package}@{version}/ (what the bench page loads) is immutable while that version is
    installed, a 404 for any other version; /vendor/{package}/ is the installed one, revalidated."""
    modules = tmp_path / "node_modules"
    for name, version in (("onnxruntime-web", "1.30.0"), ("@litertjs/core", "2.5.3")):
        (modules / name / "dist").mkdir(parents=True)
        (modules / name / "package.json").write_text(f'{{"name": "{name}", "version": "{version}"}}')
        (modules / name / "dist" / "index.js").write_text(f"export const name = '{name}';\n")
    (modules / "onnxruntime-web" / "dist" / ".hidden").write_text("x")
    settings = Settings(**(folders.model_dump() | {"vendor_dir": modules}))
    with TestClient(create_app(settings)) as c:
        for url, name in (("/vendor/onnxruntime-web@1.30.0/dist/index.js", "onnxruntime-web"),
                          ("/vendor/@litertjs/core@2.5.3/dist/index.js", "@litertjs/core")):
            r = c.get(url)
            assert r.status_code == 200 and r.text == f"export const name = '{name}';\n", url
            assert r.headers["cache-control"] == "public, max-age=31536000, immutable"
            assert r.headers["content-type"].startswith("text/javascript")
        assert c.get("/vendor/onnxruntime-web/dist/index.js").headers["cache-control"] == "no-cache"
        for url in ("/vendor/onnxruntime-web@1.29.0/dist/index.js", "/vendor/@litertjs/core@2.5/dist/index.js",
                    "/vendor/@litertjs@2.5.3/core/dist/index.js", "/vendor/@2.5.3/dist/index.js",
                    "/vendor/onnxruntime-web@1.30.0/dist/.hidden", "/vendor/onnxruntime-web@1.30.0/../x"):
            assert c.get(url).status_code == 404, url


def test_the_bench_page_loads_the_vendor_versions_build_sh_installs() -> None:
    pins = re.search(r"^NPM_BENCH_PACKAGES=\(([^)]*)\)", (REPO / "build.sh").read_text(), re.MULTILINE).group(1)
    pinned = set(re.findall(r'"([^"]+)"', pins))
    page = (REPO / "web" / "bench" / "index.html").read_text() + (REPO / "web" / "bench" / "bench.js").read_text()
    loaded = set(re.findall(r"/vendor/((?:@[\w.-]+/)?[\w.-]+@[\w.-]+)/", page))
    assert loaded == pinned
    unversioned = re.sub(r"/vendor/(?:@[\w.-]+/)?[\w.-]+@[\w.-]+/", "", page)
    assert not re.search(r"/vendor/[@\w]", unversioned), "a /vendor/ URL without the package's version"
