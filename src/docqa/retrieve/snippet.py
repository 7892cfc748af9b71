"""Snippets: the window of a chunk with the most query-term matches, matches marked **like this**."""

from __future__ import annotations

import re

from docqa.text.language import HAN
from docqa.text.segment import OptionTerm, fold

MARK_OPEN, MARK_CLOSE = "**", "**"
_HEADING_MARKS = re.compile(r"(?:^|(?<=\s))#{1,6}(?=\s)")  # Markdown heading markers read as noise


# A word's edges where the word is Latin: any word character but a Chinese one ends it
_ASCII_START, _ASCII_END = rf"(?<![^\W{HAN}])", rf"(?![^\W{HAN}])"


def _pattern(terms: list[str]) -> re.Pattern | None:
    parts = []
    for term in sorted(set(terms), key=len, reverse=True):
        if isinstance(term, OptionTerm):
            # a short option's letter, as the question wrote it: `-W` (--verify) is not `-w` (--interactive)
            parts.append(_ASCII_START + "(?-i:" + re.escape(term.written) + ")" + _ASCII_END)
        elif term.isascii() and len(term) > 4:
            # porter stemming matches inflections: "indexing" for "indexes"
            parts.append(re.escape(term[: max(4, len(term) - 2)]) + r"\w*")
        elif term.isascii():
            # a Chinese character is a word character too, so \b would not fall between "2007" and "年" nor "MIT" and
            # "开": "2007年11月" holds 2007 and 11, "MIT开放式课程" MIT
            parts.append(_ASCII_START + re.escape(term) + _ASCII_END)
        else:
            parts.append(re.escape(term))
    return re.compile("|".join(parts), re.IGNORECASE) if parts else None


def highlight(text: str, terms: list[str], width: int = 240) -> str:
    """A `width`-character window of `text` around the densest matches, matches marked."""
    pattern = _pattern(terms)
    flat = " ".join(_HEADING_MARKS.sub(" ", text).split())
    matches = list(pattern.finditer(flat)) if pattern else []
    if not matches:
        return flat[:width] + ("…" if len(flat) > width else "")
    best_start, best_count = 0, 0
    for i, m in enumerate(matches):
        count = sum(1 for n in matches[i:] if n.end() <= m.start() + width)
        if count > best_count:
            best_start, best_count = m.start(), count
    start = max(0, min(best_start - width // 4, len(flat) - width))
    window = flat[start : start + width]
    marked = pattern.sub(lambda m: MARK_OPEN + m.group() + MARK_CLOSE, window)
    return ("…" if start > 0 else "") + marked + ("…" if start + width < len(flat) else "")


def coverage(text: str, terms: list[str], weights: dict[str, float] | None = None) -> float:
    """Share of the distinct query terms found in `text` (inflections count, as in highlighting),
    each term weighted by `weights` (e.g. its IDF; 1 when absent)."""
    distinct = list(dict.fromkeys(fold(t) for t in terms))
    total = sum((weights or {}).get(t, 1.0) for t in distinct)
    if not distinct or total <= 0:
        return 0.0
    found = sum((weights or {}).get(t, 1.0) for t in distinct if (p := _pattern([t])) is not None and p.search(text))
    return found / total
