"""The OpenAI-compatible endpoint: POST /v1/chat/completions (streamed or not) and GET /v1/models, so
chat apps (Open WebUI, LibreChat, editors, scripts on the `openai` SDK) ask the documents as "a model".

The same keys (`Authorization: Bearer dq_…`), roles and scopes as the rest of the API; errors in
OpenAI's shape (api/errors.py).  How messages are read and the reply written: api/openai_format.py.
A stream sends the role at once, keep-alive comments while the answer is checked, then the checked
answer with its Sources block, the final chunk (citations as data, finish_reason "stop"), the usage
chunk when `stream_options.include_usage`, and `data: [DONE]`.
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import AsyncIterator
from typing import Any

from fastapi import APIRouter, Depends, Request
from fastapi.responses import JSONResponse, Response
from pydantic import ConfigDict, Field
from sse_starlette import EventSourceResponse, ServerSentEvent

from docqa.access import Principal
from docqa.api import openai_format as fmt
from docqa.api.deps import get_runtime, reader
from docqa.api.errors import INTERNAL, ApiError, body, classify, public_message
from docqa.api.routes.ask import answer_run
from docqa.api.runtime import Runtime
from docqa.api.schemas import Body
from docqa.api.sse import END
from docqa.flow.control import Control
from docqa.run.life import Run
from docqa.events import Event, Failure, Metadata
from docqa.types import CANCELLED, FAILED, Answer

router = APIRouter(prefix="/v1", tags=["openai"])
log = logging.getLogger("docqa.api")


class ChatRequest(Body):
    """OpenAI's chat-completions request; what docqa does not use (temperature, tools, ...) is accepted and ignored."""

    model_config = ConfigDict(extra="allow")
    model: str = Field(min_length=1, max_length=300, description="docqa, docqa/COLLECTION or docqa-agent (GET /v1/models).")
    messages: list[dict[str, Any]] = Field(min_length=1, max_length=500, description="The conversation; the last is the user's question.")
    stream: bool = False
    stream_options: dict[str, Any] | None = None


@router.get("/models", summary="OpenAI-compatible: the models (docqa, docqa-agent, docqa/COLLECTION) this key may ask")
async def models(request: Request, rt: Runtime = Depends(get_runtime), principal: Principal = Depends(reader)) -> dict:
    names = await rt.read(request, lambda kb: list(kb.documents.collections(principal=principal)))
    return {"object": "list", "data": [{"id": name, "object": "model", "created": 0, "owned_by": "docqa"}
                                       for name in fmt.model_ids(names)]}


@router.post("/chat/completions", summary="OpenAI-compatible: answer the last user message from the documents, with citations")
async def chat_completions(body_: ChatRequest, request: Request, rt: Runtime = Depends(get_runtime),
                           principal: Principal = Depends(reader)) -> Response:
    model = await _model(rt, request, principal, body_.model)
    asked = fmt.read_messages(body_.messages)
    options = {"collection": model.collection, "mode": model.mode, "principal": principal, "history": asked.history,
               "origin": "openai", "timeout": rt.settings.api.request_timeout}  # the run's one deadline (docqa.run.life)
    await rt.read(request, lambda kb: kb.answers.check_start(principal=principal, collection=model.collection))
    if body_.stream:
        usage = bool((body_.stream_options or {}).get("include_usage"))
        return await _stream(rt, asked.question, options, model.id, usage)
    control, failures = Control(), list[str]()

    def keep_failures(event: Event) -> None:
        if isinstance(event, Failure):
            failures.append(event.code)

    run = await rt.read(request, lambda kb: answer_run(kb, rt, asked.question, options, control, keep_failures), control)
    return JSONResponse(fmt.completion(_answered(run.answer, timed_out="timeout" in failures), model.id))


