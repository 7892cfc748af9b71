"""The building blocks of every span chunker: `Piece`, counted units, paragraphs and packing.

A *unit* is `(start, end, tokens)`, a span of the document text with its count.  Prose is split
by paragraph: short paragraphs merge, long ones split at sentence ends, then lines, then token
boundaries; consecutive chunks of one run overlap by about `overlap` tokens (`pack`).  The
prose, section, page, row and code chunkers and the gap filler in assemble.py share them.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from docqa.ingest.chunkers.measure import JOIN_TOKENS, ntokens, tail_start, token_cuts
from docqa.text.sentences import sentence_spans
from docqa.types import CODE, TABLE, Document


@dataclass(slots=True)
class Piece:
    """A chunk before stamping: a span of the text, its token count and its location."""

    start: int
    end: int
    tokens: int
    section: tuple[str, ...] = ()
    symbol: str | None = None
    context: str = ""


Unit = tuple[int, int, int]

# A run of non-blank lines; `[^\S\n]` is whitespace other than a newline.
_PARAGRAPH = re.compile(r"[^\S\n]*\S(?:[^\n]*\S)?(?:\n[^\S\n]*\S(?:[^\n]*\S)?)*")
_LINE = re.compile(r"[^\S\n]*\S(?:[^\n]*\S)?")
_FENCE = re.compile(r"^[ \t]{0,3}(```+|~~~+)[^\n]*$", re.M)
# Above this many characters per allowed token a paragraph cannot fit; skip counting it whole.
_SURELY_LONG = 16


def fence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans of Markdown fenced code blocks (an unclosed fence runs to `end`)."""
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    opening: re.Match[str] | None = None
    for m in _FENCE.finditer(text, start, end):
        if opening is None:
            opening = m
        elif m.group(1)[0] == opening.group(1)[0] and len(m.group(1)) >= len(opening.group(1)):
            spans.append((opening.start(), m.end()))
            opening = None
    if opening is not None:
        spans.append((opening.start(), end))
    return spans


def block_spans(document: Document) -> list[tuple[int, int]]:
    """Spans that should only be split at line ends: tables and code blocks (+ Markdown fences)."""
    spans = [(b.start, b.end) for b in document.blocks if b.kind in (TABLE, CODE)]
    if document.type == "markdown":
        spans += fence_spans(document.text)
    return sorted(spans)


def paragraph_spans(
    text: str, start: int, end: int, atomic: Sequence[tuple[int, int]] = ()
) -> list[tuple[int, int, bool]]:
    """`(s, e, is_atomic)` paragraphs of `text[start:end]`; paragraphs overlapping an atomic span
    (a code fence, a table) merge into one span that is split only at line ends."""
    out: list[tuple[int, int, bool]] = []
    k = bisect.bisect_right(atomic, (start, start)) - 1 if atomic else 0
    k = max(k, 0)
    for m in _PARAGRAPH.finditer(text, start, end):
        s, e = m.span()
        while k < len(atomic) and atomic[k][1] <= s:
            k += 1
        if k < len(atomic) and atomic[k][0] < e:
            if out and out[-1][2] and out[-1][1] > atomic[k][0]:
                out[-1] = (out[-1][0], max(e, out[-1][1]), True)
            else:
                out.append((s, e, True))
        else:
            out.append((s, e, False))
    return out


def _split(text: str, s: int, e: int, limit: int, sentences: bool) -> list[Unit]:
    """Units of at most `limit` tokens covering `text[s:e]`: sentences, lines, token cuts."""
    levels = [sentence_spans, _lines] if sentences else [_lines]
    return _refine(text, s, e, limit, levels)


def _lines(text: str, s: int, e: int) -> list[tuple[int, int]]:
    return [m.span() for m in _LINE.finditer(text, s, e)]


def _refine(text: str, s: int, e: int, limit: int, levels: list) -> list[Unit]:
    """Split `text[s:e]` with the first level, recursing into pieces still over `limit`."""
    if not levels:
        return _token_split(text, s, e, limit)
    units: list[Unit] = []
    for a, b in levels[0](text, s, e):
        n = ntokens(text[a:b]) if b - a <= limit * _SURELY_LONG else limit + 1
        units.extend([(a, b, n)] if n <= limit else _refine(text, a, b, limit, levels[1:]))
    return units


