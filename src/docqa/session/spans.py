"""Where a cited span is in a document's new version, judged against the old version: unchanged at its
place, shifted with what is around it (an edit elsewhere moved it along), or not there as it was
(edited, moved away from its surroundings, or deleted).  The document store asks this while it writes
the new version, to mark stale exactly the answers whose cited span changed (docqa.session.sources)."""

from __future__ import annotations

import re

CONTEXT = 40  # characters either side of a span that must still border it for it to count as carried along


def follow(old: str | None, new: str, start: int, end: int, quote: str) -> int | None:
    """The span's start in `new` when it is there as it was — at its place, or with the old text on one
    side of it still bordering it — else None (its answers go stale).  Without the old text only its
    place counts."""
    if new[start:end] == quote:
        return start
    if not quote or old is None or old[start:end] != quote or quote not in new:
        return None
    before, after = old[max(0, start - CONTEXT):start], old[end:end + CONTEXT]
    places = [m.start() + len(before) for m in re.finditer(re.escape(before + quote), new)] if before else []
    places += [m.start() for m in re.finditer(re.escape(quote + after), new)] if after else []
    return min(places, key=lambda p: abs(p - start)) if places else None
