"""Benchmark qnnweb against LiteRT.js and ONNX Runtime Web on the same int8 models, in headless
Chromium, in one run (``./build.sh bench``; see ``--help`` and README "Performance").

What it does:

1. Models: the paths given with ``--model`` (.onnx or .tflite), default the prepared demo models
   ``data/models/efficientnet_lite0_u8s8.onnx`` and ``mobilenet_v2_u8s8.onnx``. For an ONNX model,
   LiteRT.js runs its TFLite twin, made by ``qnnweb.exporters.export_tflite`` (int8 weights, float32
   in/out) and written to ``OUT/twins/``; native ``ai-edge-litert`` checks that the twin gives the
   same top-5 as native onnxruntime on the sample photo. An engine that cannot read a model is
   recorded with ``error`` saying why.
2. Input: ``data/samples/coffee.png`` resized and cropped as the model's ``.json`` sidecar says
   (Pillow bilinear), normalised and laid out for each model file by ``qnnweb.image.rgb_to_input``
   (so every engine gets the very same input tensor); without a sidecar the photo is resized to the
   input size and scaled to [-1, 1].
3. A qnnweb server (COOP/COEP) on a free 127.0.0.1 port serves everything: the bench page
   ``web/bench/`` (one engine, one model per page), Pyodide, the wheels, the npm engines under
   ``/vendor/``, the models and the inputs (a temporary folder).
4. Headless Chromium (Playwright): per engine x variant x model x threads, time to first inference
   cold (fresh browser context: empty HTTP cache) and warm (reload in that context); then, all
   pages of a model kept open, ``--runs`` rounds interleaved (A, B, C, A, B, C ...), one inference
   per engine per round, after ``--warmup`` runs. Per round each engine's time divided by qnnweb's
   (``relaxed``, else the fastest variant) on as many threads in the same round; the record has the
   median ratio.
5. ``--native``: native onnxruntime and ai-edge-litert in this Python (1 thread) in the same rounds.
6. Writes ``OUT/bench.json`` (list of records), ``OUT/bench.md`` (table with date, machine,
   versions), ``OUT/bench.png`` (matplotlib) and ``OUT/bench_meta.json``.
"""

from __future__ import annotations

import argparse
import base64
import datetime as _dt
import hashlib
import importlib.metadata
import json
import math
import os
import platform
import shutil
import socket
import statistics
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests"))  # reference.onnxruntime_session, shared with the model tests

import numpy as np  # noqa: E402

import qnnweb  # noqa: E402
import qnnweb.image  # noqa: E402

ENGINES = ("qnnweb", "qnnweb-js", "litert", "ort")
QNNWEB_ENGINES = ("qnnweb", "qnnweb-js")   # one slot per kernel variant
VARIANTS = ("relaxed", "simd128", "scalar")
DEFAULT_MODELS = ("data/models/efficientnet_lite0_u8s8.onnx", "data/models/mobilenet_v2_u8s8.onnx")
PHOTO = REPO / "data" / "samples" / "coffee.png"
CHROMIUM = Path(os.environ.get("QNNWEB_CHROMIUM", "/usr/bin/chromium"))
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
NPM_DIR = REPO / ".cache" / "npm" / "node_modules"
NPM_PACKAGES = ("@litertjs/core", "@litertjs/wasm-utils", "onnxruntime-web")
ENGINE_LABELS = {
    "qnnweb": "qnnweb (Pyodide)",
    "qnnweb-js": "qnnweb.js (compiled)",
    "litert": "LiteRT.js",
    "ort": "ONNX Runtime Web",
    "native-onnxruntime": "onnxruntime (native)",
    "native-litert": "ai-edge-litert (native)",
}
LOAD_TIMEOUT_MS = 300_000


def log(*args) -> None:
    print("[bench]", *args, file=sys.stderr, flush=True)


class BenchError(RuntimeError):
    """Something the benchmark needs is missing (says what to run)."""


# ------------------------------------------------------------------------------------ statistics

def median(values):
    return float(statistics.median(values)) if values else None


def percentile(values, q):
    """Linear-interpolated percentile (numpy's default)."""
    return float(np.percentile(np.asarray(values, dtype=float), q)) if values else None


# ---------------------------------------------------------------------------------------- models

class TensorSpec:
    """What qnnweb.image.rgb_to_input needs from a tensor, from qnnweb.describe()."""

    def __init__(self, d):
        self.name, self.shape, self.dtype = d["name"], tuple(d["shape"]), d["dtype"]
        self.scale, self.zero_point = d.get("scale"), d.get("zero_point")
        self.size = math.prod(self.shape)


def _sidecar(path: Path) -> dict:
    side = path.with_suffix(".json")
    if side.is_file():
        try:
            data = json.loads(side.read_text())
            return data if isinstance(data, dict) else {}
        except (OSError, ValueError):
            return {}
    return {}


def _photo_rgb(width: int, height: int, pre: dict | None) -> bytes:
    """coffee.png as width*height*3 RGB bytes: the sidecar's resize (shorter side) + centre crop,
    or straight to the input size (Pillow bilinear, as the demo page)."""
    from PIL import Image

    img = Image.open(PHOTO).convert("RGB")
    resize = (pre or {}).get("resize")
    if isinstance(resize, (int, float)) and not isinstance(resize, bool):
        w, h = img.size
        if w <= h:
            rw, rh = int(resize), int(resize * h / w)
        else:
            rw, rh = int(resize * w / h), int(resize)
        img = img.resize((rw, rh), Image.BILINEAR)
        crop = (pre or {}).get("crop") or min(width, height)
        cw, ch = (crop, crop) if isinstance(crop, (int, float)) else tuple(crop)
        x0, y0 = round((rw - cw) / 2), round((rh - ch) / 2)
        img = img.crop((x0, y0, x0 + int(cw), y0 + int(ch)))
        if img.size != (width, height):
            img = img.resize((width, height), Image.BILINEAR)
    else:
        img = img.resize((width, height), Image.BILINEAR)
    return img.tobytes()


