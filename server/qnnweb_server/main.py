"""The FastAPI app: ``create_app(settings)``.

Every response, static files, 404s and errors included, carries the cross-origin isolation
headers (COOP/COEP, plus CORP) so the page can later use SharedArrayBuffer and wasm threads.
"""

from __future__ import annotations

import logging
import mimetypes
from pathlib import Path, PurePosixPath

from fastapi import FastAPI, HTTPException, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse
from fastapi.staticfiles import StaticFiles
from starlette.responses import Response
from starlette.types import Scope

from qnnweb_server.api.main import api_router, files_router
from qnnweb_server.core import store
from qnnweb_server.core.config import Settings, get_settings
from qnnweb_server.middleware import (
    ISOLATION_HEADERS,
    AccessLogMiddleware,
    HttpDetailsMiddleware,
    IsolationHeadersMiddleware,
    PathScopedMiddleware,
)

log = logging.getLogger("qnnweb_server")

# Whatever /etc/mime.types says: browsers need these for instantiateStreaming and ES modules.
for _type, _ext in [
    ("application/wasm", ".wasm"),
    ("text/javascript", ".mjs"),
    ("text/javascript", ".js"),
    ("text/css", ".css"),
    ("application/json", ".json"),
    ("application/json", ".map"),
    ("application/zip", ".whl"),
    ("application/zip", ".zip"),
    ("application/octet-stream", ".tflite"),
    ("application/octet-stream", ".onnx"),
    ("application/octet-stream", ".qnn"),
]:
    mimetypes.add_type(_type, _ext)


class StaticDir(StaticFiles):
    """StaticFiles whose folder may appear after start-up (a missing folder is a 404), and which never
    serves a dotfile or anything in a dot-folder (``.git``, editors' and tools' leftovers)."""

    def __init__(self, directory: Path) -> None:
        super().__init__(directory=directory, check_dir=False)

    async def check_config(self) -> None:
        if self.directory is None or not Path(self.directory).is_dir():
            raise HTTPException(status_code=404, detail="not built yet: run ./build.sh setup && ./build.sh build")
        await super().check_config()

    async def get_response(self, path: str, scope: Scope) -> Response:
        if any(part.startswith(".") for part in PurePosixPath(path).parts):
            raise HTTPException(status_code=404, detail="Not Found")
        return await super().get_response(path, scope)


def _add_offline_docs(app: FastAPI) -> None:
    """/docs and /redoc from JS/CSS that ship in the ``fastapi-offline`` wheel (FastAPI's
    "self-hosting JavaScript and CSS for docs" recipe): no CDN, and same-origin under COEP."""
    try:
        import fastapi_offline

        static = Path(fastapi_offline.__file__).parent / "static"
    except ImportError:
        static = None

    if static is not None and static.is_dir():
        app.mount("/static-docs", StaticFiles(directory=static), name="static-docs")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui_html() -> HTMLResponse:
        if static is None:
            return HTMLResponse(
                '<p>Swagger UI needs the <code>fastapi-offline</code> package. '
                'The schema is at <a href="/openapi.json">/openapi.json</a>.</p>'
            )
        return get_swagger_ui_html(
            openapi_url=app.openapi_url,
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=app.swagger_ui_oauth2_redirect_url,
            swagger_js_url="/static-docs/swagger-ui-bundle.js",
            swagger_css_url="/static-docs/swagger-ui.css",
            swagger_favicon_url="/static-docs/favicon.png",
        )

    @app.get(app.swagger_ui_oauth2_redirect_url, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc_html() -> HTMLResponse:
        if static is None:
            return RedirectResponse("/docs")
        return get_redoc_html(
            openapi_url=app.openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url="/static-docs/redoc.standalone.js",
            redoc_favicon_url="/static-docs/favicon.png",
            with_google_fonts=False,
        )


def create_app(settings: Settings | None = None) -> FastAPI:
    """The app, serving the folders of ``settings`` (default: ``get_settings()``, i.e. the
    QNNWEB_* environment variables)."""
    if settings is None:
        settings = get_settings()

    app = FastAPI(
        title="qnnweb",
        summary="int8 neural-network inference in the browser: models, wheels and the demo page",
        version="0.1.0",
        docs_url=None,
        redoc_url=None,
    )
    app.state.settings = settings
    stale = store.remove_stale_uploads(settings.models_dir)  # left by a server killed mid-upload
    if stale:
        log.info("removed %d unfinished upload(s): %s", len(stale), ", ".join(stale))
    app.dependency_overrides[get_settings] = lambda: settings
    app.router.redirect_slashes = False  # HttpDetailsMiddleware redirects, without trusting Host
    app.add_middleware(HttpDetailsMiddleware, router=app.router)
    shared = ("/api/", "/models/") if settings.cors_origins else ()
    if settings.cors_origins:  # other sites may load the hosted models (opt-in: --cors-origin)
        app.add_middleware(PathScopedMiddleware, middleware=CORSMiddleware, prefixes=shared,
                           allow_origins=list(settings.cors_origins), allow_methods=["GET", "HEAD"],
                           allow_headers=["If-None-Match", "Range"], expose_headers=["ETag", "Content-Length"],
                           max_age=600)
    app.add_middleware(IsolationHeadersMiddleware, shared_prefixes=shared)
    if settings.access_log == "json":
        app.add_middleware(AccessLogMiddleware)

    @app.exception_handler(Exception)
    async def internal_error(request: Request, exc: Exception) -> JSONResponse:
        # handled by ServerErrorMiddleware, outside user middleware: add the headers here. The details
        # go to the log only (an exception's text may name the server's files).
        log.exception("internal error on %s %s", request.method, request.url.path)
        return JSONResponse({"detail": "internal server error"}, status_code=500, headers=ISOLATION_HEADERS)

    app.include_router(api_router)
    app.include_router(files_router)
    _add_offline_docs(app)

    @app.api_route("/", methods=["GET", "HEAD"], include_in_schema=False)
    def index() -> FileResponse:
        page = settings.web_dir / "index.html"
        if not page.is_file():
            raise HTTPException(status_code=404, detail="the demo page is not built: run ./build.sh build")
        return FileResponse(page, media_type="text/html", headers={"Cache-Control": "no-cache"})

    @app.get("/favicon.ico", include_in_schema=False)
    def favicon() -> RedirectResponse:
        return RedirectResponse("/static/favicon.svg")

    app.mount("/static", StaticDir(settings.web_dir), name="static")
    app.mount("/pyodide", StaticDir(settings.pyodide_dir), name="pyodide")
    app.mount("/samples", StaticDir(settings.samples_dir), name="samples")
    # npm packages of the benchmark's other engines (LiteRT.js, onnxruntime-web): ./build.sh setup
    app.mount("/vendor", StaticDir(settings.vendor_dir), name="vendor")
    # the kernel modules web/qnnweb.js instantiates (ETag / Last-Modified, so revisits get 304s)
    app.mount("/kernels", StaticDir(settings.kernels_dir), name="kernels")
    return app
