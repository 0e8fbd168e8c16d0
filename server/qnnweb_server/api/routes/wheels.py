"""The pure-Python wheels Pyodide installs (qnnweb and its dependencies)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import FileResponse

from qnnweb_server.api.deps import SettingsDep
from qnnweb_server.api.responses import serve_version
from qnnweb_server.api.schemas import WheelList
from qnnweb_server.core import catalog
from qnnweb_server.core.versions import open_version

router = APIRouter(prefix="/wheels", tags=["wheels"])
files_router = APIRouter(prefix="/wheels", tags=["files"])


@router.get("", response_model=WheelList, responses={503: {"description": "Wheels not built"}})
def list_wheels(settings: SettingsDep) -> dict:
    """The wheels to pass to `pyodide.loadPackage`, in install order (from `manifest.json`)."""
    try:
        names = catalog.wheel_names(settings.wheels_dir)
    except catalog.WheelsError as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from exc
    return {"wheels": [f"/wheels/{quote(n)}" for n in names]}


@files_router.head("/{name}", include_in_schema=False)
@files_router.get(
    "/{name}",
    response_class=FileResponse,
    responses={
        200: {"content": {"application/zip": {}}},
        304: {"description": "Not modified (If-None-Match matched the ETag)"},
        404: {"description": "No such wheel"},
    },
)
def download_wheel(name: str, request: Request, settings: SettingsDep) -> Response:
    """One wheel file; its strong ETag is the quoted sha256 of its bytes (revisits get a 304)."""
    path = catalog.safe_file(settings.wheels_dir, name, {".whl"})
    version = None if path is None else open_version(path)
    if version is None:
        raise HTTPException(status_code=404, detail="no such wheel")
    return serve_version(request, version, "application/zip", "no-cache")
