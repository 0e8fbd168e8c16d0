"""Routers: ``api_router`` (JSON under /api) and ``files_router`` (model and wheel files)."""

from fastapi import APIRouter

from qnnweb_server.api.routes import models, samples, uploads, utils, wheels

api_router = APIRouter(prefix="/api")
api_router.include_router(models.router)
api_router.include_router(uploads.router)
api_router.include_router(wheels.router)
api_router.include_router(samples.router)
api_router.include_router(utils.router)

files_router = APIRouter()
files_router.include_router(models.files_router)
files_router.include_router(models.kernels_router)
files_router.include_router(wheels.files_router)
