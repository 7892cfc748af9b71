"""One run's bookkeeping: the audit trace, timings, token usage, cancellation and time limit; and
the model call as a generator of `draft` events (what the model writes is a draft until checked)."""

from __future__ import annotations

import time
from collections.abc import Generator, Iterator
from contextlib import contextmanager
from typing import Any

from docqa.events import DraftDelta, Event
from docqa.llm.base import ChatModel, ChatResult, Message, Usage
from docqa.flow.control import Control


class Cancelled(Exception):
    """The run was cancelled (or ran out of time: `RunContext.timed_out`); no further model calls are made."""


class RunContext:
    """Collects what a run did (for the audit record); stops it when cancelled or out of time."""

    def __init__(self, control: Control | None = None, prompt_price: float = 0.0, completion_price: float = 0.0,
                 timeout: float | None = None):
        self.control = control or Control()
        self.trace: list[dict[str, Any]] = []
        self.timings: dict[str, float] = {}
        self.usage = Usage()
        self.calls = 0
        self.drafts = 0  # drafts of the answer shown so far (each `draft` event names its number)
        self.prices = (prompt_price, completion_price)
        self.apart: tuple[Usage, float] = (Usage(), 0.0)  # tokens priced by another model's prices, and their cost
        self.started = time.perf_counter()
        self.timeout = timeout
        self.deadline = self.started + timeout if timeout else None
        self.timed_out = False  # stopped by its time limit (not cancelled by someone)

    @property
    def cancelled(self) -> bool:
        if self.deadline is not None and not self.control.cancelled and time.perf_counter() >= self.deadline:
            self.trace.append({"stage": "time_limit", "seconds": round(time.perf_counter() - self.started, 4)})
            self.timed_out = True
            self.control.cancel()
        return self.control.cancelled

    def check_cancelled(self) -> None:
        if self.cancelled:
            raise Cancelled()

    @contextmanager
    def stage(self, name: str, **detail: Any) -> Iterator[dict[str, Any]]:
        """Time a stage and record it in the trace (the caller may add detail, and yields its status)."""
        self.check_cancelled()
        entry: dict[str, Any] = {"stage": name, "at": round(time.perf_counter() - self.started, 4), **detail}
        t0 = time.perf_counter()
        try:
            yield entry
        finally:
            elapsed = time.perf_counter() - t0
            self.timings[name] = self.timings.get(name, 0.0) + elapsed
            entry["seconds"] = round(elapsed, 4)
            self.trace.append(entry)

    def call(self, model: ChatModel, stage: str, messages: list[Message], *, stream: bool = False,
             tools: list[dict] | None = None, **options: Any) -> Generator[Event, None, ChatResult]:
        """One model call; with `stream`, each text delta is yielded as a `draft` event as it arrives.
        Recorded whole (messages, reply, tool calls, usage) for audit and replay: `reply = yield from ctx.call(...)`."""
        self.check_cancelled()
        t0 = time.perf_counter()
        if self.deadline is not None:  # a call blocked past the time limit is given up then, not at llm.timeout
            options = {**options, "timeout": self.deadline - t0}
        record: dict[str, Any] = {"stage": stage, "model_call": model.name, "messages": [m.to_openai() for m in messages]}
        if tools:
            record["tools"] = [t["function"]["name"] for t in tools]
        self.trace.append(record)
        text, calls, usage, finish = [], [], Usage(), None
        top: dict[str, float] = {}
        try:
            for delta in model.stream(messages, tools, **options):
                if self.cancelled:
                    raise Cancelled()
                if delta.text:
                    text.append(delta.text)
                    if stream:
                        yield DraftDelta(delta=delta.text)
                if delta.tool_call is not None:
                    calls.append(delta.tool_call)
                if delta.usage is not None:
                    usage = usage + delta.usage
                finish = delta.finish_reason or finish
                top = top or delta.top or {}
        except (Cancelled, GeneratorExit, KeyboardInterrupt):
            record["cancelled"] = True
            raise
        except Exception as exc:
            record["error"] = str(exc)
            if self.cancelled:  # it failed because the time limit passed (or someone cancelled meanwhile)
                raise Cancelled() from exc
            raise
        finally:
            self.calls += 1
            record["seconds"] = round(time.perf_counter() - t0, 4)
        self.usage = self.usage + usage
        record.update(reply="".join(text), finish_reason=finish,
                      usage={"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens})
        if calls:
            record["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
        if top:
            record["top"] = {k: round(v, 4) for k, v in top.items()}
        return ChatResult("".join(text), calls, usage, finish, top)

    def price_apart(self, usage: Usage, cost: float) -> None:
        """`usage` (already counted in `self.usage`) cost `cost` at another model's prices (the escalation model)."""
        self.apart = (self.apart[0] + usage, self.apart[1] + cost)

    @property
    def cost(self) -> float:
        own = Usage(self.usage.prompt_tokens - self.apart[0].prompt_tokens,
                    self.usage.completion_tokens - self.apart[0].completion_tokens)
        return (own.prompt_tokens * self.prices[0] + own.completion_tokens * self.prices[1]) / 1e6 + self.apart[1]

    def usage_dict(self) -> dict[str, Any]:
        cost = self.cost
        return {"prompt_tokens": self.usage.prompt_tokens, "completion_tokens": self.usage.completion_tokens,
                "total_tokens": self.usage.total_tokens, "model_calls": self.calls, "cost": round(cost, 6)}