def _pattern(spec: TensorSpec) -> bytes:
    """A deterministic input for a model whose input is not an RGB image."""
    rng = np.random.default_rng(1234)
    if spec.dtype == "float32":
        return rng.uniform(-1, 1, spec.size).astype("<f4").tobytes()
    if spec.dtype in ("int8", "uint8"):
        return rng.integers(0, 256, spec.size, dtype=np.uint8).tobytes()
    if spec.dtype == "int32":
        return rng.integers(0, 10, spec.size).astype("<i4").tobytes()
    raise ValueError(f"no deterministic input for dtype {spec.dtype}")


def model_input(spec: TensorSpec, sidecar: dict) -> tuple[bytes, str]:
    """(input bytes, how they were made) for one model file."""
    shape = spec.shape
    if len(shape) == 4 and (shape[1] == 3 or shape[3] == 3) and spec.dtype in ("float32", "int8"):
        nchw = qnnweb.image.is_nchw(shape)
        h, w = (shape[2], shape[3]) if nchw else (shape[1], shape[2])
        pre = sidecar.get("preprocess") if isinstance(sidecar.get("preprocess"), dict) else None
        if pre and pre.get("mean") is not None and pre.get("std") is not None:
            mean, std, how = pre["mean"], pre["std"], "preprocess from the model's sidecar"
        else:
            mean, std, how = [127.5] * 3, [127.5] * 3, "no sidecar: resized to the input, (p - 127.5) / 127.5"
        rgb = _photo_rgb(w, h, pre)
        x = qnnweb.image.rgb_to_input(rgb, spec, mean, std)
        return bytes(memoryview(x).cast("B")), f"{PHOTO.name}, {how}"
    return _pattern(spec), "deterministic pattern (input is not an RGB image)"


class ModelFileInfo:
    """One model file the engines load (the user's file or a TFLite twin)."""

    def __init__(self, path: Path, sidecar: dict):
        self.path = path
        self.bytes = path.read_bytes()
        self.sha256 = hashlib.sha256(self.bytes).hexdigest()
        self.format = "onnx" if path.suffix.lower() == ".onnx" else "tflite"
        self.error = None
        self.input = self.output = None
        self.input_bytes = None
        self.input_how = None
        try:
            d = qnnweb.describe(self.bytes)
            self.input = TensorSpec(d["inputs"][0])
            self.output = TensorSpec(d["outputs"][0])
            self.input_bytes, self.input_how = model_input(self.input, sidecar)
        except Exception as exc:  # a model qnnweb cannot parse: other engines may still read it
            self.error = f"{type(exc).__name__}: {exc}"


class BenchModel:
    def __init__(self, index: int, given: str):
        self.given = given
        self.path = Path(given)
        if not self.path.is_absolute() and not self.path.exists():
            self.path = REPO / given
        if not self.path.is_file():
            raise BenchError(f"--model {given}: no such file (run ./build.sh build for the demo models)")
        self.format = {".onnx": "onnx", ".tflite": "tflite"}.get(self.path.suffix.lower())
        if self.format is None:
            raise BenchError(f"--model {given}: expected a .onnx or .tflite file")
        self.index = index
        self.sidecar = _sidecar(self.path)
        self.labels = self.sidecar.get("labels") if isinstance(self.sidecar.get("labels"), list) else None
        meaning = str((self.sidecar.get("output") or {}).get("meaning", "")) if isinstance(
            self.sidecar.get("output"), dict) else ""
        self.logits = "logit" in meaning.lower()
        self.file = ModelFileInfo(self.path, self.sidecar)
        self.twin: ModelFileInfo | None = None
        self.twin_path: Path | None = None
        self.twin_error: str | None = None
        self.twin_check: dict | None = None

    @property
    def name(self):
        return self.path.stem

    def make_twin(self, out_dir: Path) -> None:
        """ONNX -> int8 TFLite twin for LiteRT.js (qnnweb.exporters.export_tflite)."""
        if self.format != "onnx":
            return
        try:
            from qnnweb.exporters import export_tflite
            from qnnweb.importers import import_model

            data = export_tflite(import_model(self.file.bytes))
        except Exception as exc:
            self.twin_error = f"the TFLite exporter failed: {type(exc).__name__}: {exc}"
            log(f"{self.name}: {self.twin_error}")
            return
        out_dir.mkdir(parents=True, exist_ok=True)
        self.twin_path = out_dir / f"{self.name}.tflite"
        self.twin_path.write_bytes(data)
        self.twin = ModelFileInfo(self.twin_path, self.sidecar)
        if self.twin.error:
            self.twin_error = f"qnnweb cannot describe the exported twin: {self.twin.error}"

    def file_for(self, engine: str) -> tuple[ModelFileInfo | None, str | None]:
        """(the file this engine loads, None) or (None, why it cannot run this model)."""
        if engine in QNNWEB_ENGINES:
            return self.file, None
        if engine in ("ort", "native-onnxruntime"):
            if self.format != "onnx":
                return None, "onnxruntime reads only ONNX models (this is a .tflite file)"
            return self.file, None
        if engine in ("litert", "native-litert"):
            if self.format == "tflite":
                return self.file, None
            if self.twin is None or self.twin_error:
                return None, f"no TFLite twin for this ONNX model: {self.twin_error}"
            return self.twin, None
        raise ValueError(engine)

    def scores(self, raw: bytes, dtype: str, file: ModelFileInfo) -> np.ndarray:
        """The output as float scores (dequantized, softmax for logits)."""
        dt = {"float32": "<f4", "int8": "i1", "uint8": "u1", "int32": "<i4"}[dtype]
        v = np.frombuffer(raw, dtype=dt).astype(np.float64)
        out = file.output
        if dtype in ("int8", "uint8") and out is not None and out.scale:
            scale = out.scale[0] if isinstance(out.scale, (list, tuple)) else out.scale
            zp = out.zero_point[0] if isinstance(out.zero_point, (list, tuple)) else out.zero_point
            v = (v - zp) * scale
        if self.logits:
            e = np.exp(v - v.max())
            v = e / e.sum()
        return v

    def top5(self, scores: np.ndarray):
        order = sorted(range(len(scores)), key=lambda i: (-scores[i], i))[:5]
        return [[int(i), round(float(scores[i]), 6)] for i in order]

    def label(self, i):
        if self.labels and 0 <= i < len(self.labels):
            return self.labels[i]
        return str(i)


