"""Background jobs (uploads, server-side ingestion, reindexing) and their progress."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Depends, Path

from docqa.access import Principal
from docqa.api.deps import get_runtime, reader
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime
from docqa.kb import KnowledgeBase

router = APIRouter(prefix=PREFIX, tags=["jobs"])


@router.get("/jobs/{job_id}", summary="A job's status, progress and result", responses=errors())
async def get_job(job_id: str = Path(min_length=1, max_length=64), rt: Runtime = Depends(get_runtime),
                  principal: Principal = Depends(reader)) -> dict:
    job = await asyncio.to_thread(rt.writer.job, job_id)  # another replica's job: read from the database
    # another collection's job (a reindex covers every collection) is not this key's to see
    KnowledgeBase.check_visible(principal, job.collection, f"no job {job_id!r}")
    return job.to_dict()
