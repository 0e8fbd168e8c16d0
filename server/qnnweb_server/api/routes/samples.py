"""Sample photos for the demo page (the files are served as static files under /samples)."""

from __future__ import annotations

from urllib.parse import quote

from fastapi import APIRouter

from qnnweb_server.api.deps import RootDep, SettingsDep
from qnnweb_server.api.schemas import SampleList
from qnnweb_server.core.safe_files import list_files

router = APIRouter(prefix="/samples", tags=["samples"])

SAMPLE_SUFFIXES = {".jpg", ".jpeg", ".png", ".gif", ".webp", ".bmp"}


@router.get("", response_model=SampleList)
def list_samples(settings: SettingsDep, root: RootDep) -> dict:
    """The photos in the samples folder."""
    files = list_files(settings.samples_dir, SAMPLE_SUFFIXES)
    return {
        "samples": [
            {"name": n, "url": f"{root}/samples/{quote(n)}", "size": p.stat().st_size} for n, p in files.items()
        ]
    }
