"""Runs and sessions: the audit record, feedback, and steering, following up or cancelling a live run
(`kb.runs`: here or, relayed, on the replica that answers it; the log of every run is routes/log.py)."""

from __future__ import annotations

from fastapi import APIRouter, Depends, Path, Query, Request

from docqa.access import Principal
from docqa.api.deps import corrector, get_runtime, reader
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime
from docqa.api.schemas import CorrectionRequest, FeedbackRequest, MessageRequest

router = APIRouter(prefix=PREFIX, tags=["runs"])
RunId = Path(min_length=1, max_length=64, description="A run id (from the metadata event or the answer).")


@router.get("/runs/{run_id}", summary="A run's audit record: question, trace, result, timings, usage, feedback",
            responses=errors())
async def get_run(request: Request, run_id: str = RunId, rt: Runtime = Depends(get_runtime),
                  principal: Principal = Depends(reader)) -> dict:
    return (await rt.read(request, lambda kb: kb.log.run(run_id, principal=principal))).to_dict()


@router.post("/runs/{run_id}/recheck", summary="Recheck an answer against the current text of its sources "
             "(supported, changed with a diff, contradicted, gone); recorded with the run", responses=errors())
async def recheck(request: Request, run_id: str = RunId, reanswer: bool = Query(False, description="Also ask the "
                  "question again (afresh) and give the new answer beside the old."), rt: Runtime = Depends(get_runtime),
                  principal: Principal = Depends(reader)) -> dict:
    return await rt.read(request, lambda kb: kb.answers.recheck(run_id, principal=principal, reanswer=reanswer))


@router.post("/runs/{run_id}/steer", status_code=202, summary="Steer a live agent run (joins after its current tool round)",
             responses=errors(409))
async def steer(body: MessageRequest, request: Request, run_id: str = RunId, rt: Runtime = Depends(get_runtime),
                principal: Principal = Depends(reader)) -> dict:
    await rt.read(request, lambda kb: kb.runs.steer(run_id, body.text, principal=principal))
    return {"run_id": run_id, "accepted": "steer"}


@router.post("/runs/{run_id}/follow-up", status_code=202,
             summary="Queue a question to answer after a live run (same session, same stream)", responses=errors(409))
async def follow_up(body: MessageRequest, request: Request, run_id: str = RunId, rt: Runtime = Depends(get_runtime),
                    principal: Principal = Depends(reader)) -> dict:
    await rt.read(request, lambda kb: kb.runs.follow_up(run_id, body.text, principal=principal))
    return {"run_id": run_id, "accepted": "follow_up"}


@router.post("/runs/{run_id}/cancel", status_code=202, summary="Cancel a live run (recorded as CANCELLED)",
             responses=errors(409))
async def cancel(request: Request, run_id: str = RunId, rt: Runtime = Depends(get_runtime),
                 principal: Principal = Depends(reader)) -> dict:
    await rt.read(request, lambda kb: kb.runs.cancel(run_id, principal=principal))
    return {"run_id": run_id, "accepted": "cancel"}


@router.post("/runs/{run_id}/feedback", status_code=201, summary="Rate a run up or down", responses=errors())
async def feedback(body: FeedbackRequest, request: Request, run_id: str = RunId, rt: Runtime = Depends(get_runtime),
                   principal: Principal = Depends(reader)) -> dict:
    return (await rt.read(request, lambda kb: kb.log.feedback(run_id, body.rating, body.comment, principal=principal))).to_dict()


@router.post("/runs/{run_id}/correction", status_code=201, responses=errors(),
             summary="Correct a run's answer: a note in the run's collection, indexed at once (its editors)")
async def correct(body: CorrectionRequest, request: Request, run_id: str = RunId, rt: Runtime = Depends(get_runtime),
                  principal: Principal = Depends(corrector)) -> dict:
    return (await rt.write(request, lambda kb: kb.log.correct(run_id, body.text, principal=principal))).to_dict()


@router.get("/sessions", summary="The caller's conversations, most recently active first", responses=errors())
async def list_sessions(request: Request, limit: int = Query(50, ge=1, le=1000), rt: Runtime = Depends(get_runtime),
                        principal: Principal = Depends(reader)) -> dict:
    found = await rt.read(request, lambda kb: kb.log.sessions(limit, principal=principal))
    return {"sessions": [s.to_dict() for s in found], "total": len(found)}


@router.get("/sessions/{session_id}", summary="A conversation and its runs, oldest first", responses=errors())
async def get_session(request: Request, session_id: str = Path(min_length=1, max_length=100),
                      rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reader)) -> dict:
    session, runs = await rt.read(request, lambda kb: (kb.log.session(session_id, principal=principal),
                                                       kb.log.session_runs(session_id, principal=principal)))
    keys = ("id", "question", "standalone", "mode", "collection", "status", "answerable", "confidence", "answer", "error",
            "created_at", "finished_at", "stale", "stale_at", "recheck")
    return {**session.to_dict(), "runs": [{k: v for k, v in run.to_dict().items() if k in keys} for run in runs]}
