"""Dependencies shared by the routes, as ``Annotated`` aliases."""

from __future__ import annotations

import secrets
from typing import Annotated, Any

from fastapi import Depends, HTTPException, Request
from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer

from qnnweb_server.core.records import Describer
from qnnweb_server.core.config import Settings, get_settings


def _qnnweb_describe(data: bytes) -> dict[str, Any]:
    # imported lazily: the server starts (and lists models with an error) even if qnnweb is broken
    import qnnweb

    return qnnweb.describe(data)


def get_describer() -> Describer:
    """The function that parses a model file; tests may override it."""
    return _qnnweb_describe


def get_root_path(request: Request) -> str:
    """The path prefix the app is served under ("" at the root; ``--root-path``, or a mount): what the
    URLs in the API's answers start with."""
    return request.scope.get("root_path", "")


SettingsDep = Annotated[Settings, Depends(get_settings)]
DescriberDep = Annotated[Describer, Depends(get_describer)]
RootDep = Annotated[str, Depends(get_root_path)]


_bearer = HTTPBearer(auto_error=False, description="the server's upload token (--upload-token)")


def require_writer(settings: SettingsDep,
                   credentials: Annotated[HTTPAuthorizationCredentials | None, Depends(_bearer)]) -> None:
    """Changes to the models folder need ``Authorization: Bearer <the upload token>``: 403 when the
    server has no token (read-only), 401 without the right one (compared in constant time)."""
    if settings.upload_token is None:
        raise HTTPException(status_code=403, detail="uploads are disabled: start the server with --upload-token "
                            "(or QNNWEB_UPLOAD_TOKEN)")
    expected = settings.upload_token.get_secret_value().encode()
    if credentials is None or not secrets.compare_digest(credentials.credentials.encode(), expected):
        raise HTTPException(status_code=401, detail="a valid bearer token is needed",
                            headers={"WWW-Authenticate": "Bearer"})


WriterDep = Depends(require_writer)
