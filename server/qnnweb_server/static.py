"""Static folders (the page, Pyodide, the kernels, samples, vendor engines): dotfiles hidden, a
``Cache-Control`` per folder, and pre-compressed siblings (``precompress.py``) sent by ``Accept-Encoding``."""

from __future__ import annotations

import json
import mimetypes
import os
from pathlib import Path, PurePosixPath
from urllib.parse import urlsplit, urlunsplit

from fastapi import HTTPException
from fastapi.staticfiles import StaticFiles
from starlette.datastructures import Headers
from starlette.responses import FileResponse, RedirectResponse, Response
from starlette.staticfiles import NotModifiedResponse
from starlette.types import Scope

ENCODINGS = {"br": ".br", "gzip": ".gz"}  # Content-Encoding -> a pre-compressed sibling's suffix, preferred first
REVALIDATE = "no-cache"  # stored, but revalidated on each use (ETag / Last-Modified: a 304 when unchanged)
IMMUTABLE = "public, max-age=31536000, immutable"  # for URLs that name one version


class StaticDir(StaticFiles):
    """StaticFiles whose folder may appear after start-up (a missing folder is a 404), which never
    serves a dotfile or anything in a dot-folder (``.git``, editors' and tools' leftovers), sends
    ``cache_control``, and sends ``x.br`` / ``x.gz`` for ``x`` (``Content-Encoding``, ``Vary:
    Accept-Encoding``) when the client accepts that encoding and the sibling is not older than ``x``.
    With ``html=True`` a folder's URL serves its ``index.html`` (``dir`` redirects to ``dir/``)."""

    def __init__(self, directory: Path, cache_control: str = REVALIDATE, html: bool = False) -> None:
        super().__init__(directory=directory, check_dir=False, html=html)
        self.cache_control = cache_control

    async def check_config(self) -> None:
        if self.directory is None or not Path(self.directory).is_dir():
            raise HTTPException(status_code=404, detail="not built yet: run ./build.sh setup && ./build.sh build")
        await super().check_config()

    async def get_response(self, path: str, scope: Scope) -> Response:
        if any(part.startswith(".") for part in PurePosixPath(path).parts):
            raise HTTPException(status_code=404, detail="Not Found")
        response = await super().get_response(path, scope)
        if isinstance(response, RedirectResponse):
            # html=True's "dir" -> "dir/" is an absolute URL built from the Host header, whatever a
            # client sent: keep only its path and query, like the server's other redirects
            location = urlsplit(response.headers["location"])
            response.headers["location"] = urlunsplit(("", "", location.path, location.query, ""))
        return response

    def file_response(self, full_path: os.PathLike | str, stat_result: os.stat_result, scope: Scope,
                      status_code: int = 200) -> Response:
        request_headers = Headers(scope=scope)
        cache_control = scope.get("qnnweb_cache_control", self.cache_control)
        headers = {"Cache-Control": cache_control, "Vary": "Accept-Encoding"}
        accepted = accepted_encodings(request_headers.get("accept-encoding", ""))
        response = None
        for encoding, suffix in ENCODINGS.items():
            sibling = Path(f"{full_path}{suffix}")
            if encoding in accepted and is_fresh(stat_result, sibling):
                media_type = mimetypes.guess_type(str(full_path))[0] or "application/octet-stream"
                response = FileResponse(sibling, status_code=status_code, media_type=media_type,
                                        headers=dict(headers, **{"Content-Encoding": encoding}),
                                        stat_result=sibling.stat())
                break
        if response is None:
            response = FileResponse(full_path, status_code=status_code, stat_result=stat_result, headers=headers)
        if self.is_not_modified(response.headers, request_headers):
            return NotModifiedResponse(response.headers)
        return response


def is_fresh(original: os.stat_result, sibling: Path) -> bool:
    """Whether ``sibling`` was made from the current version of its original (not older than it)."""
    try:
        st = sibling.stat()
    except OSError:
        return False
    return st.st_mtime_ns >= original.st_mtime_ns and st.st_size > 0


def accepted_encodings(accept_encoding: str) -> set[str]:
    """The content codings an ``Accept-Encoding`` header accepts (those with q > 0; ``*`` is not
    expanded: a client that wants brotli names it)."""
    accepted = set()
    for item in accept_encoding.lower().split(","):
        coding, _, params = item.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            name, _, value = param.strip().partition("=")
            if name == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        if coding and q > 0:
            accepted.add(coding.strip())
    return accepted


def package_version(package_dir: Path) -> str | None:
    """The version in an npm package folder's package.json, or None."""
    try:
        version = json.loads((package_dir / "package.json").read_text(encoding="utf-8"))["version"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
    return version if isinstance(version, str) and version.replace(".", "").replace("-", "").isalnum() else None


class VendorDir(StaticDir):
    """npm's ``node_modules`` folder: ``{package}@{version}/{file}`` (``@scope/name@1.2.3/...``) is that
    file of the installed package if its package.json says that version (else a 404), sent as
    immutable; ``{package}/{file}`` is the installed version's, revalidated."""

    async def get_response(self, path: str, scope: Scope) -> Response:
        parts = PurePosixPath(path).parts
        count = 2 if parts and parts[0].startswith("@") else 1  # a scoped package's name has two parts
        if len(parts) > count and "@" in parts[count - 1]:
            name, _, version = parts[count - 1].rpartition("@")
            package = PurePosixPath(*parts[:count - 1], name)
            if not name or version != package_version(Path(self.directory or ".", package)):
                raise HTTPException(status_code=404, detail="Not Found")
            scope = dict(scope, qnnweb_cache_control=IMMUTABLE)
            path = str(PurePosixPath(package, *parts[count:]))
        return await super().get_response(path, scope)
