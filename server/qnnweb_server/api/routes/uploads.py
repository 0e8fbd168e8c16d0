"""Changes to the hosted models: upload, replace and delete a model, and its sidecar (labels,
preprocessing). Every route needs the upload token (``Authorization: Bearer ...``)."""

from __future__ import annotations

from typing import Annotated, Any
from urllib.parse import quote

import anyio
from fastapi import APIRouter, Header, HTTPException, Query, Request, Response

from qnnweb_server.api.deps import DescriberDep, RootDep, SettingsDep, WriterDep
from qnnweb_server.api.routes.models import record_json
from qnnweb_server.core import model_files, sidecars, store
from qnnweb_server.core.compiled import is_compiled_model
from qnnweb_server.core.records import Describer

router = APIRouter(prefix="/models", tags=["uploads"], dependencies=[WriterDep])

MAX_SIDECAR_BYTES = 1 << 20

_AUTH = {401: {"description": "No or a wrong bearer token"},
         403: {"description": "Uploads are disabled (the server has no --upload-token)"}}
_MODEL_BODY = {"requestBody": {"required": True, "description": "the model file's bytes",
                               "content": {"application/octet-stream": {"schema": {"type": "string",
                                                                                   "format": "binary"}}}}}


def _refuse(exc: store.StoreError) -> HTTPException:
    return HTTPException(status_code=exc.status, detail=exc.message)


def _client(request: Request) -> str | None:
    return request.client.host if request.client else None


def _name(name: str) -> str:
    problem = model_files.model_name_problem(name)
    if problem:
        raise HTTPException(status_code=400, detail=problem)
    return name


def _record(settings: Any, describe: Any, file: str, root: str) -> bytes:
    model = model_files.find_model(settings.models_dir, file)
    record = None if model is None else record_json(model, describe, root)
    if record is None:  # deleted again at once by another client
        raise HTTPException(status_code=404, detail="no such model")
    return record


@router.put(
    "/{name}",
    status_code=201,
    openapi_extra=_MODEL_BODY,
    responses={
        200: {"description": "Replaced: the model's new record"},
        201: {"description": "Created: the model's record"},
        400: {"description": "Not a plain file name ending with .tflite, .onnx or .qnn"},
        **_AUTH,
        409: {"description": "The name exists (and neither ?overwrite=true nor a matching If-Match was sent)"},
        412: {"description": "If-Match for a model that does not exist, or If-None-Match: * for one that does"},
        413: {"description": "Larger than --max-upload-mb"},
        422: {"description": "Not a model qnnweb can read (the parser's message), or not of its suffix's format"},
    },
)
async def put_model(
    name: str,
    request: Request,
    settings: SettingsDep,
    describe: DescriberDep,
    root: RootDep,
    overwrite: Annotated[bool, Query(description="replace the model if it exists")] = False,
    if_match: Annotated[str | None, Header(description='replace only this version: "<sha256>"')] = None,
    if_none_match: Annotated[str | None, Header(description="`*`: create only")] = None,
) -> Response:
    """Upload a model (`x.tflite`, `x.onnx`, or `x.qnn` from `qnnweb.compile`) as the request body.
    It is checked by qnnweb's parser before it replaces anything, and written atomically: readers see
    the old version or the new one, a crash leaves one of them. Concurrent uploads of one name end
    with one whole version. Answers the model's record: 201 when created, 200 when replaced."""
    _name(name)
    condition = store.Condition(overwrite=overwrite, if_match=if_match, if_none_match=if_none_match)
    limit = int(settings.max_upload_mb * (1 << 20))
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise HTTPException(status_code=413, detail=f"the upload is larger than the limit of {limit} bytes")
    folder = settings.models_dir
    try:  # refused before the body is read, when it can be (checked again under the lock)
        condition.check(name, await anyio.to_thread.run_sync(store.current_sha256, folder, name))
        upload = await anyio.to_thread.run_sync(store.Upload, folder, limit)
    except store.StoreError as exc:
        raise _refuse(exc) from None
    try:
        async for chunk in request.stream():
            if chunk:
                await anyio.to_thread.run_sync(upload.write, chunk)
        data = await anyio.to_thread.run_sync(upload.finish)
        problem = await anyio.to_thread.run_sync(_model_problem, name, data, describe)
        if problem:
            raise HTTPException(status_code=422, detail=problem)
        created = await anyio.to_thread.run_sync(store.commit, upload, name, condition)
    except store.StoreError as exc:
        upload.discard()
        raise _refuse(exc) from None
    except BaseException:
        upload.discard()
        raise
    store.record_change(settings.data_dir, "create" if created else "replace", name, _client(request),
                        sha256=upload.sha256, size=upload.size)
    record = await anyio.to_thread.run_sync(_record, settings, describe, name, root)
    return Response(record, status_code=201 if created else 200, media_type="application/json",
                    headers={"ETag": f'"{upload.sha256}"', "Location": f"{root}/api/models/{quote(name, safe='')}"})


