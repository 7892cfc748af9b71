"""A plain-text reply that stops at a deadline (for short side tasks such as reranking)."""

from __future__ import annotations

import time

from docqa.llm.base import ChatModel, Message


def reply_within(model: ChatModel, system: str, user: str, max_tokens: int, deadline: float) -> str:
    """The model's reply text at temperature 0; TimeoutError once `deadline` (time.monotonic()) passes
    while it is still writing (closing the stream frees the server)."""
    parts: list[str] = []
    stream = model.stream([Message("system", system), Message("user", user)], max_tokens=max_tokens, temperature=0.0)
    try:
        for delta in stream:
            parts.append(delta.text)
            if time.monotonic() > deadline:
                raise TimeoutError("the model was still writing at the deadline")
    finally:
        stream.close()  # type: ignore[attr-defined]  # every model's stream is a generator
    return "".join(parts)