def top5_agree(a: np.ndarray, b: np.ndarray, k: int = 5) -> tuple[bool, float]:
    """Do two score vectors give the same top-k? Yes when the k best classes are the same, in
    the same order; or, up to ties, when the vectors differ little (at most 5% of the largest
    score) and each one's top-k classes are within the other's top-k up to twice that
    difference. Returns (agree, max abs difference)."""
    if a.shape != b.shape:
        return False, float("inf")
    eps = float(np.max(np.abs(a - b)))
    ta = sorted(range(len(a)), key=lambda i: (-a[i], i))[:k]
    tb = sorted(range(len(b)), key=lambda i: (-b[i], i))[:k]
    if ta == tb:
        return True, eps
    scale = max(float(np.max(np.abs(a))), float(np.max(np.abs(b))), 1e-12)
    if eps > 0.05 * scale:
        return False, eps
    tol = 2 * eps + 1e-9
    ok = all(b[c] >= b[tb[-1]] - tol for c in ta) and all(a[c] >= a[ta[-1]] - tol for c in tb)
    ok = ok and b[ta[0]] >= b[tb[0]] - tol and a[tb[0]] >= a[ta[0]] - tol
    return bool(ok), eps


# ---------------------------------------------------------------------------------------- native

class NativeSlot:
    """Native onnxruntime / ai-edge-litert in this process (1 thread)."""

    def __init__(self, engine: str, model: BenchModel, file: ModelFileInfo):
        self.engine, self.model, self.file = engine, model, file
        self.variant = None
        self.threads = 1
        self.ok = False
        self.record: dict = {}
        self.ms: list[float] = []
        self.kernel_ms: list[float | None] = []

    def _create(self):
        if self.engine == "native-onnxruntime":
            # the reference session of the model tests: where this CPU's u8s8 path saturates
            # (AMD EPYC without AVX-VNNI), it runs the model's exact int8 twin
            from reference.onnxruntime_session import ReferenceSession

            sess = ReferenceSession(self.file.bytes, threads=1)
            if sess.twin:
                self.record["note"] = "onnxruntime's u8s8 path saturates on this CPU: ran the exact int8 twin"
            name = sess.session.get_inputs()[0].name
            dtype = {"float32": np.float32, "int8": np.int8, "uint8": np.uint8}[self.file.input.dtype]
            x = np.frombuffer(self.file.input_bytes, dtype=dtype).reshape(self.file.input.shape)

            def run():
                return sess.run({name: x})[0]
            return run
        from ai_edge_litert.interpreter import Interpreter

        interp = Interpreter(model_content=self.file.bytes, num_threads=1)
        interp.allocate_tensors()
        d_in = interp.get_input_details()[0]
        d_out = interp.get_output_details()[0]
        x = np.frombuffer(self.file.input_bytes, dtype=d_in["dtype"]).reshape(d_in["shape"])

        def run():
            interp.set_tensor(d_in["index"], x)
            interp.invoke()
            return interp.get_tensor(d_out["index"])
        return run

    def start(self, warmup: int) -> None:
        try:
            t0 = time.perf_counter()
            run = self._create()
            out = run()
            cold = (time.perf_counter() - t0) * 1000
            t0 = time.perf_counter()
            run = self._create()
            out = run()
            warm = (time.perf_counter() - t0) * 1000
            for _ in range(warmup):
                run()
            self.run_fn = run
            out = np.ascontiguousarray(out)
            dtype = str(out.dtype)
            self.scores = self.model.scores(out.tobytes(), dtype, self.file)
            self.record.update(ttfi_ms=cold, ttfi_warm_ms=warm, wasm=None,
                               info={"what": "native, in CPython, 1 thread; ttfi = session creation + first run"})
            self.ok = True
        except Exception as exc:
            self.record["error"] = f"{type(exc).__name__}: {exc}"

    def run(self, n: int):
        ms = []
        for _ in range(n):
            t0 = time.perf_counter()
            self.run_fn()
            ms.append((time.perf_counter() - t0) * 1000)
        return ms, [None] * n

    def close(self):
        self.run_fn = None


# --------------------------------------------------------------------------------------- browser