def _model_problem(name: str, data: bytes, describe: Describer) -> str | None:
    """Why ``data`` cannot be the model ``name``: the parser's message, or a format other than the
    suffix says."""
    expected = model_files.MODEL_SUFFIXES[name[name.rfind("."):].lower()]
    if expected == "qnn" and not is_compiled_model(data):
        return f"{name}: not a model compiled by qnnweb.compile (no 'QNNW' header)"
    try:
        described = describe(data)
    except Exception as exc:  # noqa: BLE001 (any parse failure is the upload's problem, reported)
        return f"{type(exc).__name__}: {exc}"
    found = described.get("format")
    if expected != "qnn" and found != expected:
        return f"{name} holds a {found} model, not {expected}: name it after its format"
    return None


@router.delete("/{name}", status_code=204,
               responses={204: {"description": "Deleted"}, 400: {"description": "Not a model's file name"}, **_AUTH,
                          404: {"description": "No such model"}, 409: {"description": "If-Match did not match"}})
def delete_model(name: str, request: Request, settings: SettingsDep,
                 if_match: Annotated[str | None, Header(description='delete only this version: "<sha256>"')] = None,
                 ) -> Response:
    """Delete a model by its file name. Its sidecar goes too, unless another model shares its stem."""
    _name(name)
    folder = settings.models_dir
    try:
        sha256 = store.delete(folder, name, store.Condition(if_match=if_match))
    except store.StoreError as exc:
        raise _refuse(exc) from None
    store.record_change(settings.data_dir, "delete", name, _client(request), sha256=sha256)
    stem = name[:name.rfind(".")]
    if not any(m.name == stem for m in model_files.list_models(folder)):
        try:
            store.delete(folder, f"{stem}.json")
            store.record_change(settings.data_dir, "delete-meta", f"{stem}.json", _client(request))
        except store.NotFound:
            pass
    return Response(status_code=204)


_SIDECAR_SCHEMA = sidecars.Sidecar.model_json_schema(ref_template="#/components/schemas/{model}")
_SIDECAR_SCHEMA.pop("$defs", None)  # Preprocess is among the app's schemas already (ModelInfo has it)
_SIDECAR_BODY = {"requestBody": {"required": True, "content": {"application/json": {"schema": _SIDECAR_SCHEMA}}}}


@router.put("/{name}/meta", openapi_extra=_SIDECAR_BODY,
            responses={200: {"description": "The model's record with its new sidecar"}, **_AUTH,
                       404: {"description": "No such model"}, 413: {"description": "Larger than 1 MiB"},
                       422: {"description": "Not a valid sidecar (the problems are listed)"}})
async def put_meta(name: str, request: Request, settings: SettingsDep, describe: DescriberDep,
                   root: RootDep) -> Response:
    """Set a model's sidecar (`<stem>.json`: labels, description, source, preprocess, output; other
    keys are kept and go into the compiled model's metadata), written atomically. `name` is the
    model's file name or stem."""
    model = model_files.find_model(settings.models_dir, name)
    if model is None:
        raise HTTPException(status_code=404, detail="no such model")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_SIDECAR_BYTES:
            raise HTTPException(status_code=413, detail=f"a sidecar holds at most {MAX_SIDECAR_BYTES} bytes")
    problem = sidecars.problem(bytes(body))
    if problem:
        raise HTTPException(status_code=422, detail=problem)
    data = bytes(body)
    await anyio.to_thread.run_sync(store.write_small, settings.models_dir, f"{model.name}.json", data)
    store.record_change(settings.data_dir, "meta", f"{model.name}.json", _client(request), size=len(data))
    return Response(await anyio.to_thread.run_sync(_record, settings, describe, model.file, root),
                    media_type="application/json")


@router.delete("/{name}/meta", status_code=204,
               responses={204: {"description": "Deleted"}, **_AUTH, 404: {"description": "No such model or sidecar"}})
def delete_meta(name: str, request: Request, settings: SettingsDep) -> Response:
    """Remove a model's sidecar."""
    model = model_files.find_model(settings.models_dir, name)
    if model is None or model.sidecar is None:
        raise HTTPException(status_code=404, detail="no such sidecar")
    try:
        store.delete(settings.models_dir, f"{model.name}.json")
    except store.NotFound:
        raise HTTPException(status_code=404, detail="no such sidecar") from None
    store.record_change(settings.data_dir, "delete-meta", f"{model.name}.json", _client(request))
    return Response(status_code=204)


