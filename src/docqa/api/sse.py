"""Server-Sent Events: the answer's event stream, in protocol order, over sse-starlette.

    metadata → (status | draft | draft_rejected)* → content → citations → failure? → done {SUCCESS | FALLBACK | FAILED}

`draft {n, delta}` is what the model writes, before the checks: never the answer.  A draft the checks
reject is followed by `draft_rejected {n, reasons}`; `content` carries the published answer.

The run itself is iterated by a worker thread, which puts each event on this response's channel
(crossing into asyncio is the transport's job; the answering is the run's).  `EventOrder` is the state
machine that enforces it (NEW → OPEN → TERMINAL | DISCONNECTED): an event out of order is not sent
(and is logged: it is a bug in the core).  After `done` the only event allowed is the `metadata` of
the next answer, a follow-up queued while the run was live; the stream ends when the run does.  A
run cancelled (by POST /runs/{id}/cancel) ends the stream without `done`: CANCELLED is recorded,
never sent.  A run that outlives its time limit (api.request_timeout, given to the run: the core's
one deadline) ends with the run's own `failure {code: timeout}` and `done FAILED`, as recorded.

Why sse-starlette rather than a bare StreamingResponse: it watches the connection for the client's
disconnect while the generator waits for the next event and cancels the generator then (which
stops the run at once), sets the headers proxies need (no caching, no buffering), and encodes
multi-line data correctly.  Its periodic ping is off: a comment is sent only after a pause of
`api.keepalive_seconds`, so a busy stream carries nothing but events.
"""

from __future__ import annotations

import asyncio
import enum
import json
import logging
from collections.abc import AsyncIterator, Callable
from concurrent.futures import Future
from dataclasses import replace
from typing import Any

from sse_starlette import EventSourceResponse, ServerSentEvent

from docqa.flow.control import Control
from docqa.api.errors import INTERNAL
from docqa.events import Done, Event, Failure
from docqa.types import FAILED

log = logging.getLogger("docqa.api")

END = object()  # put on the channel when the run's thread is finished


class StreamState(enum.Enum):
    NEW = "new"  # nothing sent yet
    OPEN = "open"  # an answer is streaming
    TERMINAL = "terminal"  # its `done` was sent
    DISCONNECTED = "disconnected"  # the client went away: nothing more is sent


class OrderError(ValueError):
    """An event the protocol does not allow at this point of the stream."""


# Where each event may come in an answer: metadata, then status, drafts and content interleaved,
# citations once, failure at most once, done.  An event may not come after one of a higher rank.
_RANK = {"metadata": 0, "status": 1, "draft": 1, "draft_rejected": 1, "content": 1, "citations": 2, "failure": 3, "done": 4}


class EventOrder:
    """The stream's state machine: `accept(type)` moves it on or raises OrderError."""

    def __init__(self) -> None:
        self.state = StreamState.NEW
        self._rank = -1

    def accept(self, kind: str) -> None:
        if kind not in _RANK:
            raise OrderError(f"unknown event type {kind!r}")
        if self.state is StreamState.DISCONNECTED:
            raise OrderError(f"{kind} after the client disconnected")
        if self.state in (StreamState.NEW, StreamState.TERMINAL):
            if kind != "metadata":
                raise OrderError(f"{kind} before metadata" if self.state is StreamState.NEW else f"{kind} after done")
            self.state, self._rank = StreamState.OPEN, 0
            return
        rank = _RANK[kind]
        if kind == "metadata" or rank < self._rank or (rank == self._rank and rank > 1):
            raise OrderError(f"{kind} after {self._last()}")
        self._rank = rank
        if kind == "done":
            self.state = StreamState.TERMINAL

    def allows(self, kind: str) -> bool:
        """Accept `kind` if it is in order; False (nothing changes) when it is not."""
        try:
            self.accept(kind)
        except OrderError as exc:
            log.warning("SSE event dropped: %s", exc)
            return False
        return True

    def disconnect(self) -> None:
        self.state = StreamState.DISCONNECTED

    def _last(self) -> str:
        return next(k for k, r in reversed(_RANK.items()) if r == self._rank) if self._rank > 0 else "metadata"


def encode(event: Event, redact: Callable[[str], str] = str) -> ServerSentEvent:
    return ServerSentEvent(json.dumps(public_event(event, redact), ensure_ascii=False), event=event.type)


def public_event(event: Event, redact: Callable[[str], str] = str) -> dict[str, Any]:
    """An event's data as a client may see it: a run's internal error is not described, and the
    server's paths and service URLs are taken out of failure messages."""
    if isinstance(event, Failure):
        message = event.message or ""
        event = replace(event, message=INTERNAL if message.startswith("internal error") else redact(message))
    return event.payload()


class AnswerStream:
    """One answer's events, from the worker thread's channel to the client, in order."""

    def __init__(self, channel: asyncio.Queue, future: Future, control: Control, keepalive: float,
                 gauge: Any = None, redact: Callable[[str], str] = str):
        self.channel, self.future, self.control, self.redact = channel, future, control, redact
        self.keepalive, self.gauge = keepalive, gauge  # gauge: open streams (metrics)
        self.order = EventOrder()

    def response(self, first: Any) -> EventSourceResponse:
        return EventSourceResponse(self.events(first), ping=0, headers={"Cache-Control": "no-cache"})

    async def events(self, item: Any) -> AsyncIterator[ServerSentEvent]:
        if self.gauge is not None:
            self.gauge.inc()
        try:
            while item is not END:
                if item is None:  # a pause: keep the connection warm
                    yield ServerSentEvent(comment="keep-alive")
                elif self.order.allows(item.type):
                    yield encode(item, self.redact)
                item = await self._next()
            for event in self._crashed():
                yield event
        except BaseException:  # the client went away (the generator is cancelled) or the send failed
            self.order.disconnect()
            raise
        finally:
            self.control.cancel()  # a no-op when the run has ended; else it stops before the next model call
            if self.gauge is not None:
                self.gauge.dec()

    async def _next(self) -> Any:
        try:
            return await asyncio.wait_for(self.channel.get(), timeout=self.keepalive)
        except TimeoutError:
            return None

    def _crashed(self) -> list[ServerSentEvent]:
        """The run's thread raised outside the core's own handling: end the answer as FAILED."""
        exc = self.future.exception() if self.future.done() else None
        if exc is None:
            return []
        log.error("answer stream failed", exc_info=exc)
        return self._fail("internal", INTERNAL)

    def _fail(self, code: str, message: str) -> list[ServerSentEvent]:
        if self.order.state is not StreamState.OPEN:
            return []
        events = [Failure(code=code, message=message), Done(status=FAILED)]
        return [encode(e) for e in events if self.order.allows(e.type)]
