"""The OpenAI chat-completions format: a request's messages read as a question and its conversation,
an answer written as a completion (or its chunks), with the citations in the text and as data.

    messages  system / developer       ignored: docqa's own instructions hold the model to the documents
                                       (chat apps send "You are a helpful assistant" by default)
              user, assistant, ...     (question, answer) pairs: the conversation, its last turn condensed
              the last user message    the question
    reply     the checked answer with [n] markers, then a "Sources" block, one line per [n]
              `citations` (message, or the final chunk's delta): each cited span as data
              `docqa`: run_id, session_id, answerable, confidence, verification (not-found: answerable false)
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from docqa.errors import InputError
from docqa.types import Answer, Citation

MODEL = "docqa"  # every collection the key may read
AGENT = "docqa-agent"  # the same, answered by the agent (it explores with tools)
SOURCES = "Sources:"  # the heading of the block that follows the answer text
_SOURCES_BLOCK = re.compile(r"\n+\*\*Sources:\*\*\n.*\Z", re.S)
_CITATION_KEYS = ("n", "document_id", "path", "title", "section", "page", "line_start", "line_end", "char_start",
                  "char_end", "quote", "label")


@dataclass(frozen=True, slots=True)
class Asked:
    """A request's messages read as docqa reads a question."""

    question: str
    history: list[tuple[str, str]]  # the earlier (question, answer) pairs, oldest first


@dataclass(frozen=True, slots=True)
class ModelName:
    """A model id: `docqa`, `docqa/COLLECTION`, `docqa-agent` or `docqa-agent/COLLECTION`."""

    id: str
    collection: str | None
    mode: str | None  # None: the configured answer.mode


def parse_model(name: str) -> ModelName | None:
    """The collection and mode a model id names; None when it is not one of docqa's."""
    base, _, collection = name.partition("/")
    if base not in (MODEL, AGENT) or (name.endswith("/") and not collection):
        return None
    return ModelName(name, collection or None, "agent" if base == AGENT else None)


def model_ids(collections: Sequence[str]) -> list[str]:
    """GET /v1/models: `docqa`, `docqa-agent`, then one `docqa/COLLECTION` per collection the caller may read."""
    return [MODEL, AGENT, *(f"{MODEL}/{name}" for name in collections)]


