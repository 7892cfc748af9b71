"""Verify: fact-check any text against the documents the key may see (docqa.answer.factcheck)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Request

from docqa.access import Principal
from docqa.api.deps import get_runtime, reader
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime
from docqa.api.schemas import VerifyRequest

router = APIRouter(prefix=PREFIX, tags=["verify"])


@router.post("/verify", summary="Fact-check a text: each claim supported, contradicted or not in the documents",
             responses=errors(504))
async def verify(body: VerifyRequest, request: Request, rt: Runtime = Depends(get_runtime),
                 principal: Principal = Depends(reader)) -> dict:
    result = await rt.read(request, lambda kb: kb.verify(body.text, question=body.question, collection=body.collection,
                                                         llm=body.llm, principal=principal))
    data = result.to_dict()
    data["notes"] = [rt.redact(note) for note in data["notes"]]  # a failed model's URL is the server's business
    return data
