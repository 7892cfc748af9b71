"""A question of several parts, answered part by part.

"Which 2.39.x release carries the fix for CVE-2023-29007, and what kind of attack did that bug allow?"
asks two things, often answered in two files; "我用 shutdown +30 安排半小时后关机。普通用户从什么时候开始就登录不进来了？
靠的是什么文件？" asks two things after a statement that sets the scene.  Ranked as one question, each
sentence holds only half of the question's words, and the answerer quotes neither or abstains.  `split`
cuts such a question into parts; each part is retrieved and ranked with the statements that set the scene
and the part before it (a later part often says "that bug", "这种文件"), and answered on its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from docqa.text.language import HAN
from docqa.text.segment import query_terms

# A sentence ends at a question mark, a Chinese full stop or exclamation mark, or a full stop before a space.
_SENTENCE = re.compile(r"[^?？。！!]*?(?:[?？。！!]|\.(?=\s)|$)", re.S)
# "…, and what/which/where… ?" joins a second question to the first inside one sentence.
_AND_ASKS = re.compile(r",?\s+and\s+(?=(?:what|which|where|when|why|who|whom|whose|how|is|are|was|were|does|do|did|can|could|should|will)\b)",
                       re.IGNORECASE)
MAX_PARTS = 3  # more than this is a list of questions better asked one at a time
_MIN_TERMS = 2  # a part with fewer content words ("why?") is no question of its own
_MIN_JOINED = 3  # nor is a piece of "…, and …?" with fewer: it shares the other piece's predicate


@dataclass(frozen=True, slots=True)
class Part:
    question: str  # the part as asked
    query: str  # what it is retrieved and ranked with: the scene-setting statements, the part before, the part


def split(question: str) -> list[Part]:
    """The question's parts, or [] when it asks one thing (or more than MAX_PARTS)."""
    context: list[str] = []
    asked: list[tuple[str, str]] = []  # (part, the scene-setting statements before it)
    for sentence in sentences(question):
        if sentence.endswith(("?", "？")):
            pieces = [p.strip(" ,，") for p in _AND_ASKS.split(sentence)]
            if len(pieces) > 1 and min(len(query_terms(p)) for p in pieces) < _MIN_JOINED:
                pieces = [sentence]  # "which setting, and which value, makes …": one question with two blanks
            asked += [(_as_question(p), " ".join(context)) for p in pieces if p]
        else:
            context.append(sentence)
    asked = [(p, c) for p, c in asked if len(query_terms(p)) >= _MIN_TERMS]
    if not 2 <= len(asked) <= MAX_PARTS:
        return []
    parts, before = [], ""
    for text, scene in asked:
        parts.append(Part(text, " ".join(x for x in (scene, before, text) if x)))
        before = text
    return parts


def sentences(text: str) -> list[str]:
    """The sentences of a question (statements that set the scene, and questions)."""
    return [m.group().strip() for m in _SENTENCE.finditer(text) if m.group().strip()]


def _as_question(piece: str) -> str:
    """A piece cut from a longer sentence keeps or gains its question mark."""
    if piece.endswith(("?", "？")):
        return piece
    return piece + ("？" if re.search(f"[{HAN}]$", piece) else "?")
