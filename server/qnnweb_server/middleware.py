"""Pure ASGI middleware (no body buffering): the cross-origin isolation headers on every response,
and the HTTP details routing leaves out (HEAD on GET routes, unknown Range units, trailing slashes)."""

from __future__ import annotations

import json
import logging
import time
from urllib.parse import quote

from starlette.routing import Match, Router
from starlette.types import ASGIApp, Message, Receive, Scope, Send

ISOLATION_HEADERS = {
    "Cross-Origin-Opener-Policy": "same-origin",
    "Cross-Origin-Embedder-Policy": "require-corp",
    "Cross-Origin-Resource-Policy": "same-origin",
}
_ISOLATION_LOWER = {k.lower() for k in ISOLATION_HEADERS}


class IsolationHeadersMiddleware:
    """Adds ``ISOLATION_HEADERS`` to every HTTP response; under ``shared_prefixes`` (what other origins
    may load, when the server is started with ``--cors-origin``) with CORP ``cross-origin``."""

    def __init__(self, app: ASGIApp, shared_prefixes: tuple[str, ...] = ()) -> None:
        self.app = app
        self.shared_prefixes = shared_prefixes
        self._local = _raw_headers(ISOLATION_HEADERS)
        self._shared = _raw_headers(dict(ISOLATION_HEADERS, **{"Cross-Origin-Resource-Policy": "cross-origin"}))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        shared = self.shared_prefixes and scope["path"].startswith(self.shared_prefixes)
        isolation = self._shared if shared else self._local

        async def send_with_headers(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = [(k, v) for k, v in message.get("headers", []) if k.decode("latin-1").lower()
                           not in _ISOLATION_LOWER]
                message["headers"] = headers + isolation
            await send(message)

        await self.app(scope, receive, send_with_headers)


def _raw_headers(headers: dict[str, str]) -> list[tuple[bytes, bytes]]:
    return [(k.lower().encode("latin-1"), v.encode("latin-1")) for k, v in headers.items()]


class PathScopedMiddleware:
    """Runs ``middleware`` (an ASGI app wrapping ``app``) for paths under ``prefixes``, ``app`` alone
    for the others: CORS for the API and the model files only."""

    def __init__(self, app: ASGIApp, middleware: type, prefixes: tuple[str, ...], **options: object) -> None:
        self.app = app
        self.scoped = middleware(app, **options)
        self.prefixes = prefixes

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        inside = scope["type"] == "http" and scope["path"].startswith(self.prefixes)
        await (self.scoped if inside else self.app)(scope, receive, send)


class HttpDetailsMiddleware:
    """- HEAD on a route that only declares GET runs the GET and sends its headers alone (RFC 9110
      9.3.2), instead of 405.
    - A Range header in a unit other than bytes is ignored (RFC 9110 14.2), not a 400.
    - ``/path/`` of a route ``/path`` redirects to it with a Location that is only a path: Starlette's
      own slash redirect builds an absolute URL from the Host header, whatever a client sent."""

    def __init__(self, app: ASGIApp, router: Router) -> None:
        self.app = app
        self.router = router

    def _matches(self, scope: Scope) -> bool:
        return any(route.matches(scope)[0] == Match.FULL for route in self.router.routes)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = scope["headers"]
        if any(k == b"range" and v.split(b"=", 1)[0].strip().lower() != b"bytes" for k, v in headers):
            scope = dict(scope, headers=[(k, v) for k, v in headers if k != b"range"])
        path = scope["path"]
        slashed = path != "/" and path.endswith("/")
        # routing is matched here only for the requests these rules can concern (a second match)
        if (slashed or scope["method"] == "HEAD") and not self._matches(scope):
            if slashed and self._matches(dict(scope, path=path.rstrip("/") or "/")):
                await self._redirect(scope, send, path.rstrip("/"))
                return
            if scope["method"] == "HEAD" and self._matches(dict(scope, method="GET")):
                await self.app(dict(scope, method="GET"), receive, _headers_only(send))
                return
        await self.app(scope, receive, send)

    @staticmethod
    async def _redirect(scope: Scope, send: Send, path: str) -> None:
        query = scope.get("query_string", b"")
        root = scope.get("root_path", "")
        # uvicorn puts the root path in front of `path` (the ASGI spec's reading since 2023); a server
        # that does not, or Starlette's TestClient, leaves it out
        public = path if root and (path == root or path.startswith(root + "/")) else root + path
        location = quote(public, safe="/%:@!$&'()*+,;=") + (
            "?" + query.decode("latin-1") if query else "")
        await send({"type": "http.response.start", "status": 308,
                    "headers": [(b"location", location.encode("latin-1")), (b"content-length", b"0")]})
        await send({"type": "http.response.body", "body": b"", "more_body": False})


def _headers_only(send: Send) -> Send:
    async def send_headers_only(message: Message) -> None:
        if message["type"] == "http.response.body":
            if message.get("more_body", False):
                return
            message = {"type": "http.response.body", "body": b"", "more_body": False}
        await send(message)

    return send_headers_only


access_log = logging.getLogger("qnnweb_server.access")


class AccessLogMiddleware:
    """One JSON object per request on the ``qnnweb_server.access`` logger (``--access-log json``):
    time, client, method, path, query, status, bytes sent, duration in ms, user agent."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        start, status, sent = time.perf_counter(), 0, 0

        async def counting_send(message: Message) -> None:
            nonlocal status, sent
            if message["type"] == "http.response.start":
                status = message["status"]
            elif message["type"] == "http.response.body":
                sent += len(message.get("body", b""))
            await send(message)

        try:
            await self.app(scope, receive, counting_send)
        finally:
            headers = dict(scope.get("headers", []))
            client = scope.get("client")
            access_log.info("%s", json.dumps({
                "time": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
                "client": client[0] if client else None,
                "method": scope["method"],
                "path": scope.get("root_path", "") + scope["path"],
                "query": scope.get("query_string", b"").decode("latin-1") or None,
                "status": status or 500,  # no response started: the connection broke or the app failed
                "bytes": sent,
                "ms": round((time.perf_counter() - start) * 1000, 2),
                "user_agent": headers.get(b"user-agent", b"").decode("latin-1") or None,
            }))
