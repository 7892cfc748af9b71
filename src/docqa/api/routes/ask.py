"""Asking: POST /ask (JSON, or SSE with `Accept: text/event-stream`) and the seed-compatible
POST /agents/{agent_id}/run.  A worker iterates the run (`KnowledgeBase.start`) and hands each event on;
this module only wires them out (JSON: the run iterated to its end)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from fastapi import APIRouter, Depends, Path, Request
from fastapi.responses import JSONResponse, Response

from docqa.access import Principal
from docqa.api.deps import get_runtime, reader
from docqa.api.errors import INTERNAL, ApiError
from docqa.api.routes import PREFIX, errors
from docqa.api.runtime import Runtime
from docqa.api.schemas import AgentRunRequest, AskRequest
from docqa.api.sse import END, AnswerStream
from docqa.kb import KnowledgeBase
from docqa.flow.control import Control
from docqa.run.life import Run
from docqa.events import Event, Failure
from docqa.types import CANCELLED, Answer

router = APIRouter(prefix=PREFIX, tags=["ask"])
_SSE_DOC: dict[int | str, dict[str, Any]] = {200: {"description": "The answer (JSON), or its events (text/event-stream: metadata, status, draft and "
                                 "draft_rejected (the model's text before the checks: never the answer), content "
                                 "(the published answer), citations, failure, done)",
                  "content": {"application/json": {}, "text/event-stream": {}}}}


@router.post("/ask", summary="Answer a question from the documents, with citations",
             responses={**_SSE_DOC, **errors(409, 504)})
async def ask(body: AskRequest, request: Request, rt: Runtime = Depends(get_runtime),
              principal: Principal = Depends(reader)) -> Response:
    options = {"session_id": body.session_id, "collection": body.collection, "check": body.check,
               "mode": body.mode, "principal": principal, "fresh": body.fresh}
    await _check(rt, request, principal, body.session_id, body.collection)
    return await respond(rt, request, body.question, options, stream=_wants_stream(request))


@router.post("/agents/{agent_id}/run", summary="The seed's agent endpoint: 'default' asks every collection, "
             "a collection's name only that one", responses={**_SSE_DOC, **errors(409, 504)})
async def run_agent(body: AgentRunRequest, request: Request, agent_id: str = Path(min_length=1, max_length=200),
                    rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reader)) -> Response:
    collection = None if agent_id == "default" else agent_id
    if collection is not None and collection not in await rt.read(request, lambda kb: kb.documents.collections(principal=principal)):
        raise ApiError(404, "not_found", f"no agent {agent_id!r}: use 'default' (every collection) or a collection's name")
    options = {"session_id": body.session_id, "collection": collection, "check": None, "mode": body.mode or "agent",
               "principal": principal}
    await _check(rt, request, principal, body.session_id, collection)
    return await respond(rt, request, body.input, options, stream=body.stream or _wants_stream(request), seed=True)


async def respond(rt: Runtime, request: Request, question: str, options: dict[str, Any], *, stream: bool,
                  seed: bool = False) -> Response:
    options = {**options, "timeout": rt.settings.api.request_timeout}  # the run's one deadline (docqa.run.life)
    if stream:
        return await _stream(rt, question, options)
    control, failures = Control(), list[Failure]()

    def keep_failures(event: Event) -> None:
        if isinstance(event, Failure):
            failures.append(event)

    run = await rt.read(request, lambda kb: answer_run(kb, rt, question, options, control, keep_failures), control)
    first = run.answer
    if first.status == CANCELLED:  # cancelled through POST /runs/{id}/cancel: CANCELLED is never sent
        raise ApiError(409, "cancelled", "the run was cancelled before it answered")
    if failures and failures[0].code == "timeout":  # its time limit ended it: as the stream says
        raise ApiError(504, "timeout", rt.redact(first.error or "the answer took longer than its time limit"))
    data = public_answer(first, rt.redact)
    follow_ups = [public_answer(a, rt.redact) for a in run.answers[1:] if a.status != CANCELLED]
    if follow_ups:
        data["follow_ups"] = follow_ups
    return JSONResponse({"output": first.answer, **data} if seed else data)


async def _stream(rt: Runtime, question: str, options: dict[str, Any]) -> Response:
    control, loop, channel = Control(), asyncio.get_running_loop(), asyncio.Queue[Any]()

    def put(item: Any) -> None:  # from the worker thread
        try:
            loop.call_soon_threadsafe(channel.put_nowait, item)
        except RuntimeError:  # the event loop is gone: the server stopped
            control.cancel()

    future = rt.pool.submit(lambda kb: answer_run(kb, rt, question, options, control, put))
    future.add_done_callback(lambda _: put(END))
    first = await channel.get()  # the run's metadata once a worker takes it (or END: it could not start)
    if first is END:
        future.result()  # raises what the worker raised
    return AnswerStream(channel, future, control, rt.settings.api.keepalive_seconds, rt.metrics.streams,
                        rt.redact).response(first)


def answer_run(kb: KnowledgeBase, rt: Runtime, question: str, options: dict[str, Any], control: Control,
               emit: Callable[[Event], None] | None = None) -> Run:
    """On a worker: iterate the run (its follow-ups included; the run is found by its id meanwhile:
    `kb.runs`), each event handed to `emit`."""
    run = kb.start(question, control=control, **{"origin": "api", **options})  # an OpenAI client says "openai"
    try:
        for event in run:
            if emit is not None:
                emit(event)
    finally:
        run.close()
    for one in run.answers:
        rt.metrics.run_finished(one)
    return run


def public_answer(one: Answer, redact: Callable[[str], str]) -> dict[str, Any]:
    """An answer as a client may see it: a run's internal error is not described, and the server's
    paths and service URLs are taken out of its error and notes."""
    data = one.to_dict()
    error = data.get("error") or ""
    data["error"] = INTERNAL if error.startswith("internal error") else (redact(error) if error else None)
    data["notes"] = [redact(note) for note in data["notes"]]
    return data


async def _check(rt: Runtime, request: Request, principal: Principal, session_id: str | None,
                 collection: str | None) -> None:
    """What starting the run would refuse (a collection outside the key's scope, a conversation it may not
    continue: 403, 404), refused by the core before the stream starts."""
    await rt.read(request, lambda kb: kb.answers.check_start(principal=principal, session_id=session_id,
                                                             collection=collection))


def _wants_stream(request: Request) -> bool:
    return "text/event-stream" in request.headers.get("accept", "").lower()
