"""What a question or a first add will cost: the core estimates; the core decides who may ask
(reading the run log: the log permission; a folder: who may add, under api.ingest_roots)."""

from __future__ import annotations

from typing import Literal

from fastapi import APIRouter, Depends, Query, Request

from docqa.access import Principal
from docqa.api.deps import editor, get_runtime, logger
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime

router = APIRouter(prefix=PREFIX, tags=["estimate"])


@router.get("/estimate", summary="Expected tokens, model calls, time and money per question (editors)",
            responses=errors())
async def estimate(request: Request, question: str | None = Query(None, max_length=4000),
                   mode: Literal["pipeline", "agent", "extractive", "auto"] | None = Query(None),
                   rt: Runtime = Depends(get_runtime), principal: Principal = Depends(logger)) -> dict:
    data = await rt.read(request, lambda kb: kb.estimates.question(question, mode, principal=principal))
    data["chat"]["reason"] = rt.redact(data["chat"]["reason"])  # it may name the model's server
    return data


@router.get("/estimate/ingest", summary="A first add of a server folder: files, chunks, embedding tokens, time (editors)",
            responses=errors())
async def estimate_ingest(request: Request, path: str = Query(..., min_length=1, max_length=4096),
                          rt: Runtime = Depends(get_runtime), principal: Principal = Depends(editor)) -> dict:
    return await rt.read(request, lambda kb: kb.estimates.ingest(path, principal=principal))
