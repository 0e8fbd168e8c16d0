"""One engine in headless Chromium: its bench page (web/bench/) in a fresh browser context, cold and
warm load, then single inferences on demand."""

from __future__ import annotations

import base64
import json
import urllib.parse
import urllib.request

from .common import LOAD_TIMEOUT_MS, QNNWEB_ENGINES
from .models import BenchModel, ModelFileInfo


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
            ttfi_stages_cold_ms=cold.get("stages"), ttfi_stages_warm_ms=warm.get("stages"),
            first_run_ms=cold.get("first_run_ms"),
            wasm=warm.get("wasm"), info=info, versions=warm.get("versions"),
            deterministic=cold_out == raw, first_visit_bytes=cold.get("first_visit_bytes"),
        )
        if self.engine == "qnnweb":
            # Pyodide started with the wheels installed (restored from the server's snapshot, if used)
            self.record["pyodide_ready_ms"] = (cold.get("stages") or {}).get("runtime_loaded")
            self.record["pyodide_snapshot"] = cold.get("pyodideSnapshot")
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