class BrowserSlot:
    """One engine (x variant x threads) on one model, in its own browser context and bench page."""

    def __init__(self, engine, model: BenchModel, file: ModelFileInfo, variant, threads, base_url, served):
        self.engine, self.model, self.file = engine, model, file
        self.variant, self.threads = variant, threads
        self.base_url = base_url
        self.served = served  # {"model": url, "input": url}
        self.ok = False
        self.record: dict = {}
        self.ms: list[float] = []
        self.kernel_ms: list[float | None] = []
        self.context = self.page = None
        self.console: list[str] = []

    def url(self) -> str:
        # qnnweb (Pyodide and qnnweb.js) loads the server's compiled model (.qnn) of the same file
        model = self.compiled_url if self.engine in QNNWEB_ENGINES else self.served["model"]
        q = {"engine": self.engine, "model": model, "input": self.served["input"],
             "dtype": self.file.input.dtype, "shape": ",".join(str(d) for d in self.file.input.shape),
             "threads": str(self.threads)}
        if self.variant:
            q["variant"] = self.variant
        if self.engine == "qnnweb-js":
            q["kernels"] = self.kernels_url
        return f"{self.base_url}/static/bench/index.html?{urllib.parse.urlencode(q)}"

    def _wait(self):
        self.page.wait_for_function("window.benchResult && window.benchResult.state !== 'loading'",
                                    timeout=LOAD_TIMEOUT_MS)
        return self.page.evaluate("window.benchResult")

    def start(self, browser, warmup: int) -> None:
        self.context = browser.new_context()  # fresh context: empty HTTP cache
        if self.engine in QNNWEB_ENGINES:
            # the versioned URL the listing gives a page; the server compiles a model at start-up or
            # on its first request, long before a visitor comes: not part of the visitor's time
            name = self.served["model"].rsplit("/", 1)[1]
            with urllib.request.urlopen(f"{self.base_url}/api/models/{name}") as r:
                self.compiled_url = json.loads(r.read())["compiled_url"]
            urllib.request.urlopen(self.base_url + self.compiled_url).read()
            with urllib.request.urlopen(f"{self.base_url}/api/models") as r:
                self.kernels_url = json.loads(r.read())["kernels_url"]  # versioned, as the demo loads them
        self.page = self.context.new_page()
        self.page.on("console", lambda m: m.type == "error" and self.console.append(m.text[:500]))
        self.page.on("pageerror", lambda e: self.console.append(str(e)[:500]))
        try:
            self.page.goto(self.url())
            cold = self._wait()
            if cold["state"] != "ready":
                self.record["error"] = _short_error(cold.get("error"))
                self.record["wasm"] = cold.get("wasm")
                return
            self.page.reload()  # same context: warm HTTP cache (and V8's wasm code cache)
            warm = self._wait()
            if warm["state"] != "ready":
                self.record["error"] = "after reload: " + _short_error(warm.get("error"))
                return
            self.page.evaluate(f"window.bench.run({int(warmup)})")
        except Exception as exc:  # Playwright timeout, crash
            self.record["error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            return
        out = warm["output"]
        raw = base64.b64decode(out["base64"])
        self.scores = self.model.scores(raw, out["dtype"], self.file)
        cold_out = base64.b64decode(cold["output"]["base64"])
        info = dict(warm.get("info") or {})
        if "ops" in info:
            info["ops"] = len(info["ops"])
        self.record.update(
            ttfi_ms=cold["ttfi_ms"], ttfi_warm_ms=warm["ttfi_ms"],
            ttfi_stages_cold_ms=cold.get("stages"), first_run_ms=cold.get("first_run_ms"),
            wasm=warm.get("wasm"), info=info, versions=warm.get("versions"),
            deterministic=cold_out == raw, first_visit_bytes=cold.get("first_visit_bytes"),
        )
        if self.engine == "qnnweb":
            self.record["pyodide_ready_ms"] = (cold.get("stages") or {}).get("runtime_loaded")
        if self.engine in QNNWEB_ENGINES:
            self.record["variant"] = warm.get("variant")
            self.record["kernels"] = info.get("kernels")
        self.user_agent = warm.get("userAgent")
        self.ok = True

    def run(self, n: int):
        r = self.page.evaluate(f"window.bench.run({int(n)})")
        return r["ms"], r["kernel_ms"]

    def profile(self):
        return self.page.evaluate("window.bench.profile()")

    def close(self):
        if self.context is not None:
            try:
                self.context.close()
            except Exception:
                pass
            self.context = self.page = None


def _short_error(err) -> str:
    text = str(err or "unknown error").strip()
    lines = [line for line in text.splitlines() if line.strip()]
    # Pyodide tracebacks: the exception line; JS: the first line
    for line in lines:
        if line.startswith(("qnnweb.", "ValueError", "KeyError", "RuntimeError", "TypeError")) or "Error:" in line:
            if "PythonError: Traceback" in line:
                continue
            return line.strip()[:600]
    return (lines[0] if lines else text)[:600]


# ---------------------------------------------------------------------------------------- server

def start_server(serve_dir: Path):
    import uvicorn
    from qnnweb_server import Settings, create_app

    settings = Settings(
        data_dir=REPO / "data",
        models_dir=serve_dir / "models",
        samples_dir=serve_dir / "inputs",  # the input tensors, at /samples/<name>.bin
        pyodide_dir=REPO / ".cache" / "pyodide",
        wheels_dir=os.environ.get("QNNWEB_WHEELS_DIR") or None,
        vendor_dir=NPM_DIR,
        web_dir=REPO / "web",
        compiled_dir=serve_dir / "compiled",
    )
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(create_app(settings), host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="qnnweb-bench-server", daemon=True)
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise BenchError("the qnnweb server did not start")
        time.sleep(0.05)
    return server, thread, f"http://127.0.0.1:{port}"


def check_prerequisites(engines) -> None:
    missing = []
    if not CHROMIUM.exists():
        missing.append(f"Chromium at {CHROMIUM} (apt-get install chromium, or set QNNWEB_CHROMIUM)")
    if not (REPO / ".cache" / "pyodide" / "pyodide.asm.wasm").is_file():
        missing.append("Pyodide in .cache/pyodide (./build.sh setup)")
    if not (REPO / "data" / "wheels" / "manifest.json").is_file():
        missing.append("data/wheels/manifest.json (./build.sh build)")
    if not PHOTO.is_file():
        missing.append(f"{PHOTO} (./build.sh build samples)")
    if "litert" in engines and not (NPM_DIR / "@litertjs" / "core" / "wasm").is_dir():
        missing.append("@litertjs/core in .cache/npm (./build.sh setup)")
    if "ort" in engines and not (NPM_DIR / "onnxruntime-web" / "dist").is_dir():
        missing.append("onnxruntime-web in .cache/npm (./build.sh setup)")
    if missing:
        raise BenchError("missing: " + "; ".join(missing))


def npm_version(package: str):
    try:
        return json.loads((NPM_DIR / package / "package.json").read_text())["version"]
    except (OSError, ValueError, KeyError):
        return None


def pip_version(package: str):
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def machine() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    flags = ""
    try:
        text = Path("/proc/cpuinfo").read_text()
        flags = next((ln for ln in text.splitlines() if ln.startswith("flags")), "")
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "os": platform.platform(),
            "avx_vnni": " avx_vnni" in flags, "avx512_vnni": "avx512_vnni" in flags}