def text_of(content: Any) -> str:
    """A message's content as text: a string, or the text parts of a list of parts (images are not read)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(str(p.get("text") or "") for p in content if isinstance(p, dict) and p.get("type") == "text")
    raise InputError("a message's content must be a string or a list of parts such as {\"type\": \"text\", \"text\": \"…\"}")


def read_messages(messages: Sequence[dict[str, Any]]) -> Asked:
    """The question (the last user message) and the conversation before it; system messages are ignored."""
    turns: list[tuple[str, str]] = []
    question: str | None = None
    for message in messages:
        role, text = message.get("role"), text_of(message.get("content")).strip()
        if role == "user":
            if question is not None:  # two user messages in a row: the earlier went unanswered
                turns.append((question, ""))
            question = text
        elif role == "assistant" and question is not None:
            turns.append((question, without_sources(text)))
            question = None
    if not question:
        raise InputError("the last message must be the user's question (role 'user', with text)")
    return Asked(question, [(q, a) for q, a in turns if a])


def without_sources(text: str) -> str:
    """An earlier reply without its Sources block (the conversation keeps what was said, not the list)."""
    return _SOURCES_BLOCK.sub("", text).strip()


def first_per_number(citations: Sequence[Citation]) -> list[Citation]:
    """One citation per source number, its first: a Sources line per [n], not per quoted sentence."""
    first: dict[int, Citation] = {}
    for c in citations:
        first.setdefault(c.n, c)
    return list(first.values())


def location(c: Citation) -> str:
    """`docs/config.md §Database, p. 3, L12–18`: the path (or URL), section, page and lines."""
    parts = [c.path + (f" §{c.section}" if c.section else "")]
    if c.page is not None:
        parts.append(f"p. {c.page}")
    if c.line_start:
        parts.append(f"L{c.line_start}" + (f"–{c.line_end}" if c.line_end and c.line_end != c.line_start else ""))
    return ", ".join(parts)


def sources_block(citations: Sequence[Citation]) -> str:
    """The Sources block that follows the answer (markdown: chat apps render it), or "" without citations."""
    if not citations:
        return ""
    lines = []
    for c in first_per_number(citations):
        quote = " ".join(c.quote.split())
        quote = quote if len(quote) <= 160 else quote[:157] + "…"
        lines.append(f"- [{c.n}] {location(c)}" + (f" — “{quote}”" if quote else ""))
    return f"\n\n**{SOURCES}**\n" + "\n".join(lines)


def citations_data(citations: Sequence[Citation]) -> list[dict[str, Any]]:
    """The citations as data (every cited span; several may share a number)."""
    return [{k: v for k, v in c.to_dict().items() if k in _CITATION_KEYS} for c in citations]


def about(answer: Answer) -> dict[str, Any]:
    """docqa's own fields, beside OpenAI's: how the answer stands."""
    return {"run_id": answer.run_id, "session_id": answer.session_id, "status": answer.status,
            "query": answer.retrieval.query,  # the question searched: a follow-up as it was understood
            "answerable": answer.answerable, "confidence": answer.confidence,
            "verification": answer.verification.status, "mode": answer.mode, "notes": list(answer.notes)}


def usage(answer: Answer | None) -> dict[str, int]:
    """OpenAI's usage: the tokens of every model call the answer took (0 for an answer without a model)."""
    used = answer.usage if answer is not None else {}
    prompt, completion = int(used.get("prompt_tokens") or 0), int(used.get("completion_tokens") or 0)
    return {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion}


def reply_text(answer: Answer) -> str:
    return answer.answer + sources_block(answer.citations)


def completion(answer: Answer, model: str) -> dict[str, Any]:
    """A whole (non-streamed) chat completion."""
    message = {"role": "assistant", "content": reply_text(answer), "citations": citations_data(answer.citations)}
    return {"id": completion_id(answer), "object": "chat.completion", "created": int(time.time()), "model": model,
            "choices": [{"index": 0, "message": message, "finish_reason": "stop", "logprobs": None}],
            "usage": usage(answer), "docqa": about(answer)}


def completion_id(answer: Answer | None) -> str:
    return f"chatcmpl-{answer.run_id if answer is not None and answer.run_id else 'docqa'}"


class Chunks:
    """The chunks of one streamed completion (`chat.completion.chunk`), all with the same id."""

    def __init__(self, model: str):
        self.model, self.id, self.created = model, "chatcmpl-docqa", int(time.time())

    def chunk(self, delta: dict[str, Any], finish: str | None = None, **extra: Any) -> dict[str, Any]:
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [{"index": 0, "delta": delta, "finish_reason": finish, "logprobs": None}], **extra}

    def start(self, run_id: str) -> dict[str, Any]:
        self.id = f"chatcmpl-{run_id}"
        return self.chunk({"role": "assistant", "content": ""})

    def answer(self, answer: Answer) -> list[dict[str, Any]]:
        """The checked answer with its Sources block, then the final chunk with the citations as data."""
        return [self.chunk({"content": reply_text(answer)}),
                self.chunk({"citations": citations_data(answer.citations)}, "stop", docqa=about(answer))]

    def usage(self, answer: Answer | None) -> dict[str, Any]:
        """The last chunk when the client asked for usage (stream_options.include_usage): no choices."""
        return {"id": self.id, "object": "chat.completion.chunk", "created": self.created, "model": self.model,
                "choices": [], "usage": usage(answer)}


__all__ = ["AGENT", "MODEL", "Asked", "Chunks", "ModelName", "about", "citations_data", "completion", "model_ids",
           "parse_model", "read_messages", "sources_block", "usage", "without_sources"]
