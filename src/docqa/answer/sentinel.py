"""The prompts' sentinel words (NOT_FOUND; the checker's VERIFIED and REJECTED) in a model's answer:
read here, in one place, and never shown to anyone.

A reply that says NOT_FOUND is the not-found outcome (`said_not_found`); a sentinel written on its
own — a line, or a sentence of its own before or after the answer — is taken out of the text that is
cited and published (`clean`); a draft streamed to the user goes through `DraftFilter`, which holds
back a word that may become a sentinel until it is known not to be one.  A sentinel inside a
sentence ("the API returns `NOT_FOUND` [1]") is the documents' word, and stays.
"""

from __future__ import annotations

import re

from docqa.answer.prompts import NOT_FOUND_TOKEN

# NOT_FOUND in any case (nobody writes it in prose); the others only in capitals (English words otherwise)
_WORD = rf"(?:(?i:{NOT_FOUND_TOKEN})|NOT FOUND|VERIFIED|REJECTED)"
_MARKS = "*_`\"'“”‘’"
_MARKUP = "[" + re.escape(_MARKS) + "]*"
# on its own: at the start of a line or after a sentence's end, then only punctuation before the
# line's end or the next sentence (the space before it is its own group: a streamed draft has sent it)
_ALONE = re.compile(rf"(?:^|(?<=[.!?。！？\]】）)]))(?P<pad>[ \t]*){_MARKUP}{_WORD}{_MARKUP}[.:：。!！]?(?![A-Za-z0-9_])",
                    re.MULTILINE)
_SAID = re.compile(rf"^\s*{_MARKUP}(?:(?i:{NOT_FOUND_TOKEN})|NOT FOUND)(?![A-Za-z0-9_])")
_ONLY_NOT_FOUND = re.compile(r"^\W*not\s+found\W*$", re.IGNORECASE)
_EMPTY = re.compile(r"^[\s\W]*$")  # nothing but punctuation, markup and citation brackets
_MARKERS = re.compile(r"\[\d+(?:\s*[,，、]\s*\d+)*\]|【\d+】")
_PREFIXES = (NOT_FOUND_TOKEN, "NOT FOUND", "VERIFIED", "REJECTED")
_LONGEST = max(len(p) for p in _PREFIXES) + 2  # with a little markup before it


def said_not_found(text: str) -> bool:
    """The reply is the NOT_FOUND answer: it starts with the token, is "not found", or holds nothing
    but sentinels (and citation markers)."""
    body = text.strip()
    if _SAID.match(body) or _ONLY_NOT_FOUND.match(body):
        return True
    return bool(body) and _EMPTY.match(_MARKERS.sub("", clean(body))) is not None


def clean(text: str) -> str:
    """The text without the sentinels written on their own (the rest as written, trimmed)."""
    def cut(m: re.Match) -> str:  # keep the space before it only when a word follows directly
        rest = text[m.end():m.end() + 1]
        return m.group("pad") if m.start() and rest and not rest.isspace() else ""

    return _ALONE.sub(cut, text).strip()


def has_sentinel(text: str) -> bool:
    """A sentinel written on its own is in `text` (what a published answer never holds)."""
    return _ALONE.search(text) is not None


class DraftFilter:
    """A streamed draft as the user may see it: `feed(delta)` returns what can be shown now, `flush()`
    the rest when the draft is complete.  A trailing piece that may still become a sentinel ("NOT_F",
    "**") waits for the next delta."""

    def __init__(self) -> None:
        self.raw = ""
        self.sent = ""

    def feed(self, delta: str) -> str:
        self.raw += delta
        return self._emit(len(self.raw) - _pending(self.raw))

    def flush(self) -> str:
        return self._emit(len(self.raw))

    def _emit(self, upto: int) -> str:
        visible = _ALONE.sub(lambda m: m.group("pad"), self.raw[:upto])
        piece = visible[len(self.sent):]  # what was sent is never unsaid (held back, it never needs to be)
        self.sent = visible if len(visible) >= len(self.sent) else self.sent
        return piece


def _pending(raw: str) -> int:
    """Characters at the end of `raw` that may begin a sentinel (markup included), held back."""
    for size in range(min(len(raw), _LONGEST), 0, -1):
        at = len(raw) - size
        bare = raw[at:].upper().lstrip(_MARKS)
        if (at == 0 or not raw[at - 1].isalnum()) and any(p.startswith(bare) for p in _PREFIXES):
            return size
    return 0