# ------------------------------------------------------------------------------------------- run

def parse_args(argv=None):
    p = argparse.ArgumentParser(prog="./build.sh bench", description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--model", action="append", default=[], metavar="PATH",
                   help="a .onnx or .tflite model (repeatable); default: the prepared demo models")
    p.add_argument("--engines", default=",".join(ENGINES), help="comma-separated: qnnweb,qnnweb-js,litert,ort")
    p.add_argument("--variants", default=",".join(VARIANTS), help="qnnweb kernel variants: relaxed,simd128,scalar")
    p.add_argument("--runs", type=int, default=None, help="timed rounds (one inference per engine per round); "
                   "default 30, --quick 5")
    p.add_argument("--warmup", type=int, default=None, help="untimed runs per engine first (default 5, --quick 2)")
    p.add_argument("--threads", default="1", help="thread counts, comma-separated (every engine runs with each)")
    p.add_argument("--out", default="results", help="output folder (default results/)")
    p.add_argument("--native", action="store_true", help="also native onnxruntime and ai-edge-litert, 1 thread")
    p.add_argument("--quick", action="store_true",
                   help="CI mode: few runs and one model (the smallest default model every engine can run)")
    args = p.parse_args(argv)
    args.engines = [e.strip() for e in args.engines.split(",") if e.strip()]
    for e in args.engines:
        if e not in ENGINES:
            p.error(f"unknown engine {e!r} (choose from {', '.join(ENGINES)})")
    args.variants = [v.strip() for v in args.variants.split(",") if v.strip()]
    for v in args.variants:
        if v not in VARIANTS:
            p.error(f"unknown variant {v!r} (choose from {', '.join(VARIANTS)})")
    try:
        args.threads = [int(t) for t in str(args.threads).split(",") if t.strip()]
    except ValueError:
        p.error("--threads takes integers, e.g. 1 or 1,2")
    if not args.threads or min(args.threads) < 1:
        p.error("--threads must be >= 1")
    if args.runs is None:
        args.runs = 5 if args.quick else 30
    if args.warmup is None:
        args.warmup = 2 if args.quick else 5
    if args.runs < 1:
        p.error("--runs must be >= 1")
    return args


def choose_models(args, out: Path) -> list[BenchModel]:
    given = args.model or list(DEFAULT_MODELS)
    models = [BenchModel(i, g) for i, g in enumerate(given)]
    for m in models:
        if "litert" in args.engines or args.native:
            m.make_twin(out / "twins")
            verify_twin(m)
    if args.quick and not args.model:
        # the smallest default model that every engine can run: an ONNX model whose TFLite twin
        # exported (and agrees with onnxruntime, if one does)
        exported = [m for m in models if m.twin is not None and not m.twin_error]
        usable = [m for m in exported if (m.twin_check or {}).get("agree")] or exported or models
        models = [min(usable, key=lambda m: m.path.stat().st_size)]
        log(f"--quick: {models[0].given}")
    return models


def verify_twin(m: BenchModel) -> None:
    """Native ai-edge-litert on the twin vs native onnxruntime on the ONNX model: same top-5?"""
    if m.twin is None or m.twin_error or m.file.error:
        return
    res = {}
    for engine, file in (("native-onnxruntime", m.file), ("native-litert", m.twin)):
        slot = NativeSlot(engine, m, file)
        slot.start(0)
        res[engine] = slot
    check = {"twin": str(m.twin_path)}
    if all(s.ok for s in res.values()):
        a, b = res["native-onnxruntime"].scores, res["native-litert"].scores
        agree, diff = top5_agree(a, b)
        check.update(onnxruntime_top5=m.top5(a), litert_top5=m.top5(b), agree=agree, max_abs_diff=diff)
    else:
        check["error"] = "; ".join(f"{e}: {s.record.get('error')}" for e, s in res.items() if not s.ok)
        check["agree"] = False
    m.twin_check = check
    log(f"{m.name}: TFLite twin vs onnxruntime (native): {'same top-5' if check.get('agree') else 'DIFFERENT: ' + json.dumps(check)}")


