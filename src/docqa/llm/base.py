"""The `ChatModel` interface: stream a reply as deltas (text, tool calls, usage).

Subclasses implement `stream`; the base class builds `complete` (the whole reply) on it.
Messages are the OpenAI chat shape, the lingua franca of every server docqa talks to.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any


@dataclass(slots=True)
class ToolCall:
    """A tool the model asked for; `arguments` is the JSON text the model wrote (maybe invalid)."""

    id: str
    name: str
    arguments: str


@dataclass(slots=True)
class Usage:
    prompt_tokens: int = 0
    completion_tokens: int = 0

    @property
    def total_tokens(self) -> int:
        return self.prompt_tokens + self.completion_tokens

    def __add__(self, other: Usage) -> Usage:
        return Usage(self.prompt_tokens + other.prompt_tokens, self.completion_tokens + other.completion_tokens)


@dataclass(slots=True)
class Message:
    role: str  # system | user | assistant | tool
    content: str | None = None
    tool_calls: list[ToolCall] = field(default_factory=list)
    tool_call_id: str | None = None

    def to_openai(self) -> dict[str, Any]:
        out: dict[str, Any] = {"role": self.role, "content": self.content}
        if self.tool_calls:
            out["tool_calls"] = [{"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                                 for c in self.tool_calls]
        if self.tool_call_id is not None:
            out["tool_call_id"] = self.tool_call_id
        return out


@dataclass(slots=True)
class Delta:
    """One piece of a streamed reply: text, a finished tool call, usage, or the finish reason."""

    text: str = ""
    tool_call: ToolCall | None = None
    usage: Usage | None = None
    finish_reason: str | None = None
    top: dict[str, float] | None = None  # asked with `logprobs`: the first token's likeliest tokens and their log probabilities


@dataclass(slots=True)
class ChatResult:
    text: str
    tool_calls: list[ToolCall]
    usage: Usage
    finish_reason: str | None  # "stop", "tool_calls", "length" (cut off by the token limit), ...
    top: dict[str, float] = field(default_factory=dict)  # asked with `logprobs`: the first token's alternatives (Delta.top)

    @property
    def truncated(self) -> bool:
        return self.finish_reason == "length"


class ChatModel(ABC):
    """A chat model that streams."""

    name: str = "chat-model"
    supports_tools: bool = True  # the server takes tool specs (OpenAI tool calling)
    reliable_tools: bool = True  # it also calls them reliably (docqa.llm.capability decides)
    small: bool = False  # under 7B parameters: fewer, shorter sources (docqa.llm.capability)

    @abstractmethod
    def stream(self, messages: list[Message], tools: list[dict] | None = None, **options: Any) -> Iterator[Delta]:
        """The reply as deltas; tool calls are yielded whole, once their arguments are complete.
        Option `timeout`: wait at most this many seconds for each part of the reply (a run's time left;
        a model that cannot bound its wait ignores it); other options go to the model (temperature, …)."""

    def complete(self, messages: list[Message], tools: list[dict] | None = None, **options: Any) -> ChatResult:
        """The whole reply."""
        text: list[str] = []
        calls: list[ToolCall] = []
        usage = Usage()
        finish = None
        for delta in self.stream(messages, tools, **options):
            text.append(delta.text)
            if delta.tool_call is not None:
                calls.append(delta.tool_call)
            if delta.usage is not None:
                usage = usage + delta.usage
            finish = delta.finish_reason or finish
        return ChatResult("".join(text), calls, usage, finish)

    def close(self) -> None:
        """Release connections."""

    def __enter__(self) -> ChatModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
