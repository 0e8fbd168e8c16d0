"""Models: metadata under /api/models, the files themselves under /models."""

from __future__ import annotations

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import FileResponse

from qnnweb_server.api.deps import DescriberDep, SettingsDep
from qnnweb_server.api.schemas import ModelInfo, ModelList
from qnnweb_server.core import catalog, compiled

router = APIRouter(prefix="/models", tags=["models"])
files_router = APIRouter(prefix="/models", tags=["files"])

# Browsers revalidate every time (cheap: a 304 while the sha256 is unchanged).
MODEL_CACHE_CONTROL = "public, max-age=0, must-revalidate"
# A URL naming one version of a compiled model (?v=its key) never changes its bytes.
IMMUTABLE_CACHE_CONTROL = "public, max-age=31536000, immutable"


@router.get("", response_model=ModelList)
def list_models(settings: SettingsDep, describe: DescriberDep) -> dict:
    """Every model in the models folder. A model that cannot be parsed is listed with `error`."""
    return {"models": [catalog.model_record(m, describe) for m in catalog.list_models(settings.models_dir)]}


@router.get("/{name}", response_model=ModelInfo, responses={404: {"description": "No such model"}})
def get_model(name: str, settings: SettingsDep, describe: DescriberDep) -> dict:
    """One model's record, by file name (`x.tflite`) or by name (`x`)."""
    model = catalog.find_model(settings.models_dir, name)
    if model is None:
        raise HTTPException(status_code=404, detail="no such model")
    return catalog.model_record(model, describe)


def _etag_matches(if_none_match: str, etag: str) -> bool:
    # weak comparison (RFC 9110 13.1.2): W/"x" matches "x"
    for candidate in if_none_match.split(","):
        candidate = candidate.strip()
        if candidate == "*":
            return True
        if candidate.startswith("W/"):
            candidate = candidate[2:]
        if candidate == etag:
            return True
    return False


@files_router.head("/{name}.qnn", include_in_schema=False)
@files_router.get(
    "/{name}.qnn",
    response_class=FileResponse,
    responses={
        200: {"content": {"application/octet-stream": {}}, "description": "The compiled model"},
        304: {"description": "Not modified (If-None-Match matched the ETag)"},
        404: {"description": "No such model"},
        422: {"description": "The model cannot be compiled (the detail says why)"},
    },
)
def download_compiled_model(name: str, request: Request, settings: SettingsDep, v: str | None = None) -> Response:
    """The model compiled by qnnweb (`.qnn`: op records and constants, inputs, outputs, the sidecar's
    labels and preprocessing), what web/qnnweb.js loads. `name` is the model's file name or name:
    `/models/x.onnx.qnn` or `/models/x.qnn`. Compiled once per model version, then served from disk;
    the ETag changes with the model, its sidecar and the qnnweb frontend. With `v` equal to that
    ETag (the listing's `compiled_url` has it) the response may be cached for good (`immutable`)."""
    model = catalog.find_model(settings.models_dir, name)
    if model is None:
        raise HTTPException(status_code=404, detail="no such model")
    try:
        path, key = compiled.compiled_path(model, settings.compiled_dir)
    except compiled.CompileError as exc:
        raise HTTPException(status_code=422, detail=f"{model.file} cannot be compiled: {exc}") from None
    etag = f'"{key}"'
    headers = {"ETag": etag, "Cache-Control": IMMUTABLE_CACHE_CONTROL if v == key else MODEL_CACHE_CONTROL}
    inm = request.headers.get("if-none-match")
    if inm is not None and _etag_matches(inm, etag):
        return Response(status_code=304, headers=headers)
    return FileResponse(path, media_type="application/octet-stream", headers=headers, filename=None)


@files_router.head("/{name}", include_in_schema=False)
@files_router.get(
    "/{name}",
    response_class=FileResponse,
    responses={
        200: {"content": {"application/octet-stream": {}}, "description": "The model file"},
        304: {"description": "Not modified (If-None-Match matched the ETag)"},
        404: {"description": "No such model"},
    },
)
def download_model(name: str, request: Request, settings: SettingsDep) -> Response:
    """The model file. Its strong ETag is the quoted sha256 of its bytes."""
    model = catalog.find_model(settings.models_dir, name)
    if model is None:
        raise HTTPException(status_code=404, detail="no such model")
    etag = f'"{catalog.sha256_of(model.path)}"'
    headers = {"ETag": etag, "Cache-Control": MODEL_CACHE_CONTROL}
    inm = request.headers.get("if-none-match")
    if inm is not None and _etag_matches(inm, etag):
        return Response(status_code=304, headers=headers)
    return FileResponse(model.path, media_type="application/octet-stream", headers=headers, filename=None)