def run_bench(args) -> list[dict]:
    out = Path(args.out)
    if not out.is_absolute():
        out = Path.cwd() / out
    out.mkdir(parents=True, exist_ok=True)
    check_prerequisites(args.engines)
    models = choose_models(args, out)

    serve_dir = Path(tempfile.mkdtemp(prefix="qnnweb-bench-"))
    (serve_dir / "models").mkdir()
    (serve_dir / "inputs").mkdir()
    records: list[dict] = []
    meta = {"date": _dt.datetime.now().astimezone().isoformat(timespec="seconds"), "machine": machine(),
            "args": {k: v for k, v in vars(args).items()}, "models": []}
    server = thread = None
    t_start = time.monotonic()
    try:
        served = {}
        for m in models:
            for file in [m.file] + ([m.twin] if m.twin else []):
                if file.error or file.input_bytes is None:
                    continue
                name = f"m{m.index}_{file.path.stem}{file.path.suffix}"
                shutil.copy(file.path, serve_dir / "models" / name)
                (serve_dir / "inputs" / f"{name}.bin").write_bytes(file.input_bytes)
                served[id(file)] = {"model": f"/models/{name}", "input": f"/samples/{name}.bin"}
        server, thread, base = start_server(serve_dir)
        log(f"server {base}")
        from playwright.sync_api import sync_playwright

        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS, headless=True)
            meta["browser"] = f"Chromium {browser.version} (headless)"
            try:
                for m in models:
                    records += bench_model(m, args, browser, base, served)
            finally:
                browser.close()
    finally:
        if server is not None:
            server.should_exit = True
            thread.join(timeout=10)
        shutil.rmtree(serve_dir, ignore_errors=True)
    meta["seconds"] = round(time.monotonic() - t_start, 1)
    meta["versions"] = {
        "qnnweb": qnnweb.__version__,
        "pyodide": (REPO / ".cache" / "pyodide" / ".version").read_text().strip()
        if (REPO / ".cache" / "pyodide" / ".version").is_file() else None,
        **{p: npm_version(p) for p in NPM_PACKAGES},
        "onnxruntime (native)": pip_version("onnxruntime"),
        "ai-edge-litert (native)": pip_version("ai-edge-litert"),
        "playwright": pip_version("playwright"),
    }
    ua = next((r.get("user_agent") for r in records if r.get("user_agent")), None)
    meta["user_agent"] = ua
    for m in models:
        meta["models"].append({
            "model": m.given, "sha256": m.file.sha256, "input": m.file.input_how, "labels": bool(m.labels),
            "twin": str(m.twin_path) if m.twin_path else None, "twin_error": m.twin_error,
            "twin_check": m.twin_check,
        })
    write_outputs(out, records, meta, models)
    return records


def bench_model(m: BenchModel, args, browser, base: str, served: dict) -> list[dict]:
    """Every engine on one model: TTFI per slot, then interleaved rounds."""
    slots = []
    records = []
    plan = []
    for engine in args.engines:
        if engine in QNNWEB_ENGINES:
            for v in args.variants:
                for t in args.threads:
                    plan.append((engine, v, t))
        else:
            for t in args.threads:
                plan.append((engine, None, t))
    if args.native:
        plan += [("native-onnxruntime", None, 1), ("native-litert", None, 1)]
    for index, (engine, variant, threads) in enumerate(plan):
        rec = {"engine": engine, "variant": variant, "model": m.given, "threads": threads, "_plan": index}
        file, why = m.file_for(engine)
        if file is not None and file.error:
            why = f"qnnweb cannot describe {file.path.name} (needed to build its input): {file.error}"
            file = None
        if file is None:
            rec["error"] = why
            records.append(rec)
            log(f"{m.name} {engine}: {why}")
            continue
        rec["model_file"] = str(file.path) if file is not m.file else m.given
        if engine.startswith("native-"):
            slot = NativeSlot(engine, m, file)
            log(f"{m.name} {engine}: load")
            slot.start(args.warmup)
        else:
            slot = BrowserSlot(engine, m, file, variant, threads, base, served[id(file)])
            log(f"{m.name} {engine}{'/' + variant if variant else ''} threads={threads}: cold + warm load")
            slot.start(browser, args.warmup)
            if not slot.ok and "crashed" in slot.record.get("error", ""):
                # Chromium's renderer died now and then on this shared machine (a Pyodide page, once
                # in four quick benches, 2026-12-01): one new try in a new context, and the record says so
                first_error = slot.record["error"]
                log(f"  {first_error}: once more in a new context")
                slot.close()
                slot = BrowserSlot(engine, m, file, variant, threads, base, served[id(file)])
                slot.start(browser, args.warmup)
                slot.record["retried_after"] = first_error
        slot.record = {**rec, **slot.record}
        if not slot.ok:
            log(f"  error: {slot.record.get('error')}")
            slot.close()
            records.append(slot.record)
            continue
        log(f"  ttfi cold {slot.record['ttfi_ms']:.0f} ms, warm {slot.record['ttfi_warm_ms']:.0f} ms")
        slots.append(slot)

    # interleaved rounds: A, B, C, A, B, C ...
    log(f"{m.name}: {args.runs} rounds over {len(slots)} engines")
    for r in range(args.runs):
        for slot in slots:
            try:
                ms, kernel = slot.run(1)
            except Exception as exc:
                slot.record.setdefault("round_errors", []).append(f"round {r}: {type(exc).__name__}: {exc}"[:300])
                ms, kernel = [float("nan")], [None]
            slot.ms += ms
            slot.kernel_ms += kernel

    # reference, per thread count: qnnweb (Pyodide; qnnweb.js when the run has no Pyodide engine)
    # relaxed on as many threads, else the fastest such variant on as many (so "ratio" compares
    # engines at equal thread counts)
    def reference(threads):
        qn = []
        for engine in ("qnnweb", "qnnweb-js"):
            qn = qn or [s for s in slots if s.engine == engine and s.threads == threads]
        ref = next((s for s in qn if s.variant == "relaxed"), None)
        if ref is None and qn:
            ref = min(qn, key=lambda s: median([x for x in s.ms if not math.isnan(x)]))
        return ref

    references = {t: reference(t) for t in {s.threads for s in slots}}
    for slot in slots:
        ms = [x for x in slot.ms if not math.isnan(x)]
        rec = slot.record
        rec.update(runs=len(ms), median_ms=median(ms), min_ms=min(ms) if ms else None, p90_ms=percentile(ms, 90),
                   top5=m.top5(slot.scores), top5_labels=[m.label(i) for i, _ in m.top5(slot.scores)])
        if slot.engine in QNNWEB_ENGINES:
            k = [x for x in slot.kernel_ms if x is not None]
            rec["kernel_median_ms"] = median(k)
            rec["kernel_min_ms"] = min(k) if k else None
            rec["overhead_median_ms"] = median([a - b for a, b in zip(slot.ms, slot.kernel_ms)
                                                if b is not None and not math.isnan(a)])
        ref = references.get(slot.threads) or references.get(1)
        if ref is not None:
            ratios = [a / b for a, b in zip(slot.ms, ref.ms) if not math.isnan(a) and not math.isnan(b) and b > 0]
            rec["ratio_to_qnnweb_median"] = median(ratios)
            rec["ratio_reference"] = f"{ref.engine}/{ref.variant}/{ref.threads}t"
            rec["ratios_per_round"] = [round(x, 4) for x in ratios]
            agree, diff = top5_agree(slot.scores, ref.scores)
            rec["top5_agrees_with_qnnweb"] = agree
            rec["max_abs_diff_vs_qnnweb"] = diff
        rec["user_agent"] = getattr(slot, "user_agent", None)
        rec["samples_ms"] = [round(x, 3) for x in slot.ms]
        if slot.engine == "qnnweb":
            rec["samples_kernel_ms"] = [round(x, 3) if x is not None else None for x in slot.kernel_ms]
            try:  # after the timed rounds, so profiling never disturbs them
                rec["profile"] = slot.profile()
            except Exception as exc:
                rec["profile_error"] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"[:300]
        if slot.engine in ("litert", "native-litert") and m.twin_check is not None and m.format == "onnx":
            rec["twin_check"] = m.twin_check
        slot.close()
        records.append(rec)
        log(f"  {slot.engine}{'/' + slot.variant if slot.variant else ''}: median {rec['median_ms']:.2f} ms"
            + (f", ratio {rec['ratio_to_qnnweb_median']:.2f}" if rec.get("ratio_to_qnnweb_median") else "")
            + f", top-1 {rec['top5_labels'][0]}")
    records.sort(key=lambda r: r.pop("_plan"))  # the plan's order
    return records


