"""`ScriptedChat`: a chat model that plays back queued replies and records every call.

The one fake at the LLM boundary, for tests in process (tests/llm/scripted_server.py is the same
script served over HTTP, for tests that need a real server).  A reply is:

- a string: the model's text;
- a dict: ``text``, ``tool_calls`` (``[{"name": ..., "arguments": dict or JSON text, "id": ...}]``),
  ``usage`` (``(prompt, completion)``), ``finish_reason`` ("length": cut off by the token limit);
- an exception: raised by the call (e.g. ``LLMError("server down")``);
- a function of the request, as an OpenAI request body (``{"model", "messages": [{"role", "content"}, ...],
  "tools", ...}``, as tests/llm/scripted_server.py passes it): returns one of the above (a reply that
  depends on what was asked; the same function serves both fakes).

When the queue is empty every call gets ``when_empty`` (the text "(script exhausted)").
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from docqa.llm.base import ChatModel, Delta, Message, ToolCall, Usage



@dataclass(slots=True)
class Call:
    """One call to the model: what it was sent."""

    messages: list[Message]
    tools: list[dict] | None
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def prompt(self) -> str:
        """Every message's text, one after the other (what a test searches for a source or an instruction)."""
        return "\n".join(m.content or "" for m in self.messages)

    @property
    def tool_names(self) -> list[str]:
        return [t.get("function", {}).get("name", "") for t in self.tools or []]


Reply = str | dict[str, Any] | BaseException | Callable[[dict[str, Any]], Any]
EXHAUSTED: dict[str, Any] = {"text": "(script exhausted)"}


class ScriptedChat(ChatModel):
    """Replies from a queue (`enqueue`), in order; `calls` holds what each call was sent."""

    def __init__(self, replies: Iterable[Reply] = (), *, name: str = "scripted", supports_tools: bool = True,
                 when_empty: Reply = EXHAUSTED):
        self.name = name
        self.supports_tools = supports_tools
        self.replies: list[Reply] = list(replies)  # the queue: a test may add to it or insert into it
        self.calls: list[Call] = []
        self.when_empty = when_empty

    def __enter__(self) -> ScriptedChat:
        return self

    def enqueue(self, *replies: Reply) -> ScriptedChat:
        self.replies.extend(replies)
        return self

    @property
    def requests(self) -> list[dict[str, Any]]:
        """The calls as OpenAI request bodies (as tests/llm/scripted_server.py records them)."""
        return [_body(self, call) for call in self.calls]

    def stream(self, messages: list[Message], tools: list[dict] | None = None, **options: Any) -> Iterator[Delta]:
        call = Call(list(messages), tools if tools and self.supports_tools else None, dict(options))
        self.calls.append(call)
        reply = self.replies.pop(0) if self.replies else self.when_empty
        if callable(reply) and not isinstance(reply, BaseException):
            reply = reply(_body(self, call))
        if isinstance(reply, BaseException):
            raise reply
        yield from _deltas({"text": reply} if isinstance(reply, str) else dict(reply))


def _deltas(reply: dict[str, Any]) -> Iterator[Delta]:
    text = reply.get("text") or ""
    for start in range(0, len(text), 7):  # in pieces, as a server streams
        yield Delta(text=text[start : start + 7])
    calls = reply.get("tool_calls") or []
    for index, spec in enumerate(calls):
        arguments = spec["arguments"] if isinstance(spec["arguments"], str) else json.dumps(spec["arguments"])
        yield Delta(tool_call=ToolCall(spec.get("id", f"call_{index}"), spec["name"], arguments))
    prompt, completion = reply.get("usage", (10, 5))
    yield Delta(usage=Usage(prompt, completion))
    yield Delta(finish_reason=reply.get("finish_reason") or ("tool_calls" if calls else "stop"))


def _body(model: ScriptedChat, call: Call) -> dict[str, Any]:
    body: dict[str, Any] = {"model": model.name, "messages": [m.to_openai() for m in call.messages], **call.options}
    if call.tools:
        body["tools"] = call.tools
    return body
