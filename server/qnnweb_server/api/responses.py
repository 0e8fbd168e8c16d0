"""File responses served from an already-open file (one version, whatever happens on disk meanwhile),
with ETag revalidation (304) and Starlette's own Range handling."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from fastapi import Request, Response
from fastapi.responses import FileResponse
from starlette.types import Receive, Scope, Send

from qnnweb_server.core.versions import FileVersion


class OpenFileResponse(FileResponse):
    """``FileResponse`` over a ``FileVersion``: its size and Last-Modified from the version's fstat,
    its bytes from the same descriptor (never reopened by path), closed when the response ends."""

    def __init__(self, version: FileVersion, headers: dict[str, str], media_type: str) -> None:
        super().__init__(version.path, headers=headers, media_type=media_type, stat_result=version.stat)
        self.version = version

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        # no "pathsend" (the server would open the path again)
        extensions = {k: v for k, v in scope.get("extensions", {}).items() if k != "http.response.pathsend"}
        try:
            await super().__call__(dict(scope, extensions=extensions), receive, send)
        finally:
            self.version.close()

    @asynccontextmanager
    async def _open_file(self) -> AsyncIterator[anyio.AsyncFile[bytes]]:
        self.version.file.seek(0)
        yield anyio.wrap_file(self.version.file)


def etag_matches(if_none_match: str, etag: str) -> bool:
    """Weak comparison (RFC 9110 13.1.2): W/"x" matches "x"; ``*`` matches anything."""
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*":
            return True
        if candidate.removeprefix("W/") == etag:
            return True
    return False


def not_modified(request: Request, headers: dict[str, str]) -> Response | None:
    """A 304 when the request's If-None-Match matches ``headers["ETag"]``, else None."""
    inm = request.headers.get("if-none-match")
    if inm is not None and etag_matches(inm, headers["ETag"]):
        return Response(status_code=304, headers=headers)
    return None


def serve_version(request: Request, version: FileVersion, media_type: str, cache_control: str,
                  etag: str | None = None) -> Response:
    """The version's bytes with ``etag`` (default: its sha256) as the strong ETag, or a 304; the
    version is closed once the response is sent."""
    try:
        headers = {"ETag": f'"{etag or version.sha256}"', "Cache-Control": cache_control}
        cached = not_modified(request, headers)
    except BaseException:
        version.close()
        raise
    if cached is not None:
        version.close()
        return cached
    return OpenFileResponse(version, headers, media_type)
