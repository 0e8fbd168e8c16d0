from __future__ import annotations

from fastapi import APIRouter

from qnnweb_server.api.deps import SettingsDep

router = APIRouter(prefix="/utils", tags=["utils"])


@router.get("/health-check")
def health_check(settings: SettingsDep) -> dict:
    """Liveness, and which of the server's folders exist."""
    folders = {
        name: getattr(settings, name).is_dir()
        for name in ("models_dir", "wheels_dir", "samples_dir", "pyodide_dir", "web_dir")
    }
    return {"ok": True, "folders": folders}
