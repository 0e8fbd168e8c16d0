"""The npm package (dist/qnnweb-VERSION.tgz, made by ./build.sh build npm) as a JavaScript user gets it:
npm installs the tarball into a scratch project, a plain static server (Python's http.server, not the
qnnweb server) serves that folder cross-origin isolated, and a page in headless Chromium imports the
package by its `exports` (an import map of them). A model compiled by the `qnnweb compile` command
gives the very bytes CPython gives, in every variant the engine validates, on one thread and on two,
with the kernels found inside the package; each module exports what its .d.ts declares; the demo
pages do not ship."""

from __future__ import annotations

import base64
import functools
import http.server
import json
import re
import subprocess
import sys
import tarfile
import threading
import tomllib

import numpy as np
import pytest
import qnnweb
from browser_pages import DATA_DIR, REPO

VERSION = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
TARBALL = REPO / "dist" / f"qnnweb-{VERSION}.tgz"
MODEL = DATA_DIR / "models" / "image_classification.tflite"  # small: compiles in a second
KERNELS = [f"qnnweb-{v}{t}.wasm" for v in ("scalar", "simd128", "relaxed") for t in ("", "-threads")]
MODULES = {"qnnweb": "qnnweb.d.ts", "qnnweb/image": "qnnweb-image.d.ts", "qnnweb/vision": "qnnweb-vision.d.ts",
           "qnnweb/audio": "qnnweb-audio.d.ts"}

RUN_JS = """async ([input, runs]) => {
    const qnnweb = await import("qnnweb");
    const bytes = Uint8Array.from(atob(input), (c) => c.charCodeAt(0));
    const results = [];
    for (const [variant, threads] of runs) {
        const model = await qnnweb.load("./model.qnn", { variant, threads });
        const outputs = model.run(bytes).map((out) => {
            let s = "";
            for (const b of new Uint8Array(out.buffer)) s += String.fromCharCode(b);
            return btoa(s);
        });
        const { variant: ran, threads: running, threads_note } = model.info();
        model.close();
        results.push({ variant, threads, outputs, ran, running, threads_note });
    }
    return results;
}"""


@pytest.fixture(scope="module")
def tarball():
    if not TARBALL.is_file():
        pytest.fail(f"{TARBALL} is missing: run ./build.sh build npm", pytrace=False)
    return TARBALL


@pytest.fixture(scope="module")
def project(tarball, tmp_path_factory):
    """A scratch npm project with the tarball installed, an index.html whose import map is the package's
    `exports`, and model.qnn (made by the `qnnweb compile` command, as a page's author makes it)."""
    root = tmp_path_factory.mktemp("npm-project")
    (root / "package.json").write_text(json.dumps({"name": "qnnweb-npm-test", "private": True, "type": "module"}))
    # offline: the package has no dependencies, so npm needs nothing but the tarball
    done = subprocess.run(["npm", "install", "--offline", "--no-audit", "--no-fund", str(tarball)], cwd=root,
                          capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((root / "node_modules" / "qnnweb" / "package.json").read_text())
    imports = {"qnnweb" + key.removeprefix("."): f"./node_modules/qnnweb/{target['default'].removeprefix('./')}"
               for key, target in manifest["exports"].items() if isinstance(target, dict)}
    importmap = json.dumps({"imports": imports})
    (root / "index.html").write_text(f'<!doctype html>\n<script type="importmap">{importmap}</script>\n')
    subprocess.run([sys.executable, "-m", "qnnweb", "compile", str(MODEL), "-o", str(root / "model.qnn")],
                   check=True, capture_output=True)
    return root


class IsolatedHandler(http.server.SimpleHTTPRequestHandler):
    """Static files with the headers that make a page cross-origin isolated (threads need them)."""

    def end_headers(self):
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        super().end_headers()

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def static_url(project):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0),
                                             functools.partial(IsolatedHandler, directory=str(project)))
    thread = threading.Thread(target=server.serve_forever, name="npm-static-server", daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_address[1]}"
    server.shutdown()
    thread.join(timeout=10)


@pytest.fixture(scope="module")
def package_page(browser, static_url):
    """(page, the URLs it asked for, its errors): index.html, cross-origin isolated."""
    context = browser.new_context()
    page = context.new_page()
    requests, errors = [], []
    page.on("request", lambda r: requests.append(r.url))
    page.on("pageerror", lambda e: errors.append(str(e)))
    page.goto(f"{static_url}/index.html")
    assert page.evaluate("crossOriginIsolated") is True
    yield page, requests, errors
    context.close()
    assert not errors, errors


def test_tarball_ships_the_modules_types_and_kernels_only(tarball):
    with tarfile.open(tarball) as tar:
        names = {n.removeprefix("package/") for n in tar.getnames()}
        manifest = json.load(tar.extractfile("package/package.json"))
    assert manifest["name"] == "qnnweb" and manifest["version"] == VERSION
    modules = {f"lib/{m}" for m in ("qnnweb.js", "qnnweb-image.js", "qnnweb-vision.js", "qnnweb-audio.js",
                                    *MODULES.values())}
    assert names == {"package.json", "README.md", *modules, *(f"kernels/{k}" for k in KERNELS)}
    assert "//" not in manifest  # the note on the repo's web/package.json is not shipped


def test_each_module_exports_what_its_declarations_say(project, package_page):
    page, _, _ = package_page
    for specifier, declarations in MODULES.items():
        text = (project / "node_modules" / "qnnweb" / "lib" / declarations).read_text()
        declared = sorted(re.findall(r"^export (?:const|function|class) (\w+)", text, re.MULTILINE))
        exported = page.evaluate("async (s) => Object.keys(await import(s)).sort()", specifier)
        assert exported == declared, specifier


def test_same_bytes_as_cpython_in_every_variant_with_the_packaged_kernels(project, package_page):
    page, requests, _ = package_page
    compiled = (project / "model.qnn").read_bytes()
    variants = page.evaluate("async () => (await import('qnnweb')).supportedVariants()")
    assert {"simd128", "scalar"} <= set(variants), variants
    first = qnnweb.load(compiled, "scalar").inputs[0]
    x = np.random.default_rng(5).integers(0, 256, first.nbytes, dtype=np.uint8)
    runs = [[variant, threads] for variant in variants for threads in (1, 2)]
    results = page.evaluate(RUN_JS, [base64.b64encode(x.tobytes()).decode(), runs])
    for result in results:
        cpython = qnnweb.load(compiled, result["variant"])
        expected = [y.tobytes() for y in cpython.run(x.view(first.dtype).reshape(first.shape))]
        assert [base64.b64decode(out) for out in result["outputs"]] == expected, result["variant"]
        assert result["ran"] == result["variant"]
        assert result["running"] == result["threads"], result["threads_note"]
    kernels = sorted({url.rsplit("/", 1)[1] for url in requests if url.endswith(".wasm")})
    assert kernels == sorted(f"qnnweb-{v}{t}.wasm" for v in variants for t in ("", "-threads"))
    assert all("/node_modules/qnnweb/kernels/" in url for url in requests if url.endswith(".wasm")), requests