async def _model(rt: Runtime, request: Request, principal: Principal, name: str) -> fmt.ModelName:
    """The model the request names, among those GET /v1/models lists for this key (404 model_not_found)."""
    model = fmt.parse_model(name)
    if model is not None and model.collection is not None:
        visible = await rt.read(request, lambda kb: kb.documents.collections(principal=principal))
        model = model if model.collection in visible else None
    if model is None:
        raise ApiError(404, "model_not_found", f"the model {name!r} does not exist or this key may not read it: "
                                               "use one GET /v1/models lists (docqa, docqa-agent, docqa/COLLECTION)")
    return model


def _answered(answer: Answer | None, *, timed_out: bool = False) -> Answer:
    """The answer, or the error a client reads instead (cancelled 409, its time limit 504, failed 503 / 500)."""
    if answer is None or answer.status == CANCELLED:
        raise ApiError(409, "cancelled", "the run was cancelled before it answered")
    if answer.status == FAILED:
        message = answer.error or "the question could not be answered"
        if timed_out:  # the run's own time limit ended it, as every door says
            raise ApiError(504, "timeout", message)
        if message.startswith("internal error"):
            raise ApiError(500, "internal", INTERNAL)
        raise ApiError(503, "answer_failed", message)
    return answer


async def _stream(rt: Runtime, question: str, options: dict[str, Any], model: str, include_usage: bool) -> Response:
    control, loop, channel = Control(), asyncio.get_running_loop(), asyncio.Queue[Any]()

    def put(item: Any) -> None:  # from the worker thread
        try:
            loop.call_soon_threadsafe(channel.put_nowait, item)
        except RuntimeError:  # the event loop is gone: the server stopped
            control.cancel()

    future = rt.pool.submit(lambda kb: answer_run(kb, rt, question, options, control, put))
    future.add_done_callback(lambda _: put(END))
    chunks, api = fmt.Chunks(model), rt.settings.api

    async def events() -> AsyncIterator[ServerSentEvent]:
        started, timed_out = False, False
        try:
            while True:
                try:
                    item = await asyncio.wait_for(channel.get(), timeout=api.keepalive_seconds)
                except TimeoutError:
                    yield ServerSentEvent(comment="keep-alive")
                    continue
                if item is END:
                    for part in _ending(future, chunks, include_usage, started, rt, timed_out):
                        yield _data(part)
                    break
                if isinstance(item, Failure) and item.code == "timeout":  # the run's one deadline
                    timed_out = True
                if isinstance(item, Metadata) and not started:
                    started = True
                    yield _data(chunks.start(item.run_id))
            yield ServerSentEvent(data="[DONE]")
        finally:
            control.cancel()  # a no-op when the run has ended; else it stops before the next model call

    return EventSourceResponse(events(), ping=0, headers={"Cache-Control": "no-cache"})


def _ending(future: Any, chunks: fmt.Chunks, include_usage: bool, started: bool, rt: Runtime,
            timed_out: bool = False) -> list[dict[str, Any]]:
    """The chunks after the run has ended: the answer and its citations (or an error), then the usage."""
    try:
        run: Run = future.result()
        answer = _answered(run.answer, timed_out=timed_out)
    except ApiError as exc:
        return [_error(exc.status, exc.code, rt.redact(exc.message))]
    except Exception as exc:  # noqa: BLE001 - the run's thread raised: the error a JSON response would carry
        status, code, _ = classify(exc)
        if status == 500:
            log.error("chat completion stream failed", exc_info=exc)
        return [_error(status, code, public_message(exc, rt.redact))]
    parts = ([] if started else [chunks.start(answer.run_id or "docqa")]) + chunks.answer(answer)
    return parts + ([chunks.usage(answer)] if include_usage else [])


def _error(status: int, code: str, message: str) -> dict[str, Any]:
    return body(code, message, status, "/v1/")


def _data(payload: dict[str, Any]) -> ServerSentEvent:
    return ServerSentEvent(json.dumps(payload, ensure_ascii=False))