def _token_split(text: str, s: int, e: int, limit: int) -> list[Unit]:
    """Last resort: cut at token boundaries, re-counting each piece."""
    units: list[Unit] = []
    a = s
    for b in token_cuts(text, s, e, max(limit - 8, limit // 2)):
        n = ntokens(text[a:b])
        if n > limit and b - a > 1:
            units.extend(_token_split(text, a, b, limit * 3 // 4))
        elif b > a:
            units.append((a, b, n))
        a = b
    return units


def paragraph_units(
    text: str, start: int, end: int, limit: int, atomic=(), sentences: bool = True
) -> list[Unit]:
    """Counted paragraphs of `text[start:end]`, each at most `limit` tokens (long ones split)."""
    units: list[Unit] = []
    for s, e, whole in paragraph_spans(text, start, end, atomic):
        n = ntokens(text[s:e]) if e - s <= limit * _SURELY_LONG else limit + 1
        if n <= limit:
            units.append((s, e, n))
        else:
            units.extend(_split(text, s, e, limit, sentences and not whole))
    return units


def _join(text: str, end: int, start: int) -> int:
    """Tokens the gap between two units may add: none for one space before an ASCII letter (the
    space merges into the word's token), one for a plain line break or a Chinese mark that may
    merge differently with its neighbours, else the gap's own count (odd whitespace runs)."""
    if start == end + 1 and text[end] == " " and text[start].isascii() and text[start].isalpha():
        return 0
    if start - end <= 2 and not text[end:start].strip(" \n"):
        return JOIN_TOKENS
    return max(JOIN_TOKENS, ntokens(text[end:start]))


def pack(text: str, units: list[Unit], limit: int, overlap: int, barriers: Sequence[int] = ()) -> list[Unit]:
    """Greedily merge consecutive units into chunks of at most `limit` tokens; each chunk after
    a cut starts about `overlap` tokens before the previous one ended, unless that overlap would
    hold one of the sorted `barriers` offsets (heading starts) after its first character."""
    if not units:
        return []
    joins = [0] + [_join(text, units[i - 1][1], units[i][0]) for i in range(1, len(units))]
    total = sum(u[2] for u in units) + sum(joins)
    if total > limit and total - sum(joins) <= limit:
        exact = ntokens(text[units[0][0] : units[-1][1]])  # joins overestimated: check exactly
        if exact <= limit:
            return [(units[0][0], units[-1][1], exact)]
    chunks: list[Unit] = []
    spans: list[tuple[int, int]] = []  # unit indexes of each chunk, for the check below
    start, count, first = units[0][0], units[0][2], 0
    for i in range(1, len(units)):
        n = units[i][2] + joins[i]
        if count + n <= limit:
            count += n
            continue
        chunks.append((start, units[i - 1][1], count))
        spans.append((first, i))
        start, count = _overlap(text, units, joins, (first, i), (limit, overlap), barriers)
        first = i
    chunks.append((start, units[-1][1], count))
    spans.append((first, len(units)))
    return _checked(text, units, joins, chunks, spans, limit)


def _checked(text: str, units: list[Unit], joins: list[int], chunks: list[Unit], spans,
             limit: int) -> list[Unit]:
    """Chunks whose summed count may undercount are counted exactly and re-packed if over.

    A space before an ASCII word joins additively; other joins (line breaks after a fence,
    a space or mark next to Chinese) can re-merge bytes into a token or two more than counted,
    so a chunk within two tokens per such join of the limit is counted exactly."""
    out: list[Unit] = []
    for (s, e, n), (a, b) in zip(chunks, spans):
        risky = sum(1 for k in range(a + 1, b) if joins[k])
        if s < units[a][0]:  # an overlap tail: its own joins and the one to unit a are summed too
            risky += 2
        if risky and n + 2 * risky > limit:
            exact = ntokens(text[s:e])
            if exact > limit:
                smaller = limit - (exact - n) - 1
                out.extend(pack(text, units[a:b], max(smaller, limit // 2), 0))
                continue
        out.append((s, e, n))
    return out


def _overlap(text: str, units: list[Unit], joins: list[int], span: tuple[int, int],
             sizes: tuple[int, int], barriers: Sequence[int]) -> tuple[int, int]:
    """Start and count of a chunk beginning with unit `i` plus a tail of units `first..i-1`:
    whole trailing units (sentence-rounded) or the word-rounded end of the last one."""
    (first, i), (limit, overlap) = span, sizes
    s, n = units[i][0], units[i][2]
    if overlap <= 0:
        return s, n
    j, tail = i, joins[i]
    while j - 1 >= first and tail + units[j - 1][2] + joins[j - 1] <= overlap:
        j -= 1
        tail += units[j][2] + joins[j]
    if j == i or (tail < overlap // 3 and j > first):
        a, b, _ = units[j - 1]
        pos = tail_start(text, a, b, overlap - tail)
        if pos < b:
            part = ntokens(text[pos:b]) + JOIN_TOKENS
            if tail + part <= overlap + JOIN_TOKENS:
                return _fit(pos, tail + part, s, n, limit, barriers)
    return _fit(units[j][0], tail, s, n, limit, barriers) if j < i else (s, n)


def _fit(tail_from: int, tail: int, s: int, n: int, limit: int, barriers: Sequence[int]) -> tuple[int, int]:
    """The overlapped start if the tail still fits beside the first unit and no barrier lies in
    (tail start, s], else no overlap."""
    k = bisect.bisect_right(barriers, s)  # a chunk that starts at a heading gets no overlap either
    if tail + n > limit or (k and barriers[k - 1] > tail_from):
        return s, n
    return tail_from, tail + n


def pieces_for_run(
    document: Document, start: int, end: int, limit: int, overlap: int, **fields
) -> Iterable[Piece]:
    """Prose pieces for one run of text (a section, a page, a whole document)."""
    atomic = fields.pop("atomic", ())
    sentences = fields.pop("sentences", True)
    barriers = fields.pop("barriers", ())
    units = paragraph_units(document.text, start, end, limit, atomic, sentences)
    for s, e, n in pack(document.text, units, limit, overlap, barriers):
        yield Piece(s, e, n, **fields)
