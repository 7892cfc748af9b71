"""One run's bookkeeping: events, the audit trace, timings, token usage, cancellation."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from docqa.llm.base import ChatModel, ChatResult, Message, ToolCall, Usage
from docqa.types import Event


class Cancelled(Exception):
    """The run was cancelled (a client went away); no further model calls are made."""


class RunContext:
    """Collects what a run did (for the audit record) and emits its events."""

    def __init__(self, emit: Callable[[Event], None] | None = None, cancel: threading.Event | None = None,
                 prompt_price: float = 0.0, completion_price: float = 0.0):
        self._emit = emit
        self.cancel = cancel or threading.Event()
        self.trace: list[dict[str, Any]] = []
        self.timings: dict[str, float] = {}
        self.usage = Usage()
        self.calls = 0
        self.prices = (prompt_price, completion_price)
        self.started = time.perf_counter()

    def emit(self, type_: str, **data: Any) -> None:
        if self._emit is not None:
            self._emit(Event(type_, data))

    def check_cancelled(self) -> None:
        if self.cancel.is_set():
            raise Cancelled()

    @contextmanager
    def stage(self, name: str, **detail: Any) -> Iterator[dict[str, Any]]:
        """Time a stage, announce it, and record it in the trace (the caller may add detail)."""
        self.check_cancelled()
        self.emit("status", phase=name)
        entry: dict[str, Any] = {"stage": name, "at": round(time.perf_counter() - self.started, 4), **detail}
        t0 = time.perf_counter()
        try:
            yield entry
        finally:
            elapsed = time.perf_counter() - t0
            self.timings[name] = self.timings.get(name, 0.0) + elapsed
            entry["seconds"] = round(elapsed, 4)
            self.trace.append(entry)

    def call(self, model: ChatModel, stage: str, messages: list[Message], on_text: Callable[[str], None] | None = None,
             tools: list[dict] | None = None, **options: Any) -> ChatResult:
        """One model call, streamed; recorded whole (messages, reply, tool calls, usage) for audit and replay."""
        self.check_cancelled()
        t0 = time.perf_counter()
        record: dict[str, Any] = {"stage": stage, "model_call": model.name, "messages": [m.to_openai() for m in messages]}
        if tools:
            record["tools"] = [t["function"]["name"] for t in tools]
        self.trace.append(record)
        text: list[str] = []
        calls: list[ToolCall] = []
        usage, finish = Usage(), None
        try:
            for delta in model.stream(messages, tools, **options):
                if self.cancel.is_set():
                    record["cancelled"] = True
                    raise Cancelled()
                if delta.text:
                    text.append(delta.text)
                    if on_text is not None:
                        on_text(delta.text)
                if delta.tool_call is not None:
                    calls.append(delta.tool_call)
                if delta.usage is not None:
                    usage = usage + delta.usage
                finish = delta.finish_reason or finish
        except Exception as exc:
            record["error"] = str(exc)
            raise
        finally:
            self.calls += 1
            record["seconds"] = round(time.perf_counter() - t0, 4)
        self.usage = self.usage + usage
        record.update(reply="".join(text), finish_reason=finish,
                      usage={"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens})
        if calls:
            record["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
        return ChatResult("".join(text), calls, usage, finish)

    @property
    def cost(self) -> float:
        return (self.usage.prompt_tokens * self.prices[0] + self.usage.completion_tokens * self.prices[1]) / 1e6

    def usage_dict(self) -> dict[str, Any]:
        cost = self.cost
        return {"prompt_tokens": self.usage.prompt_tokens, "completion_tokens": self.usage.completion_tokens,
                "total_tokens": self.usage.total_tokens, "model_calls": self.calls, "cost": round(cost, 6)}
