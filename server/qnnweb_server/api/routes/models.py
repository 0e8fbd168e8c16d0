"""Models: metadata under /api/models, the files themselves under /models."""

from __future__ import annotations

import json
import threading

from fastapi import APIRouter, HTTPException, Request, Response
from fastapi.responses import FileResponse

from qnnweb_server.api.deps import DescriberDep, RootDep, SettingsDep
from qnnweb_server.api.responses import serve_version
from qnnweb_server.api.schemas import ModelInfo, ModelList
from qnnweb_server.core import compiled, model_files, records
from qnnweb_server.core.kernels import kernels_digest
from qnnweb_server.core.safe_files import open_safe_file
from qnnweb_server.core.versions import open_version

router = APIRouter(prefix="/models", tags=["models"])
files_router = APIRouter(prefix="/models", tags=["files"])

# Browsers revalidate every time (cheap: a 304 while the sha256 is unchanged).
MODEL_CACHE_CONTROL = "public, max-age=0, must-revalidate"
# A URL naming one version of a compiled model (?v=its key) never changes its bytes.
IMMUTABLE_CACHE_CONTROL = "public, max-age=31536000, immutable"


@router.get("", response_model=ModelList)
def list_models(settings: SettingsDep, describe: DescriberDep, root: RootDep) -> Response:
    """Every model in the models folder. A model that cannot be parsed, or whose sidecar is invalid, is
    listed with `error`."""
    records = (record_json(m, describe, root) for m in model_files.list_models(settings.models_dir))
    digest = kernels_digest(settings.kernels_dir)
    kernels = json.dumps(None if digest is None else f"{root}/kernels/{digest}/").encode()
    return Response(b'{"models":[' + b",".join(r for r in records if r is not None) + b'],"kernels_url":' + kernels
                    + b"}", media_type="application/json")


@router.get("/{name}", response_model=ModelInfo, responses={404: {"description": "No such model"}})
def get_model(name: str, settings: SettingsDep, describe: DescriberDep, root: RootDep) -> Response:
    """One model's record, by file name (`x.tflite`) or by name (`x`)."""
    model = model_files.find_model(settings.models_dir, name)
    record = None if model is None else record_json(model, describe, root)
    if record is None:
        raise HTTPException(status_code=404, detail="no such model")
    return Response(record, media_type="application/json")


# (model file, its path, its sidecar, the describer, the root path) -> (the versions the record is of, its JSON): a warm
# listing is two stat calls per model
_records: dict[tuple, tuple[tuple, bytes]] = {}
_records_lock = threading.Lock()


def record_json(model: model_files.ModelFile, describe: records.Describer, root: str = "") -> bytes | None:
    """The model's record as ModelInfo JSON (its URLs under ``root``), None if the model is gone."""
    identity = records.record_identity(model)
    if identity is None:
        return None
    versions, stable = identity[:2], identity[2]
    slot = (model.file, model.path, model.sidecar, describe, root)
    with _records_lock:
        cached = _records.get(slot)
    if cached is not None and cached[0] == versions:
        return cached[1]
    record = records.model_record(model, describe, root)
    if record is None:
        return None
    data = ModelInfo.model_validate(record).model_dump_json().encode()
    if stable:  # a file younger than a clock tick may change under the same identity (versions.RACY_NS)
        with _records_lock:
            _records[slot] = (versions, data)
    return data


kernels_router = APIRouter(prefix="/kernels", tags=["files"])


@kernels_router.head("/{digest}/{name}", include_in_schema=False)
@kernels_router.get("/{digest}/{name}", response_class=FileResponse,
                    responses={200: {"content": {"application/wasm": {}}},
                               404: {"description": "No such kernel module, or not in that version"}})
def download_kernel_version(digest: str, name: str, request: Request, settings: SettingsDep) -> Response:
    """A kernel module of the version `/api/models` names (`kernels_url`): `immutable`. Once the
    modules have been rebuilt the old digest is a 404. `/kernels/{name}` is always the current one."""
    version = None
    if kernels_digest(settings.kernels_dir) == digest:
        version = open_safe_file(settings.kernels_dir, name, {".wasm"})
    if version is None:
        raise HTTPException(status_code=404, detail="no such kernel module in this version: see /api/models")
    return serve_version(request, version, "application/wasm", IMMUTABLE_CACHE_CONTROL)


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
    own = model_files.find_model(settings.models_dir, f"{name}.qnn")
    if own is not None and own.format == "qnn":  # a model uploaded compiled: the file itself
        version = open_version(own.path)
        if version is None:
            raise HTTPException(status_code=404, detail="no such model")
        cache_control = IMMUTABLE_CACHE_CONTROL if v == version.sha256 else MODEL_CACHE_CONTROL
        return serve_version(request, version, "application/octet-stream", cache_control)
    model = model_files.find_model(settings.models_dir, name)
    if model is None:
        raise HTTPException(status_code=404, detail="no such model")
    try:
        found = compiled.compiled_path(model, settings.compiled_dir)
    except compiled.CompileError as exc:
        raise HTTPException(status_code=422, detail=f"{model.file} cannot be compiled: {exc}") from None
    version = None if found is None else open_version(found[0])
    if version is None:
        raise HTTPException(status_code=404, detail="no such model")
    key = found[1]
    cache_control = IMMUTABLE_CACHE_CONTROL if v == key else MODEL_CACHE_CONTROL
    return serve_version(request, version, "application/octet-stream", cache_control, etag=key)


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
    """The model file. Its strong ETag is the quoted sha256 of its bytes. A model replaced during the
    download is sent whole in the version the request found."""
    model = model_files.find_model(settings.models_dir, name)
    version = None if model is None else open_version(model.path)
    if version is None:
        raise HTTPException(status_code=404, detail="no such model")
    return serve_version(request, version, "application/octet-stream", MODEL_CACHE_CONTROL)
