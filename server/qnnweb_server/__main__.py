"""``python -m qnnweb_server --host 127.0.0.1 --port 8000 --data-dir ./data``"""

from __future__ import annotations

import argparse
import sys
import threading
from pathlib import Path

import uvicorn

from qnnweb_server.core import compiled
from qnnweb_server.core.config import Settings
from qnnweb_server.main import create_app


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(prog="python -m qnnweb_server", description=__doc__)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--data-dir", type=Path, help="default $QNNWEB_DATA_DIR or ./data")
    p.add_argument("--models-dir", type=Path, help="default $QNNWEB_MODELS_DIR or <data-dir>/models")
    p.add_argument("--wheels-dir", type=Path, help="default $QNNWEB_WHEELS_DIR or <data-dir>/wheels")
    p.add_argument("--samples-dir", type=Path, help="default $QNNWEB_SAMPLES_DIR or <data-dir>/samples")
    p.add_argument("--pyodide-dir", type=Path, help="default $QNNWEB_PYODIDE_DIR or ./.cache/pyodide")
    p.add_argument("--web-dir", type=Path, help="default $QNNWEB_WEB_DIR or the repo's web/")
    p.add_argument("--compiled-dir", type=Path, help="default $QNNWEB_COMPILED_DIR or ./.cache/compiled")
    p.add_argument("--no-precompile", action="store_true",
                   help="compile each model on its first /models/{name}.qnn request instead of at start-up")
    p.add_argument("--cors-origin", action="append", metavar="ORIGIN",
                   help="an origin (https://app.example) whose pages may fetch /api/* and /models/*; repeatable; "
                        "default $QNNWEB_CORS_ORIGINS (space-separated) or none")
    p.add_argument("--log-level", default="info")
    args = p.parse_args(argv)

    settings = Settings.from_env(
        data_dir=args.data_dir,
        models_dir=args.models_dir,
        wheels_dir=args.wheels_dir,
        samples_dir=args.samples_dir,
        pyodide_dir=args.pyodide_dir,
        web_dir=args.web_dir,
        compiled_dir=args.compiled_dir,
        cors_origins=tuple(args.cors_origin) if args.cors_origin else None,
    )
    for name in ("models_dir", "wheels_dir", "samples_dir", "pyodide_dir", "web_dir"):
        folder = getattr(settings, name)
        if not folder.is_dir():
            print(f"warning: {name.replace('_', ' ')} {folder} does not exist", file=sys.stderr)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"qnnweb demo: http://{host}:{args.port}/   (API docs: http://{host}:{args.port}/docs)", flush=True)
    if not args.no_precompile:
        # in the background: the server answers at once, and a visitor rarely waits for a compilation
        threading.Thread(target=compiled.precompile_all, args=(settings,), name="precompile", daemon=True).start()
    uvicorn.run(create_app(settings), host=args.host, port=args.port, log_level=args.log_level)


if __name__ == "__main__":
    main()