# ---------------------------------------------------------------------------------------- output

def fmt(x, digits=1):
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "–"
    return f"{x:.{digits}f}"


def write_outputs(out: Path, records: list[dict], meta: dict, models: list[BenchModel]) -> None:
    (out / "bench.json").write_text(json.dumps(records, indent=1) + "\n")
    (out / "bench_meta.json").write_text(json.dumps(meta, indent=1, default=str) + "\n")
    (out / "bench.md").write_text(markdown(records, meta, models))
    try:
        chart(out / "bench.png", records, models)
    except Exception as exc:
        log(f"bench.png not written: {type(exc).__name__}: {exc}")
    log(f"wrote {out / 'bench.json'}, {out / 'bench.md'}, {out / 'bench.png'}")


def profile_table(recs) -> list[str]:
    """qnnweb's time per op family (Model.profile_by_family: each op timed alone, median of 5), one
    column pair per variant and thread count, so the next bottleneck shows in every run."""
    if not recs:
        return []
    families = list(recs[0]["profile"])
    head = " | ".join(f"{r.get('variant')} {r['threads']}t ms | GMAC/s" for r in recs)
    lines = ["qnnweb per op family (each op run alone, median of 5; GMAC/s for convolutions):", "",
             f"| op family | ops | {head} |", "| --- | ---: |" + " ---: | ---: |" * len(recs)]
    for fam in families:
        cells = []
        for r in recs:
            p = r["profile"].get(fam) or {}
            cells += [fmt(p.get("ms"), 2), fmt(p.get("gmac_per_s"), 1) if p.get("gmac_per_s") else "–"]
        lines.append(f"| {fam} | {recs[0]['profile'][fam]['ops']} | " + " | ".join(cells) + " |")
    totals = [fmt(sum(p["ms"] for p in r["profile"].values()), 2) for r in recs]
    lines.append("| total | | " + " | ".join(f"{t} | " for t in totals) + "|")
    lines.append("")
    return lines


