"""The server's status for the people who keep the documents: the chat model and the embedder in use
and why, the index's size and counts, and each part's health."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from docqa.access import Principal
from docqa.api.deps import get_runtime, monitor
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime
from docqa.version import __version__

router = APIRouter(prefix=PREFIX, tags=["status"])


@router.get("/status", summary="Models in use and why, index size and counts, each part's health (editors)",
            responses=errors())
async def status(request: Request, rt: Runtime = Depends(get_runtime), principal: Principal = Depends(monitor)) -> dict:
    health = rt.health()
    report = await rt.read(request, lambda kb: kb.status.summary(principal=principal, health=health))
    for part in ("chat", "embedder"):  # a reason names the model's server: shown as "the chat model's server"
        report[part]["reason"] = rt.redact(report[part]["reason"])
    return {**report, "version": __version__}
