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

from pydantic import BaseModel, ConfigDict, model_validator

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

    @model_validator(mode="after")
    def _derive_and_resolve(self) -> "Settings":
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
    def from_env(cls, environ: os._Environ[str] | dict[str, str] | None = None, **overrides: object) -> "Settings":
        """Settings from ``QNNWEB_DATA_DIR``, ``QNNWEB_MODELS_DIR``, ``QNNWEB_WHEELS_DIR``,
        ``QNNWEB_SAMPLES_DIR``, ``QNNWEB_PYODIDE_DIR``, ``QNNWEB_WEB_DIR``, ``QNNWEB_VENDOR_DIR``,
        ``QNNWEB_KERNELS_DIR``, ``QNNWEB_COMPILED_DIR`` and ``QNNWEB_CORS_ORIGINS`` (space- or comma-separated); keyword
        arguments that are not None win over the environment."""
        env = os.environ if environ is None else environ
        values: dict[str, object] = {}
        for field in cls.model_fields:
            raw = env.get(f"QNNWEB_{field.upper()}")
            if raw:
                values[field] = tuple(raw.replace(",", " ").split()) if field == "cors_origins" else Path(raw)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)


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
