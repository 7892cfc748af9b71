"""Search: the best passages for a query, hybrid by default."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from docqa.access import Principal
from docqa.api.deps import get_runtime, reader
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime
from docqa.api.schemas import SearchRequest

router = APIRouter(prefix=PREFIX, tags=["search"])


@router.post("/search", summary="The best passages for a query, with their locations and scores",
             responses=errors(409, 504))
async def search(body: SearchRequest, request: Request, rt: Runtime = Depends(get_runtime),
                 principal: Principal = Depends(reader)) -> dict:
    results = await rt.read(request, lambda kb: kb.search(body.query, body.top_k, body.collection, mode=body.mode,
                                                          path_glob=body.path, types=body.types, rerank=body.rerank,
                                                          principal=principal))
    return results.to_dict()
