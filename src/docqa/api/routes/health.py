"""Liveness, readiness and Prometheus metrics."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response

from docqa.access import Principal
from docqa.api.deps import scraper
from docqa.api.errors import body
from docqa.api.runtime import Runtime

router = APIRouter(tags=["health"])


@router.get("/healthz", summary="The process is up")
async def healthz() -> dict:
    return {"status": "ok"}


@router.get("/readyz", summary="The knowledge base's database answers and the workers and writer are running",
            responses={503: {"description": "Not ready (starting, stopping, the writer died, or the database "
                                            "cannot be reached: then with Retry-After)"}})
async def readyz(request: Request) -> JSONResponse:
    runtime: Runtime = request.app.state.runtime
    if not runtime.ready():
        return JSONResponse(body("not_ready", "the server is starting or stopping"), status_code=503)
    database = await asyncio.to_thread(runtime.database)
    if not database["ok"]:
        retry = str(runtime.settings.api.retry_after)
        return JSONResponse({**body("store_unavailable", database["error"]), "database": database}, status_code=503,
                            headers={"Retry-After": retry})
    pool, writer = runtime.pool, runtime.writer
    return JSONResponse({"status": "ready", "workers": pool.workers, "busy": pool.running, "queued": pool.queued,
                         "capacity": pool.capacity, "writer_queue": writer.queued, "live_runs": runtime.live_runs,
                         "watch_job": runtime.watching.job.id if runtime.watching else None, "database": database})


@router.get("/metrics", summary="Prometheus metrics (text exposition format)",
            response_class=Response, responses={200: {"content": {"text/plain": {}}}})
async def metrics(request: Request, principal: Principal = Depends(scraper)) -> Response:
    runtime: Runtime = request.app.state.runtime
    return Response(runtime.metrics.render(), media_type=runtime.metrics.content_type)