def markdown(records, meta, models) -> str:
    v = meta["versions"]
    mach = meta["machine"]
    lines = [
        f"Benchmark of {meta['date']} (`tools/bench.py`, {meta['args']['runs']} interleaved rounds after "
        f"{meta['args']['warmup']} warm-up runs per engine).",
        "",
        f"- Machine: {mach['cpu']}, {mach['cores']} cores; {mach['os']}"
        + (" (AVX-VNNI)" if mach.get("avx_vnni") else "") + (" (AVX512-VNNI)" if mach.get("avx512_vnni") else ""),
        f"- Browser: {meta.get('browser')}",
        f"- Versions: qnnweb {v['qnnweb']} in Pyodide {v['pyodide']}; @litertjs/core {v['@litertjs/core']}; "
        f"onnxruntime-web {v['onnxruntime-web']}; native onnxruntime {v['onnxruntime (native)']}, "
        f"ai-edge-litert {v['ai-edge-litert (native)']}; Playwright {v['playwright']}",
        "",
        "Times in ms. TTFI: navigation to the first result, cold (new browser context, empty HTTP cache) and warm "
        "(reload); *first visit MB*: what the cold visit downloaded before its first result (transfer sizes). "
        "Both qnnweb engines load the server's compiled model (`.qnn`): *qnnweb (Pyodide)* in Python (Pyodide "
        "with its bytecode stdlib, the wheels, `qnnweb.load_async`), *qnnweb.js* in the JavaScript runtime, no "
        "Python. Latency: one inference as JavaScript sees it (qnnweb (Pyodide): the Python `model.run` call "
        "through Pyodide), median / min / p90; *kernels*: qnnweb's time inside `qnn_run` alone. Ratio: the median over "
        "rounds of (engine time / qnnweb time in the same round), reference qnnweb `relaxed` on as many threads "
        "(qnnweb.js's when the run has no Pyodide engine); below 1 is faster than qnnweb.",
        "",
    ]
    for m in models:
        recs = [r for r in records if r["model"] == m.given]
        lines.append(f"### {m.given}")
        lines.append("")
        if m.twin_error and m.format == "onnx":
            lines.append(f"TFLite twin: {m.twin_error}")
            lines.append("")
        elif m.twin_check:
            tc = m.twin_check
            lines.append(f"TFLite twin for LiteRT.js: `{Path(tc['twin']).name}`; native ai-edge-litert vs native "
                         f"onnxruntime on {PHOTO.name}: " + ("same top-5" if tc.get("agree") else
                                                             "**different** (" + (tc.get("error") or
                                                             f"onnxruntime {tc.get('onnxruntime_top5')}, "
                                                             f"ai-edge-litert {tc.get('litert_top5')}") + ")"))
            lines.append("")
        lines.append("| engine | variant / wasm | threads | TTFI cold | TTFI warm | first visit MB | median | min | p90 "
                     "| kernels | ratio | top-1 | top-5 = qnnweb |")
        lines.append("| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- |")
        for r in recs:
            label = ENGINE_LABELS.get(r["engine"], r["engine"])
            if "error" in r:
                lines.append(f"| {label} | {r.get('variant') or ''} | {r['threads']} | "
                             f"error: {r['error'][:200].replace('|', '/')} ||||||||||")
                continue
            if r["engine"] in QNNWEB_ENGINES:
                k = r.get("kernels") or {}
                what = f"{r.get('variant')} ({k.get('gemm', '?')})"
            elif r.get("wasm"):
                what = ", ".join(Path(w).name for w in r["wasm"])
            else:
                what = "native"
            top1 = r["top5"][0]
            lines.append(
                f"| {label} | {what} | {r['threads']} | {fmt(r.get('ttfi_ms'), 0)} | {fmt(r.get('ttfi_warm_ms'), 0)} | "
                f"{fmt(r['first_visit_bytes'] / 1e6 if r.get('first_visit_bytes') else None, 2)} | "
                f"{fmt(r['median_ms'], 2)} | {fmt(r['min_ms'], 2)} | {fmt(r['p90_ms'], 2)} | "
                f"{fmt(r.get('kernel_median_ms'), 2)} | {fmt(r.get('ratio_to_qnnweb_median'), 2)} | "
                f"{m.label(top1[0])} ({top1[1]:.3f}) | {'yes' if r.get('top5_agrees_with_qnnweb') else 'NO'} |")
        lines.append("")
        lines += profile_table([r for r in recs if r.get("profile")])
    lines.append(f"Reproduce: `./build.sh bench {' '.join(_cli(meta['args']))}`")
    lines.append("")
    return "\n".join(lines)


def _cli(a) -> list[str]:
    parts = []
    for m in a.get("model") or []:
        parts += ["--model", m]
    if a.get("quick"):
        parts.append("--quick")
    parts += ["--runs", str(a["runs"]), "--warmup", str(a["warmup"])]
    if a.get("native"):
        parts.append("--native")
    return parts


def chart(path: Path, records, models) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(models), 1, figsize=(9, 1.2 + 0.45 * max(
        len([r for r in records if r["model"] == m.given and "error" not in r]) for m in models) * len(models) + 0.6),
        squeeze=False)
    colors = {"qnnweb": "#2b6cb0", "qnnweb-js": "#553c9a", "litert": "#dd6b20", "ort": "#38a169", "native-onnxruntime": "#718096",
              "native-litert": "#a0aec0"}
    for ax, m in zip(axes[:, 0], models):
        recs = [r for r in records if r["model"] == m.given and "error" not in r]
        names = [ENGINE_LABELS.get(r["engine"], r["engine"]) + (f" {r['variant']}" if r["engine"] in QNNWEB_ENGINES else "")
                 + (f" ({r['threads']}t)" if r["threads"] != 1 else "") for r in recs]
        med = [r["median_ms"] for r in recs]
        lo = [r["median_ms"] - r["min_ms"] for r in recs]
        hi = [r["p90_ms"] - r["median_ms"] for r in recs]
        y = list(range(len(recs)))[::-1]
        ax.barh(y, med, xerr=[lo, hi], color=[colors.get(r["engine"], "#999") for r in recs], capsize=3)
        for yi, r in zip(y, recs):
            if r.get("kernel_median_ms"):
                ax.plot([r["kernel_median_ms"]], [yi], "k|", markersize=14)
            ax.text(r["p90_ms"], yi, f"  {r['median_ms']:.1f}", va="center", fontsize=8)
        if med and max(r["p90_ms"] for r in recs) / max(min(med), 1e-3) > 20:
            ax.set_xscale("log")
        ax.set_yticks(y)
        ax.set_yticklabels(names, fontsize=8)
        ax.set_title(f"{m.name}: latency (median; bars min..p90; | = qnnweb kernels only)", fontsize=9)
        ax.set_xlabel("ms (lower is better)" + (", log scale" if ax.get_xscale() == "log" else ""), fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main(argv=None) -> int:
    args = parse_args(argv)
    try:
        records = run_bench(args)
    except BenchError as exc:
        print(f"bench: {exc}", file=sys.stderr)
        return 2
    errors = [r for r in records if "error" in r]
    for r in errors:
        log(f"not run: {r['engine']} {r.get('variant') or ''} {r['model']}: {r['error']}")
    print(Path(args.out) / "bench.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
