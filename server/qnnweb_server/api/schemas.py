"""Response models (they document the API in /docs)."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field

from qnnweb_server.core.sidecars import Preprocess, Task


class TensorInfo(BaseModel):
    name: str | None = None
    shape: list[int]
    dtype: str | None = Field(None, examples=["int8", "float32"])
    scale: float | list[float] | None = None
    zero_point: int | list[int] | None = None


class ModelInfo(BaseModel):
    name: str = Field(examples=["visual_wake_words"])
    file: str = Field(examples=["visual_wake_words.tflite"])
    url: str = Field(examples=["/models/visual_wake_words.tflite"])
    compiled_url: str = Field(
        examples=["/models/visual_wake_words.tflite.qnn"],
        description="the model compiled by qnnweb (what web/qnnweb.js loads), made on first request",
    )
    format: str = Field(examples=["tflite"])
    size: int
    sha256: str
    inputs: list[TensorInfo]
    outputs: list[TensorInfo]
    ops: list[Any] = []
    title: str | None = Field(None, description="the sidecar's human-readable name of the model",
                              examples=["BlazeFace face detector (MediaPipe, int8)"])
    short_title: str | None = Field(None, description="the sidecar's title for narrow screens (at most 32 characters)",
                                    examples=["EfficientNet-Lite0 QDQ u8"])
    note: str | None = Field(None, description="the sidecar's note on the model's answers, shown beside them "
                             "(random weights, a tiny model, what it cannot see)",
                             examples=["Random weights: these classes mean nothing, only the speed does."])
    task: Task = Field("classification", description="what the outputs mean (the sidecar's `task`; "
                       "classification when it says nothing)")
    speed_only: bool = Field(False, description="the sidecar says the model's answers are meaningless "
                             "(random weights, kept to measure speed)")
    postprocess: dict[str, Any] | None = Field(
        None, description="the sidecar's post-processing settings for its task (detection: SSD anchors and "
        "non-maximum suppression; landmarks: points per output)",
        examples=[{"anchors": {"input_size": 128, "strides": [8, 16], "anchors_per_cell": [2, 6]},
                   "boxes": "regressors", "scores": "classificators", "keypoints": 6, "min_score": 0.5,
                   "iou_threshold": 0.3, "weighted": True}])
    labels: list[str] | None = None
    description: str | None = None
    source: str | None = None
    preprocess: Preprocess | None = None
    output: dict[str, Any] | None = Field(
        None, description="the sidecar's notes on the output, e.g. `meaning`: logits (apply softmax)",
        examples=[{"meaning": "logits (apply softmax for probabilities)"}],
    )
    error: str | None = Field(None, description="Why the model cannot be used (parse failure) or its sidecar was "
                              "ignored (not valid), else null")


class ModelList(BaseModel):
    models: list[ModelInfo]
    kernels_url: str | None = Field(
        None, examples=["/kernels/5f1c…/"],
        description="where qnnweb.js finds the kernel modules in this version (`kernelsURL`; `immutable`), "
                    "null when the server has none")


class WheelList(BaseModel):
    wheels: list[str] = Field(description="URLs of the wheels, in install order")
    snapshot: str | None = Field(
        None, examples=["/pyodide/qnnweb-snapshot.bin"],
        description="a memory snapshot of this server's Pyodide with these wheels installed and qnnweb "
                    "imported, for `loadPyodide({_loadSnapshot})` with this server's bytecode stdlib "
                    "(`/pyodide/python_stdlib_pyc.zip`); null when there is none or it was made of "
                    "other files")


class Sample(BaseModel):
    name: str = Field(examples=["grace_hopper.jpg"])
    url: str = Field(examples=["/samples/grace_hopper.jpg"])
    size: int


class SampleList(BaseModel):
    samples: list[Sample]
