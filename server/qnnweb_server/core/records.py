"""What the API says about one model (its record): the parser's description of the file, its
sidecar, its URLs, all of one version of the file. Above ``model_files`` and ``compiled``, which
it both uses."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any
from urllib.parse import quote

from qnnweb_server.core.compiled import compiled_url
from qnnweb_server.core.model_files import ModelFile, read_sidecar
from qnnweb_server.core.versions import FileVersion, identity, open_version, settled

Describer = Callable[[bytes], dict[str, Any]]


def _tensor_record(t: dict[str, Any]) -> dict[str, Any]:
    rec = {"name": t.get("name"), "shape": list(t.get("shape") or []), "dtype": t.get("dtype")}
    if t.get("scale") is not None:
        rec["scale"] = t.get("scale")
        rec["zero_point"] = t.get("zero_point")
    return rec


def describe_version(version: FileVersion, describe: Describer) -> dict[str, Any]:
    """``describe`` of the version's bytes, once per version; a parse failure is reported, never raised."""

    def compute(v: FileVersion) -> dict[str, Any]:
        try:
            d = describe(v.read())
        except Exception as exc:  # noqa: BLE001 (any parse failure is the model's error)
            return {"error": f"{type(exc).__name__}: {exc}"}
        return {
            "format": d.get("format"),
            "inputs": [_tensor_record(t) for t in d.get("inputs", [])],
            "outputs": [_tensor_record(t) for t in d.get("outputs", [])],
            "ops": list(d.get("ops", [])),
        }

    return version.cached(("describe", describe), compute)


def model_record(model: ModelFile, describe: Describer, root: str = "") -> dict[str, Any] | None:
    """Everything the API says about one model, all of it from one version of the file (its URLs under
    the app's ``root`` path); None if the model is gone (deleted since the folder was listed). Never
    raises for a bad file or sidecar."""
    version = open_version(model.path)
    if version is None:
        return None
    with version:
        side, side_err = read_sidecar(model)
        rec: dict[str, Any] = {
            "name": model.name,
            "file": model.file,
            "url": f"{root}/models/{quote(model.file, safe='')}",
            "compiled_url": root + compiled_url(model, version, side),
            "format": model.format,
            "size": version.size,
            "sha256": version.sha256,
        }
        desc = describe_version(version, describe)
    errors = []
    if "error" in desc:
        errors.append(desc["error"])
        rec.update({"inputs": [], "outputs": [], "ops": []})
    else:
        # what the parser found (a file may hold another format than its suffix says), except for a
        # compiled model, which describes the model it was compiled from
        rec.update({k: v for k, v in desc.items() if v is not None and not (k == "format" and model.format == "qnn")})
    if side_err:
        errors.append(side_err)
    for key in ("title", "short_title", "note", "postprocess", "labels", "description", "source", "preprocess",
                "output"):
        rec[key] = side.get(key)
    rec["task"] = side.get("task") or "classification"
    rec["speed_only"] = bool(side.get("speed_only"))
    rec["error"] = "; ".join(errors) if errors else None
    return rec


def record_identity(model: ModelFile) -> tuple | None:
    """What a model's record depends on, from two ``stat`` calls: the versions of the model file and
    of its sidecar, and whether both are settled (cacheable); None if the model is gone."""
    try:
        st = os.stat(model.path)
    except OSError:
        return None
    side = None
    if model.sidecar is not None:
        try:
            side = os.stat(model.sidecar)
        except OSError:
            pass
    stable = settled(st) and (side is None or settled(side))
    return identity(st), side and identity(side), stable
