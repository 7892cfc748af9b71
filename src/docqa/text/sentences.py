"""Sentence splitting for English and Chinese prose, as character spans.

A sentence ends at `. ! ? …` followed by whitespace (or the end), or at the Chinese
`。！？；` anywhere; closing quotes and brackets right after the mark stay with the sentence.
A blank line always ends a sentence.  A period does not end a sentence after a known
abbreviation ("e.g.", "ie.", "Dr."), a spaced one ("e. g.", "i. e."), an initial ("J."), a list
number at a line start ("1."), or when the next word starts lower-case; "No." and "Fig." only
before a number ("No. 5"), and "etc." ends one when a capitalised word follows, as any word's
full stop does.  "3.14" and "v1.2.3" never split because no space follows the period; a period
between two Chinese characters ("的组.文件", as in man pages translated with ASCII marks) does.
Single newlines do not split (Markdown hard-wraps its paragraphs).
"""

from __future__ import annotations

import re

from docqa.text.language import CJK_PUNCTUATION, HAN

_CLOSERS = "\"'”’»)]}）】」』》〉〕"
_CJK_MARKS = frozenset("。！？；｡")
# One match = a run of sentence marks plus its closers, or a blank line.
_BOUNDARY = re.compile(
    r"(?P<mark>[.!?…。！？；｡‼⁇⁈⁉]+)[" + re.escape(_CLOSERS) + r"]*|\n[^\S\n]*\n"
)
_SPACE = re.compile(r"\s+")
_CJK_CHAR = re.compile(f"[{HAN}{CJK_PUNCTUATION}]")

ABBREVIATIONS = frozenset(
    """e.g i.e eg ie vs cf al approx dr mr mrs ms prof sr jr st mt inc ltd co corp
    vol vols ch sec pp ed eds rev dept est gen gov lt col sgt capt u.s u.k a.m p.m
    jan feb mar apr jun jul aug sep sept oct nov dec mon tue wed thu fri sat sun""".split()
)
# "etc." is not one: it ends a sentence as a word does when a capitalised word follows ("grep, sed, etc. The next step").
# Abbreviations only before a number ("No. 5", "Fig. 3", "p. 12"): elsewhere an ordinary word ends there ("The answer is no.").
NUMBERED = frozenset("no nos fig figs eq eqs p".split())
_SPACED = re.compile(r"(?<![^\s(\[\"'“‘])[A-Za-z]\.\s?$")  # the first letter of "e. g." / "i. e." right before the second


def _word_before(text: str, end: int, floor: int) -> str:
    """The run of non-space characters that ends at `end`."""
    i = end
    while i > floor and not text[i - 1].isspace():
        i -= 1
    return text[i:end]


def _period_ends(text: str, mark_start: int, after: int, start: int, end: int) -> bool:
    """Whether a lone '.' at `mark_start` ends a sentence (abbreviations, initials, numbers)."""
    word = _word_before(text, mark_start, start).lstrip(_CLOSERS + "(['\"“‘")
    low = word.lower()
    nxt = _SPACE.match(text, after, end)
    following = text[nxt.end()] if nxt is not None and nxt.end() < end else ""
    if low in ABBREVIATIONS or (len(word) == 1 and word.isalpha() and word.isupper()):
        return False
    if low in NUMBERED and following.isdigit():
        return False
    if len(word) == 1 and word.isalpha() and _SPACED.search(text, start, mark_start - 1):
        return False  # the second letter of "e. g." or "i. e."
    if "." in word and all(len(part) <= 2 and not part.isdigit() for part in word.split(".")):
        return False  # dotted abbreviations: "U.S.A", "e.g"; not a version: "deprecated in 3.10.0. Then"
    if word.isdigit() and len(word) <= 3:
        line_start = text.rfind("\n", start, mark_start) + 1
        if not text[max(line_start, start) : mark_start - len(word)].strip():
            return False  # an ordered-list marker such as "1." at the start of a line
    return not following or not following.islower()


def _is_end(text: str, m: re.Match[str], start: int, end: int) -> bool:
    """Whether the boundary candidate `m` really ends a sentence."""
    mark = m.group("mark")
    if mark is None:
        return True  # blank line
    if any(c in _CJK_MARKS for c in mark):
        return True
    after = m.end()
    if after < end and not text[after].isspace():
        # "3.14", "a.b", "e.g.x" never split; "…" right before Chinese text does, and so does "." between two Chinese characters.
        before = _CJK_CHAR.match(text, m.start() - 1) is not None if m.start() > start else False
        return _CJK_CHAR.match(text, after) is not None and (mark[-1] == "…" or (mark == "." and before))
    if mark == ".":
        return _period_ends(text, m.start(), after, start, end)
    return True


def sentence_spans(text: str, start: int = 0, end: int | None = None) -> list[tuple[int, int]]:
    """Spans `(s, e)` of the sentences in `text[start:end]`, without surrounding whitespace.

    Together the spans cover every non-whitespace character of the range exactly once.
    """
    end = len(text) if end is None else end
    spans: list[tuple[int, int]] = []
    pos = start
    for m in _BOUNDARY.finditer(text, start, end):
        if m.start() < pos or not _is_end(text, m, start, end):
            continue
        cut = m.end() if m.group("mark") is not None else m.start()
        _add_stripped(text, pos, cut, spans)
        pos = cut
    _add_stripped(text, pos, end, spans)
    return spans


def next_sentence_start(text: str, start: int, pos: int, end: int) -> int | None:
    """The first start at or after `pos` of a sentence of `text[start:end]` (the first span of
    `sentence_spans(text, start, end)` that begins there), or None; stops at the first found."""
    first = _skip_space(text, start, end)
    if first >= pos:
        return first if first < end else None
    for m in _BOUNDARY.finditer(text, start, end):
        cut = m.end() if m.group("mark") is not None else m.start()
        s = _skip_space(text, cut, end)
        if s >= pos and s < end and _is_end(text, m, start, end):  # judge only what can count
            return s
    return None


def _skip_space(text: str, s: int, end: int) -> int:
    while s < end and text[s].isspace():
        s += 1
    return s


def _add_stripped(text: str, s: int, e: int, spans: list[tuple[int, int]]) -> None:
    """Append `(s, e)` with leading and trailing whitespace removed, unless nothing is left."""
    while s < e and text[s].isspace():
        s += 1
    while e > s and text[e - 1].isspace():
        e -= 1
    if s < e:
        spans.append((s, e))


def split_sentences(text: str) -> list[str]:
    """The sentences of `text`, stripped."""
    return [text[s:e] for s, e in sentence_spans(text)]
