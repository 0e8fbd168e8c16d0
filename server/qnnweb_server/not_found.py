"""A 404 for people: a browser that asks for a page it does not find gets a small HTML page (what was
not found, a link to the demo); API clients keep FastAPI's JSON ``{"detail": ...}`` (everything under
/api/, and any request whose Accept header does not prefer HTML)."""

from __future__ import annotations

from html import escape

from fastapi import Request
from fastapi.exception_handlers import http_exception_handler
from fastapi.responses import HTMLResponse, Response
from starlette.exceptions import HTTPException

PAGE = """<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Not found · qnnweb</title>
<style>:root {{ color-scheme: light dark; font-family: system-ui, sans-serif; }}
body {{ max-width: 40rem; margin: 3rem auto; padding: 0 1.5rem; }}</style></head>
<body>
<h1>Not found</h1>
<p>There is nothing at <code>{path}</code>{detail}.</p>
<p><a href="{home}">Go to the qnnweb demo</a></p>
</body>
</html>
"""


def media_quality(accept: str, media_type: str) -> float:
    """The q-value ``accept`` (an Accept header) gives ``media_type``: its most specific matching range
    wins (``text/html`` over ``text/*`` over ``*/*``), RFC 9110 12.5.1; 0 when none matches."""
    kind = media_type.split("/")[0]
    best: tuple[int, float] = (-1, 0.0)  # (specificity, q)
    for item in accept.split(","):
        name, *params = (part.strip() for part in item.split(";"))
        specificity = {media_type: 2, f"{kind}/*": 1, "*/*": 0}.get(name.lower())
        if specificity is None or specificity <= best[0]:
            continue
        q = 1.0
        for param in params:
            key, _, value = param.partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        best = (specificity, q)
    return best[1]


def wants_html(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return media_quality(accept, "text/html") > media_quality(accept, "application/json")


async def not_found_handler(request: Request, exc: HTTPException) -> Response:
    """The app's HTTPException handler: a 404 a browser asked for outside /api/ is a page; anything
    else is FastAPI's JSON."""
    home = request.base_url.path  # the app's root (a reverse proxy's --root-path), even inside a mount
    path = request.url.path
    under_home = path.removeprefix(home.rstrip("/")) if path.startswith(home) else path
    if exc.status_code != 404 or under_home.startswith("/api/") or not wants_html(request):
        return await http_exception_handler(request, exc)
    detail = "" if exc.detail == "Not Found" else f": {exc.detail}"
    page = PAGE.format(path=escape(request.url.path), detail=escape(detail),
                       home=escape(home))
    return HTMLResponse(page, status_code=404, headers=getattr(exc, "headers", None))
