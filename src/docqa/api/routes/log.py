"""The question-and-answer log for the people who keep the documents: as JSON, an export, or a CSV
download.  The same filters everywhere; the core decides which runs a key sees."""

from __future__ import annotations

import io
from dataclasses import dataclass
from typing import Literal

from fastapi import APIRouter, Depends, Query, Request
from fastapi.responses import JSONResponse, PlainTextResponse, Response

from docqa.access import Principal
from docqa.api.deps import get_runtime, logger
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime

router = APIRouter(prefix=PREFIX, tags=["log"])
_MEDIA = {"jsonl": "application/x-ndjson", "csv": "text/csv; charset=utf-8", "md": "text/markdown; charset=utf-8"}
Kind = Literal["not_found", "failed", "low_confidence", "rated_down", "escalated", "stale"]


@dataclass
class LogFilter:
    """The log's filters, as query parameters."""

    since: str | None = Query(None, max_length=40, description="A date or ISO time (UTC), inclusive.")
    until: str | None = Query(None, max_length=40, description="A date or ISO time (UTC), exclusive.")
    attention: bool = Query(False, description="Only questions not answered, failed, low confidence, rated down or "
                                               "stale, each with its reason.")
    stale: bool | None = Query(None, description="true: only the stale answers (a source they cite changed or went "
                                                 "since); false: only the others.")
    kind: list[Kind] | None = Query(None, description="Only runs that need attention for this reason (repeatable).")
    collection: str | None = Query(None, min_length=1, max_length=200, description="Only runs asked of this collection.")
    status: list[str] | None = Query(None, description="Only runs with this status (repeatable), e.g. FAILED.")
    q: str | None = Query(None, min_length=1, max_length=200, description="Only runs whose question, answer, error, "
                                                                         "reason or sources mention this text.")
    limit: int = Query(1000, ge=1, le=100_000)

    def rows(self, kb, principal: Principal) -> list[dict]:
        return kb.log.qa_log(self.since, self.attention, principal=principal, **self.filters())[:self.limit]

    def export(self, kb, principal: Principal, fmt: str) -> str:
        out = io.StringIO()
        kb.log.export(out, fmt, self.since, self.attention, self.limit, principal=principal, **self.filters())
        return out.getvalue()

    def filters(self) -> dict:
        return {"until": self.until, "collection": self.collection, "statuses": self.status, "text": self.q,
                "kinds": self.kind, "stale": self.stale}


@router.get("/log", summary="The question-and-answer log for the people who maintain the documents (newest first)",
            response_class=Response, responses={**errors(), 200: {"content": {"application/json": {}, **{
                media: {} for media in _MEDIA.values()}}}})
async def qa_log(request: Request, where: LogFilter = Depends(),
                 format: Literal["json", "jsonl", "csv", "md"] = Query("json"), rt: Runtime = Depends(get_runtime),
                 principal: Principal = Depends(logger)) -> Response:
    if format == "json":
        rows = await rt.read(request, lambda kb: where.rows(kb, principal))
        return JSONResponse({"questions": rows, "total": len(rows)})
    return PlainTextResponse(await rt.read(request, lambda kb: where.export(kb, principal, format)),
                             media_type=_MEDIA[format])


@router.get("/log.csv", summary="The log as a CSV file to download (cells a spreadsheet would run are made text)",
            response_class=Response, responses={**errors(), 200: {"content": {"text/csv": {}}}})
async def qa_log_csv(request: Request, where: LogFilter = Depends(), rt: Runtime = Depends(get_runtime),
                     principal: Principal = Depends(logger)) -> Response:
    text = await rt.read(request, lambda kb: where.export(kb, principal, "csv"))
    name = "docqa-attention.csv" if where.attention or where.kind else "docqa-log.csv"
    return Response(text, media_type=_MEDIA["csv"], headers={"Content-Disposition": f'attachment; filename="{name}"'})
