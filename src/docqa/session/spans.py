"""Where a cited span is in a document's new version, judged against the old version: unchanged at its
place, shifted with what is around it (an edit elsewhere moved it along), or not there as it was
(edited, moved away from its surroundings, or deleted).  The document store asks this while it writes
the new version, to mark stale exactly the answers whose cited span changed (docqa.session.sources)."""

from __future__ import annotations

import re

CONTEXT = 40  # characters of the nearest line of text either side that must still border a span carried along


def follow(old: str | None, new: str, start: int, end: int, quote: str) -> int | None:
    """The span's start in `new` when it is there as it was — at its place, or with the old text on one
    side of it still bordering it — else None (its answers go stale).  Without the old text only its
    place counts."""
    if new[start:end] == quote:
        return start
    if not quote or old is None or old[start:end] != quote or quote not in new:
        return None
    before, after = _before(old, start), _after(old, end)
    places = [m.start() + len(before) for m in re.finditer(re.escape(before + quote), new)] if before else []
    places += [m.start() for m in re.finditer(re.escape(quote + after), new)] if after else []
    return min(places, key=lambda p: abs(p - start)) if places else None


def _before(text: str, start: int) -> str:
    """What borders the span before it: the white space, then the end of the nearest line with text on it
    (at most CONTEXT characters of it); '' at the file's start."""
    last = len(text[:start].rstrip()) - 1
    if last < 0:
        return ""
    line = text.rfind("\n", 0, last) + 1
    return text[max(line, last + 1 - CONTEXT):start]


def _after(text: str, end: int) -> str:
    """What borders the span after it: the white space, then the start of the nearest line with text on it
    (at most CONTEXT characters of it); '' at the file's end."""
    first = len(text) - len(text[end:].lstrip())
    if first >= len(text):
        return ""
    line = text.find("\n", first)
    return text[end:min(len(text) if line == -1 else line, first + CONTEXT)]
