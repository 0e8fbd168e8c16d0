"""Server settings: one pydantic model, filled from QNNWEB_* environment variables.

Every folder defaults to a path relative to the current directory (the repo root when run by
``./build.sh serve``) except the web folder, which defaults to the ``web/`` beside this package's
source tree. ``get_settings`` is cached; tests pass their own ``Settings`` to ``create_app`` (or
override ``get_settings`` in ``app.dependency_overrides``).
"""

from __future__ import annotations

import os
from functools import lru_cache
from importlib import util
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, SecretStr, model_validator

# server/qnnweb_server/core/config.py -> repo root is parents[3]
_SOURCE_WEB_DIR = Path(__file__).resolve().parents[3] / "web"


class Settings(BaseModel):
    """Where the server finds its files. Unset folders are derived from ``data_dir``."""

    model_config = ConfigDict(frozen=True)

    data_dir: Path = Path("data")
    models_dir: Path | None = None  # default <data_dir>/models
    wheels_dir: Path | None = None  # default <data_dir>/wheels
    samples_dir: Path | None = None  # default <data_dir>/samples
    pyodide_dir: Path = Path(".cache/pyodide")
    web_dir: Path | None = None  # default: the repo's web/ (or ./web)
    vendor_dir: Path = Path(".cache/npm/node_modules")  # npm packages of the benchmark's other engines, /vendor/
    kernels_dir: Path | None = None  # default: the installed qnnweb package's wasm/ (served as /kernels/)
    compiled_dir: Path = Path(".cache/compiled")  # .qnn files compiled from the models, by sha256
    # origins whose pages may fetch /api/* and /models/* (CORS; CORP cross-origin there); none by default
    cors_origins: tuple[str, ...] = ()
    # the bearer token of PUT / DELETE /api/models/...; None: the models folder is read-only (403)
    upload_token: SecretStr | None = None
    max_upload_mb: float = Field(64, gt=0)  # larger uploads are refused (413)
    access_log: Literal["text", "json", "off"] = "text"  # text: uvicorn's lines; json: AccessLogMiddleware

    @model_validator(mode="after")
    def _derive_and_resolve(self) -> Settings:
        # frozen model: fill derived fields through object.__setattr__ during validation
        data = self.data_dir.expanduser().resolve()
        web = self.web_dir
        if web is None:
            web = _SOURCE_WEB_DIR if _SOURCE_WEB_DIR.is_dir() else Path("web")
        values = {
            "data_dir": data,
            "models_dir": self.models_dir or data / "models",
            "wheels_dir": self.wheels_dir or data / "wheels",
            "samples_dir": self.samples_dir or data / "samples",
            "pyodide_dir": self.pyodide_dir,
            "web_dir": web,
            "vendor_dir": self.vendor_dir,
            "kernels_dir": self.kernels_dir or _package_kernels_dir(),
            "compiled_dir": self.compiled_dir,
        }
        for name, value in values.items():
            object.__setattr__(self, name, Path(value).expanduser().resolve())
        return self

    @classmethod
    def from_env(cls, environ: os._Environ[str] | dict[str, str] | None = None, **overrides: object) -> Settings:
        """Settings from ``QNNWEB_DATA_DIR``, ``QNNWEB_MODELS_DIR``, ``QNNWEB_WHEELS_DIR``,
        ``QNNWEB_SAMPLES_DIR``, ``QNNWEB_PYODIDE_DIR``, ``QNNWEB_WEB_DIR``, ``QNNWEB_VENDOR_DIR``,
        ``QNNWEB_KERNELS_DIR``, ``QNNWEB_COMPILED_DIR``, ``QNNWEB_CORS_ORIGINS`` (space- or comma-separated),
        ``QNNWEB_UPLOAD_TOKEN``, ``QNNWEB_MAX_UPLOAD_MB`` and ``QNNWEB_ACCESS_LOG``; keyword arguments that are not None win over
        the environment."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for field in cls.model_fields:
            raw = env.get(f"QNNWEB_{field.upper()}")
            if raw:
                if field == "cors_origins":
                    values[field] = tuple(raw.replace(",", " ").split())
                elif field in ("upload_token", "max_upload_mb", "access_log"):
                    values[field] = raw  # pydantic converts (and validates) these
                else:
                    values[field] = Path(raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def to_env(self) -> dict[str, str]:
        """These settings as the QNNWEB_* variables ``from_env`` reads: how ``--workers`` processes,
        which build their app with ``create_app()``, get the command line's settings."""
        env = {}
        for field in type(self).model_fields:
            value = getattr(self, field)
            if value is None:
                continue
            if field == "cors_origins":
                value = " ".join(value)
            elif field == "upload_token":
                value = value.get_secret_value()
            env[f"QNNWEB_{field.upper()}"] = str(value)
        return env


def _package_kernels_dir() -> Path:
    """The qnnweb package's kernel modules, found without importing it (the server starts even if
    qnnweb is broken or missing: /kernels/ is then a 404)."""
    spec = util.find_spec("qnnweb")
    if spec is None or not spec.submodule_search_locations:
        return Path("qnnweb-not-installed")
    return Path(spec.submodule_search_locations[0]) / "wasm"


@lru_cache
def get_settings() -> Settings:
    return Settings.from_env()
