"""A model's sidecar, ``<stem>.json`` next to it: title (and a short one, for narrow screens), task,
a note on its answers (shown beside them), labels, description, source, preprocessing, output notes,
post-processing. Validated here, once per version of the file; a bad sidecar marks only its model's record."""

from __future__ import annotations

import json
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from qnnweb_server.core.versions import FileVersion


class Preprocess(BaseModel):
    model_config = ConfigDict(extra="allow")

    mean: list[float] | None = Field(None, examples=[[128, 128, 128]])
    std: list[float] | None = Field(None, examples=[[128, 128, 128]])
    resize: int | str | None = Field(
        None, examples=[256, "bilinear"],
        description="a number: the shorter side is resized to it (then `crop`); a string: the filter used to resize "
        "straight to the input size",
    )


# What a model's outputs mean, i.e. how the demo page shows them. "wake-word": a streaming audio model
# (microWakeWord) whose postprocess holds its probability_cutoff and sliding_window_size.
Task = Literal["classification", "detection", "landmarks", "segmentation", "image-to-image", "wake-word"]


class Sidecar(BaseModel):
    """What a sidecar may hold; other keys are kept (they go into the compiled model's metadata)."""

    model_config = ConfigDict(extra="allow")

    title: str | None = None
    short_title: str | None = Field(None, max_length=32)
    task: Task | None = None
    speed_only: bool = False
    note: str | None = Field(None, max_length=200)
    postprocess: dict[str, Any] | None = None
    labels: list[str] | None = None
    description: str | None = None
    source: str | None = None
    preprocess: Preprocess | None = None
    output: dict[str, Any] | None = None


def parse(version: FileVersion) -> tuple[dict[str, Any], str | None]:
    """(the sidecar as a dict, None), or ({}, why it is unusable). The message names the file by its
    name only: no response shows where the server keeps its files."""
    return version.cached("sidecar", _parse)


def _parse(version: FileVersion) -> tuple[dict[str, Any], str | None]:
    data, why = _validated(version.read())
    return (data, None) if why is None else ({}, f"sidecar {version.path.name}: {why}")


def problem(raw: bytes) -> str | None:
    """Why ``raw`` is not a valid sidecar, or None (what an upload of one is checked with)."""
    return _validated(raw)[1]


def _validated(raw: bytes) -> tuple[dict[str, Any], str | None]:
    try:
        data = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        return {}, f"not JSON ({exc})"
    if not isinstance(data, dict):
        return {}, "the top level is not an object"
    try:
        Sidecar.model_validate(data)
    except ValidationError as exc:
        return {}, "; ".join(f"{'.'.join(map(str, e['loc'])) or 'sidecar'}: {e['msg']}" for e in exc.errors())
    return data, None
