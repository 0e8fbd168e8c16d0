"""Dependencies shared by the routes, as ``Annotated`` aliases."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import Depends

from qnnweb_server.core.catalog import Describer
from qnnweb_server.core.config import Settings, get_settings


def _qnnweb_describe(data: bytes) -> dict[str, Any]:
    # imported lazily: the server starts (and lists models with an error) even if qnnweb is broken
    import qnnweb

    return qnnweb.describe(data)


def get_describer() -> Describer:
    """The function that parses a model file; tests may override it."""
    return _qnnweb_describe


SettingsDep = Annotated[Settings, Depends(get_settings)]
DescriberDep = Annotated[Describer, Depends(get_describer)]
