"""``python -m qnnweb_server --host 127.0.0.1 --port 8000 --data-dir ./data``"""

from __future__ import annotations

import argparse
import copy
import os
import sys
import threading
from pathlib import Path

import uvicorn

from qnnweb_server.core import compiled
from qnnweb_server.core.config import Settings


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
    p.add_argument("--upload-token", metavar="TOKEN",
                   help="the bearer token of PUT/DELETE /api/models/...; default $QNNWEB_UPLOAD_TOKEN (preferred: "
                        "a command line is visible to other users) or none: uploads disabled")
    p.add_argument("--max-upload-mb", type=float, help="largest upload accepted; default $QNNWEB_MAX_UPLOAD_MB or 64")
    p.add_argument("--workers", type=int, default=1,
                   help="server processes (each serves every route; they share the data folder)")
    p.add_argument("--root-path", default="", help="the path prefix a reverse proxy serves this server under")
    p.add_argument("--access-log", choices=["text", "json", "off"],
                   help="one line per request: uvicorn's text (default), a JSON object, or none")
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
        upload_token=args.upload_token,
        max_upload_mb=args.max_upload_mb,
        access_log=args.access_log,
    )
    for name in ("models_dir", "wheels_dir", "samples_dir", "pyodide_dir", "web_dir"):
        folder = getattr(settings, name)
        if not folder.is_dir():
            print(f"warning: {name.replace('_', ' ')} {folder} does not exist", file=sys.stderr)
    host = f"[{args.host}]" if ":" in args.host else args.host
    print(f"qnnweb demo: http://{host}:{args.port}{args.root_path}/   "
          f"(API docs: http://{host}:{args.port}{args.root_path}/docs)", flush=True)
    if not args.no_precompile:
        # in the background: the server answers at once, and a visitor rarely waits for a compilation
        threading.Thread(target=compiled.precompile_all, args=(settings,), name="precompile", daemon=True).start()
    # every process (one, or --workers of them) builds its app from these settings, passed as QNNWEB_*
    os.environ.update(settings.to_env())
    uvicorn.run("qnnweb_server.main:create_app", factory=True, host=args.host, port=args.port,
                workers=args.workers, root_path=args.root_path, log_level=args.log_level,
                access_log=settings.access_log == "text", log_config=_log_config())


def _log_config() -> dict:
    """uvicorn's logging, with the server's own loggers (changes, access, errors) printed as well."""
    config = copy.deepcopy(uvicorn.config.LOGGING_CONFIG)
    config["formatters"]["message"] = {"format": "%(message)s"}
    config["handlers"]["message"] = {"class": "logging.StreamHandler", "formatter": "message",
                                     "stream": "ext://sys.stdout"}
    config["loggers"]["qnnweb_server"] = {"handlers": ["default"], "level": "INFO", "propagate": False}
    config["loggers"]["qnnweb_server.access"] = {"handlers": ["message"], "level": "INFO", "propagate": False}
    return config


if __name__ == "__main__":
    main()
