"""The conversation so far, cut to size for condensing a follow-up question into a standalone one."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from docqa.types import FALLBACK, SUCCESS, RunRecord

MAX_SOURCES = 5
_MARKER = re.compile(r"\s*\[\d+(?:\s*[,，]\s*\d+)*\]")  # citation markers: [1], [2, 3]
_SENTENCE_END = re.compile(r"[.!?。！？](?=\s|$)|[。！？]")
_ELLIPSIS = "…"


def previous_turn(runs: Sequence[RunRecord], max_chars: int) -> dict[str, Any] | None:
    """The last answered turn of a session (runs oldest first), at most `max_chars` in all.

    Returns {question, answer_summary, sources}: the answer trimmed to `max_chars // 2` at a
    sentence or word boundary with its citation markers removed, and up to five distinct cited
    paths as room allows.  Failed and cancelled runs are skipped; None when nothing was answered.
    """
    run = next((r for r in reversed(runs) if r.status in (SUCCESS, FALLBACK)), None)
    if run is None or max_chars <= 0:
        return None
    answer = run.answer if run.answer is not None else (run.result or {}).get("answer") or ""
    summary = trim(_MARKER.sub("", answer), max_chars // 2)
    # the question as it was searched: a follow-up's standalone form carries its subject on to the next turn
    question = trim(run.standalone or run.question, max_chars - len(summary))
    room = max_chars - len(summary) - len(question)
    sources: list[str] = []
    for path in _cited(run.result):
        if len(sources) == MAX_SOURCES or len(path) > room:
            break
        sources.append(path)
        room -= len(path)
    return {"question": question, "answer_summary": summary, "sources": sources}


def given_turns(turns: Sequence[tuple[str, str]]) -> list[RunRecord]:
    """A conversation a client keeps itself (an OpenAI-compatible chat app sends it whole with each
    question), as the answered runs `previous_turn` reads: (question, answer) pairs, oldest first."""
    return [RunRecord(id=f"given-{i}", session_id="given", question=q, status=SUCCESS, answer=a)
            for i, (q, a) in enumerate(turns) if q.strip() and a.strip()]


def trim(text: str, limit: int) -> str:
    """`text` in at most `limit` characters: whole sentences when they fill enough of it, else cut
    at a word boundary (or anywhere, for text without spaces) and marked with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= limit:
        return text
    if limit <= len(_ELLIPSIS):
        return text[:max(limit, 0)]
    # One character more, so "3." of "3.5" is not taken for a sentence end.
    ends = [m.end() for m in _SENTENCE_END.finditer(text[: limit + 1]) if m.end() <= limit]
    if ends and ends[-1] >= limit // 3:
        return text[: ends[-1]]
    head = text[: limit - len(_ELLIPSIS)]
    space = head.rfind(" ")
    if space >= limit // 3:
        head = head[:space]
    return head.rstrip(" ,;:，；、") + _ELLIPSIS


def _cited(result: dict[str, Any] | None) -> list[str]:
    paths = [c.get("path") for c in (result or {}).get("citations") or [] if isinstance(c, dict)]
    return list(dict.fromkeys(p for p in paths if p))
