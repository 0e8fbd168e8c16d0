"""The pure-Python wheels Pyodide installs (qnnweb and its dependencies)."""

from __future__ import annotations

import hashlib
import json
from urllib.parse import quote

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import FileResponse

from qnnweb_server.api.deps import RootDep, SettingsDep
from qnnweb_server.api.responses import not_modified, serve_version
from qnnweb_server.api.schemas import WheelList
from qnnweb_server.core import wheels
from qnnweb_server.core.pyodide_snapshot import pyodide_snapshot
from qnnweb_server.core.safe_files import open_safe_file
from qnnweb_server.static import IMMUTABLE, REVALIDATE, package_version

router = APIRouter(prefix="/wheels", tags=["wheels"])
files_router = APIRouter(prefix="/wheels", tags=["files"])


@router.get("", response_model=WheelList, responses={503: {"description": "Wheels not built"}})
def list_wheels(settings: SettingsDep, root: RootDep) -> dict:
    """The wheels to pass to `pyodide.loadPackage`, in install order (from `manifest.json`); each URL
    names one version (`/wheels/<its sha256>/<file>`: it ends with the file name, as loadPackage wants),
    so a browser may keep it for good. `snapshot`: a Pyodide memory snapshot with exactly these wheels
    installed and qnnweb imported (`loadPyodide({_loadSnapshot})`, as `/static/pyodide-start.js`
    does), or null."""
    try:
        names = wheels.wheel_names(settings.wheels_dir)
    except wheels.WheelsError as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from exc
    urls, digests = [], []
    for name in names:
        version = open_safe_file(settings.wheels_dir, name, {".whl"})
        if version is None:
            raise HTTPException(status_code=503, detail=f"wheel {name} disappeared: run ./build.sh build")
        with version:
            urls.append(f"{root}/wheels/{version.sha256}/{quote(name)}")
            digests.append((name, version.sha256))
    snapshot = pyodide_snapshot(settings.pyodide_dir, digests)
    return {"wheels": urls, "snapshot": snapshot and f"{root}/pyodide/{quote(snapshot)}"}


@router.get(
    "/pyodide-lock.json",
    responses={200: {"description": "A Pyodide lock file (pyodide-lock's format)"},
               304: {"description": "Not modified (If-None-Match matched the ETag)"},
               503: {"description": "Wheels or their lock file not built"}},
)
def pyodide_lock(request: Request, settings: SettingsDep, root: RootDep) -> Response:
    """This server's Pyodide lock file: Pyodide's own packages and these wheels (made by pyodide-lock
    at build time), every file a URL of this server (the wheels' versioned ones, Pyodide's under its
    version), so that Pyodide installs qnnweb **by name**:
    `loadPyodide({indexURL, lockFileURL: "/api/wheels/pyodide-lock.json", packages: ["qnnweb"]})`, or
    `pyodide.loadPackage("qnnweb")` later; `import qnnweb` in `loadPackagesFromImports` too. Its
    ETag is the sha256 of its bytes."""
    version = package_version(settings.pyodide_dir)
    try:
        lock = wheels.pyodide_lock(settings.wheels_dir, lambda name, digest: f"{root}/wheels/{digest}/{quote(name)}",
                                    f"{root}/pyodide/{version}/" if version else f"{root}/pyodide/")
    except wheels.WheelsError as exc:
        raise HTTPException(status_code=503, detail=str(exc)) from exc
    body = json.dumps(lock, separators=(",", ":")).encode()
    headers = {"ETag": f'"{hashlib.sha256(body).hexdigest()}"', "Cache-Control": REVALIDATE}
    return not_modified(request, headers) or Response(body, media_type="application/json", headers=headers)


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
    """One wheel file, its current version; its strong ETag is the quoted sha256 of its bytes (revisits
    get a 304)."""
    version = open_safe_file(settings.wheels_dir, name, {".whl"})
    if version is None:
        raise HTTPException(status_code=404, detail="no such wheel")
    return serve_version(request, version, "application/zip", REVALIDATE)


@files_router.head("/{digest}/{name}", include_in_schema=False)
@files_router.get(
    "/{digest}/{name}",
    response_class=FileResponse,
    responses={200: {"content": {"application/zip": {}}}, 404: {"description": "No such wheel, or not that version"}},
)
def download_wheel_version(digest: str, name: str, request: Request, settings: SettingsDep) -> Response:
    """One version of a wheel, named by its sha256 (the URLs of `/api/wheels`): `immutable`. A version
    that is no longer there is a 404 (`/api/wheels` lists the current ones)."""
    version = open_safe_file(settings.wheels_dir, name, {".whl"})
    if version is None:
        raise HTTPException(status_code=404, detail="no such wheel")
    try:
        current = version.sha256 == digest
    except BaseException:
        version.close()
        raise
    if not current:
        version.close()
        raise HTTPException(status_code=404, detail="not the current version of this wheel: see /api/wheels")
    return serve_version(request, version, "application/zip", IMMUTABLE)
