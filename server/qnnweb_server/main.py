"""The FastAPI app: ``create_app(settings)``.

Every response, static files, 404s and errors included, carries the cross-origin isolation
headers (COOP/COEP, plus CORP) so the page can later use SharedArrayBuffer and wasm threads.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import mimetypes
from pathlib import Path

from fastapi import FastAPI, HTTPException, Request
from fastapi.middleware.cors import CORSMiddleware
from fastapi.middleware.gzip import GZipMiddleware
from fastapi.openapi.docs import (
    get_redoc_html,
    get_swagger_ui_html,
    get_swagger_ui_oauth2_redirect_html,
)
from fastapi.responses import FileResponse, HTMLResponse, JSONResponse, RedirectResponse, Response
from fastapi.staticfiles import StaticFiles
from starlette.exceptions import HTTPException as StarletteHTTPException

from qnnweb_server.api.main import api_router, files_router
from qnnweb_server.api.responses import not_modified
from qnnweb_server.core import store
from qnnweb_server.core.config import Settings, get_settings
from qnnweb_server.middleware import (
    ISOLATION_HEADERS,
    AccessLogMiddleware,
    HttpDetailsMiddleware,
    IsolationHeadersMiddleware,
    PathScopedMiddleware,
)
from qnnweb_server.not_found import not_found_handler
from qnnweb_server.static import IMMUTABLE, REVALIDATE, StaticDir, VendorDir, package_version

log = logging.getLogger("qnnweb_server")
COMPRESSED_PREFIXES = ("/api/", "/static/", "/kernels/", "/openapi.json", "/docs", "/redoc")

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


# Redoc's sidebar footer shows Redocly's logo from this CDN URL, and no Redoc option turns the footer
# off. Redoc drops the <img> when it fails to load (as it does offline); an empty data: URL fails
# without a request, so the footer keeps its "API docs by Redocly" link, without the logo.
REDOC_CDN_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"


@functools.cache
def _redoc_without_cdn(script: Path) -> tuple[bytes, str]:
    """``redoc.standalone.js`` with its one CDN URL (the logo) made ``data:,``, and its ETag."""
    body = script.read_bytes().replace(REDOC_CDN_LOGO, b"data:,")
    return body, f'"{hashlib.sha256(body).hexdigest()}"'


def _add_offline_docs(app: FastAPI) -> None:
    """/docs and /redoc from JS/CSS that ship in the ``fastapi-offline`` wheel (FastAPI's
    "self-hosting JavaScript and CSS for docs" recipe): no CDN, and same-origin under COEP."""
    try:
        import fastapi_offline

        static = Path(fastapi_offline.__file__).parent / "static"
    except ImportError:
        static = None

    if static is not None and static.is_dir():
        # before the mount, which serves the other files (HEAD too, or the mount would answer it)
        @app.api_route("/static-docs/redoc.standalone.js", methods=["GET", "HEAD"], include_in_schema=False)
        def redoc_js(request: Request) -> Response:
            body, etag = _redoc_without_cdn(static / "redoc.standalone.js")
            headers = {"ETag": etag, "Cache-Control": REVALIDATE}
            return not_modified(request, headers) or Response(body, media_type="text/javascript", headers=headers)

        app.mount("/static-docs", StaticFiles(directory=static), name="static-docs")

    @app.get("/docs", include_in_schema=False)
    async def swagger_ui_html(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        if static is None:
            return HTMLResponse(
                '<p>Swagger UI needs the <code>fastapi-offline</code> package. '
                f'The schema is at <a href="{root}/openapi.json">/openapi.json</a>.</p>'
            )
        return get_swagger_ui_html(
            openapi_url=root + app.openapi_url,
            title=f"{app.title} - Swagger UI",
            oauth2_redirect_url=root + app.swagger_ui_oauth2_redirect_url,
            swagger_js_url=f"{root}/static-docs/swagger-ui-bundle.js",
            swagger_css_url=f"{root}/static-docs/swagger-ui.css",
            swagger_favicon_url=f"{root}/static-docs/favicon.png",
        )

    @app.get(app.swagger_ui_oauth2_redirect_url, include_in_schema=False)
    async def swagger_ui_redirect() -> HTMLResponse:
        return get_swagger_ui_oauth2_redirect_html()

    @app.get("/redoc", include_in_schema=False)
    async def redoc_html(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        if static is None:
            return RedirectResponse(f"{root}/docs")
        return get_redoc_html(
            openapi_url=root + app.openapi_url,
            title=f"{app.title} - ReDoc",
            redoc_js_url=f"{root}/static-docs/redoc.standalone.js",
            redoc_favicon_url=f"{root}/static-docs/favicon.png",
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
    # compressed on the fly: the API's JSON, the page's scripts, the kernels (a file with a pre-compressed
    # sibling, e.g. Pyodide's, is sent as that instead; models and wheels are not worth it)
    app.add_middleware(PathScopedMiddleware, middleware=GZipMiddleware, prefixes=COMPRESSED_PREFIXES,
                       minimum_size=1024, compresslevel=6)
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

    app.add_exception_handler(StarletteHTTPException, not_found_handler)  # a browser's 404 is a page
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
    def favicon(request: Request) -> RedirectResponse:
        return RedirectResponse(request.scope.get("root_path", "") + "/static/favicon.svg")

    @app.api_route("/static/", methods=["GET", "HEAD"], include_in_schema=False)
    def static_index(request: Request) -> RedirectResponse:
        # web/index.html is the page at /: its relative URLs (static/app.js, api/models) only work there
        return RedirectResponse(request.scope.get("root_path", "") + "/")

    # html=True: a folder's URL is its index.html (/static/bench/, /static/examples/)
    app.mount("/static", StaticDir(settings.web_dir, html=True), name="static")
    # Pyodide under its version (what web/pyodide-start.js loads): those URLs never change their bytes
    version = package_version(settings.pyodide_dir)
    if version is not None:
        app.mount(f"/pyodide/{version}", StaticDir(settings.pyodide_dir, IMMUTABLE), name="pyodide-versioned")
    app.mount("/pyodide", StaticDir(settings.pyodide_dir), name="pyodide")
    app.mount("/samples", StaticDir(settings.samples_dir), name="samples")
    # npm packages of the benchmark's other engines (LiteRT.js, onnxruntime-web; ./build.sh setup), immutable
    # under /vendor/{package}@{version}/ (what web/bench loads)
    app.mount("/vendor", VendorDir(settings.vendor_dir), name="vendor")
    # the kernel modules web/qnnweb.js instantiates (revalidated: a rebuild keeps their names)
    app.mount("/kernels", StaticDir(settings.kernels_dir), name="kernels")
    return app
