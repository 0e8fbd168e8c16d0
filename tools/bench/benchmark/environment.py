"""The run's surroundings: the qnnweb server that serves every engine, what must be installed first,
versions and the machine."""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import socket
import threading
import time
from pathlib import Path

from .common import CHROMIUM, NPM_DIR, PHOTO, REPO, BenchError


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
