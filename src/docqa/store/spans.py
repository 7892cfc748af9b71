"""Where a cited span is in a document's new version, judged against the old version: unchanged at its
place, carried along with what borders it (an edit elsewhere shifted it), or not there as it was
(edited, moved away from its surroundings, or deleted).  The document store asks this while it writes
the new version, to mark stale exactly the answers whose cited span changed (docqa.store.sources).

A citation keeps the offsets it was answered with: after an edit elsewhere has shifted its span, the
span is found in the old text again by its quote (the occurrence nearest its offsets), so carrying a
span along costs no write."""

from __future__ import annotations

CONTEXT = 40  # characters of the nearest line of text either side that must still border a span carried along
# A span this far into the text both versions end with has what borders it before it unchanged too (a span
# at the very start of that shared end may be a sentence moved to the end of the file).
MARGIN = CONTEXT + 2
_LONG_EDIT = 2048  # characters between the lines both versions start and end with, past which Edit.bounds finds them exactly


class Edit:
    """One document's change from `old` (None: not known) to `new`.  The length of text both end with is
    found once, when first needed: a typical edit changes one region, and every span after it is carried
    along by the same shift, found without searching."""

    def __init__(self, old: str | None, new: str):
        self.old, self.new = old, new
        self._head: int | None = None
        self._tail: int | None = None

    @property
    def head(self) -> int:
        """The length of the text both versions start with: a span within it is unchanged at its place."""
        if self._head is None:
            self._head = _shared_head(self.old or "", self.new)
        return self._head

    def bounds(self) -> tuple[int, int]:
        """At most `head` and at most `tail`, found line by line (whole lines both versions start and end
        with): cheaper, and as good for passing over the spans outside an edit when lines are short.  Where
        the lines leave much text between them (long lines), the exact lengths."""
        old, new = self.old or "", self.new
        olds, news = old.split("\n"), new.split("\n")
        most = min(len(olds), len(news))
        first = 0
        while first < most and olds[first] == news[first]:
            first += 1
        last = 0
        while last < most - first and olds[-1 - last] == news[-1 - last]:
            last += 1
        head = min(sum(map(len, olds[:first])) + first, len(old), len(new))  # each line with the line break after it
        tail = sum(map(len, olds[len(olds) - last:])) + last - 1 if last else 0  # the breaks between them
        if len(old) - head - tail > _LONG_EDIT:
            return self.head, self.tail
        return head, tail

    @property
    def tail(self) -> int:
        if self._tail is None:
            self._tail = _shared_tail(self.old or "", self.new)
        return self._tail

    def follow(self, start: int, end: int, quote: str) -> int | None:
        """The span's start in the new text when it is there as it was — at its place, or with the old
        text on one side of it still bordering it — else None (its answers go stale).  Without the old
        text only its place counts."""
        old, new = self.old, self.new
        if new[start:end] == quote:
            return start
        if not quote or old is None or quote not in new:
            return None
        if old[start:end] != quote:  # shifted by an earlier edit elsewhere: where it is in the old text
            found = nearest(old, quote, start)
            if found is None:
                return None
            start = found
        if start >= len(old) - self.tail + MARGIN:  # deep in the text both end with: carried along by the shift
            return start + len(new) - len(old)
        before, after = _before(old, start), _after(old, start + len(quote))
        places = [p + len(before) for p in _find_all(new, before + quote)] if before else []
        places += _find_all(new, quote + after) if after else []
        return min(places, key=lambda p: abs(p - start)) if places else None


def follow(old: str | None, new: str, start: int, end: int, quote: str) -> int | None:
    """`Edit(old, new).follow(start, end, quote)`: for one span."""
    return Edit(old, new).follow(start, end, quote)


def nearest(text: str, quote: str, start: int) -> int | None:
    """Where `quote` occurs in `text`, nearest `start` (None: nowhere)."""
    places = _find_all(text, quote)
    return min(places, key=lambda p: abs(p - start)) if places else None


def _shared_head(a: str, b: str) -> int:
    """The length of the text `a` and `b` both start with (a binary search over C-speed comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a.startswith(b[:mid]):
            low = mid
        else:
            high = mid - 1
    return low


def _shared_tail(a: str, b: str) -> int:
    """The length of the text `a` and `b` both end with (a binary search over C-speed comparisons)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a.endswith(b[len(b) - mid:]):
            low = mid
        else:
            high = mid - 1
    return low


def _find_all(text: str, part: str) -> list[int]:
    found, at = [], text.find(part)
    while at != -1:
        found.append(at)
        at = text.find(part, at + 1)
    return found


def _before(text: str, start: int) -> str:
    """What borders the span before it: the white space, then the end of the nearest line with text on it
    (at most CONTEXT characters of it); '' at the file's start."""
    last = start - 1
    while last >= 0 and text[last].isspace():
        last -= 1
    if last < 0:
        return ""
    line = text.rfind("\n", 0, last) + 1
    return text[max(line, last + 1 - CONTEXT):start]


def _after(text: str, end: int) -> str:
    """What borders the span after it: the white space, then the start of the nearest line with text on it
    (at most CONTEXT characters of it); '' at the file's end."""
    first = end
    while first < len(text) and text[first].isspace():
        first += 1
    if first >= len(text):
        return ""
    line = text.find("\n", first)
    return text[end:min(len(text) if line == -1 else line, first + CONTEXT)]
