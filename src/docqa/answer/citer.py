"""The citer: turn a model's `[n]` markers into exact, checkable citations.

For each sentence of an answer: read its markers, drop those that point at no source, and find
in each cited chunk the span (one to three consecutive sentences) that best supports it —
character offsets into the document, lines, page.  A sentence without a marker gets the
source that supports it best if one supports it well enough; otherwise it is flagged
unsupported.  A marker whose source does not support the sentence while another source does
is moved to that source (the model numbered it wrong); so is one whose source lacks the claim's
numbers, dates or names while exactly one other source supports it and holds them all.  Either
move is reported in the claim.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from docqa.answer.facts import missing_facts
from docqa.answer.sources import SourceSet, label
from docqa.answer.statement import is_statement
from docqa.answer.support import content_tokens, support
from docqa.text.language import has_cjk
from docqa.text.sentences import sentence_spans
from docqa.types import Citation, Claim, Hit, anchored_url

# [1]  [1, 2]  [1][2]  【1】  [Source 1]  [source: 2]  [来源1]
MARKER = re.compile(r"\[(?:(?:source|来源)\s*:?\s*)?(\d+(?:\s*[,，、]\s*\d+)*)\]|【(\d+(?:\s*[,，、]\s*\d+)*)】", re.IGNORECASE)
_SPACED_MARKER = re.compile(r"(?P<sp>[ \t]*)(?:" + MARKER.pattern + ")", re.IGNORECASE)
_LEADING = re.compile(r"^(?:\s*(?:" + MARKER.pattern + r"))+\s*", re.IGNORECASE)
_MAX_WINDOW = 3  # sentences in a supporting span
_TABULAR = ("xlsx", "csv")  # document types whose chunks are rows, one a line
_NOT_FOUND = re.compile(
    r"(do(?:es)? not (?:contain|mention|say|provide|include)|no information|not (?:found|mentioned|stated|provided) in|"
    r"cannot be (?:found|determined)|没有(?:找到|提到|提及|相关|包含)|未(?:提及|提到|找到|包含)|无法(?:确定|回答))",
    re.IGNORECASE,
)


@dataclass(slots=True)
class Cited:
    """The answer's claims with their citations, and the citation list in order of first use."""

    claims: list[Claim]
    citations: list[Citation]
    invented: list[int]  # markers dropped because no such source exists
    dropped: list[str] = field(default_factory=list)  # sentences that state nothing (questions, chatter)

    @property
    def unsupported(self) -> list[Claim]:
        return [c for c in self.claims if not c.supported]


def cite(answer: str, sources: SourceSet, language: str = "en", threshold: float = 0.5) -> Cited:
    """Claims and citations for `answer`, whose sentences cite sources as [n]."""
    invented: list[int] = []
    claims, dropped = [], []
    for start, end, numbers in _sentences(answer):
        text = " ".join(strip_markers(answer[start:end]).split())
        if not content_tokens(text):
            continue
        if not is_statement(answer[start:end]):  # a question, tool chatter, a fragment before a marker: never published
            dropped.append(text)
            continue
        valid = [n for n in numbers if sources.get(n) is not None]
        invented += [n for n in numbers if sources.get(n) is None]
        claim = Claim(text, start, end, sources=valid)
        _support(claim, sources, language, threshold)
        claims.append(claim)
    citations: list[Citation] = []
    seen = set()
    for claim in claims:
        for c in claim.citations:
            key = (c.n, c.char_start, c.char_end)
            if key not in seen:
                seen.add(key)
                citations.append(c)
    return Cited(claims, citations, sorted(set(invented)), dropped)


def number_by_first_use(text: str, claims: list[Claim]) -> str:
    """`text` rewritten so its sources are numbered 1..n in order of first use, one number per source.

    Every answer is published through here (extractive, pipeline, agent).  A claim's markers are
    rebuilt from the citations it kept (a marker the citer moved or dropped is not shown), where the
    writer put its first marker, else after the claim; the claims' citations, sources and spans are
    updated to match.  Text that is no claim — a question, tool chatter, a lone marker, all dropped
    by the citer — is not published: between claims only the layout (spaces, line breaks) is kept.
    """
    numbers: dict[int, int] = {}
    for claim in claims:
        for c in claim.citations:
            numbers.setdefault(c.n, len(numbers) + 1)
    renumbered: set[int] = set()
    out, pos = "", 0
    joiner = "" if has_cjk(text) else " "
    for claim in sorted(claims, key=lambda c: c.start):
        gap, segment = text[pos : claim.start], text[claim.start : claim.end]
        pos = claim.end
        marks = list(dict.fromkeys(numbers[c.n] for c in claim.citations))
        for c in claim.citations:
            if id(c) not in renumbered:
                renumbered.add(id(c))
                c.n = numbers[c.n]
        claim.sources = marks
        if out:
            out += gap if not strip_markers(gap).strip() and "[" not in gap and "【" not in gap else _layout(gap, joiner)
        claim.start = len(out)
        out += _with_markers(segment, "".join(f"[{n}]" for n in marks))
        claim.end = len(out)
    return out


def _with_markers(segment: str, group: str) -> str:
    """A claim's text with its markers replaced by `group`: at its first marker, else at its end.
    Markers that open the segment belong to the sentence before (the citer read them so): dropped."""
    body = _LEADING.sub("", segment, count=1)
    placed = False

    def place(m: re.Match[str]) -> str:
        nonlocal placed
        if placed or not group:
            return ""
        placed = True
        return m.group("sp") + group

    body = _SPACED_MARKER.sub(place, body).rstrip()
    return body + (f" {group}" if group and not placed else "")


def _layout(gap: str, joiner: str) -> str:
    """What separates two published claims: the gap's line breaks (at most a blank line), else a space."""
    breaks = gap.count("\n")
    return "\n\n" if breaks >= 2 else "\n" if breaks == 1 else joiner


def is_not_found_statement(text: str) -> bool:
    """A sentence saying the documents lack something (needs no source)."""
    return _NOT_FOUND.search(text) is not None


def strip_markers(text: str) -> str:
    """The text without its [n] markers (and the space before each)."""
    return re.sub(r"[ \t]*(?:" + MARKER.pattern + ")", "", text, flags=re.IGNORECASE)


def _sentences(answer: str) -> list[tuple[int, int, list[int]]]:
    """Sentence spans with the source numbers cited in each.

    A marker that opens a sentence (the model put it after the full stop: "… hours. [1]")
    belongs to the sentence before.
    """
    spans = [list(s) for s in sentence_spans(answer)]
    numbers: list[list[int]] = [[] for _ in spans]
    for m in MARKER.finditer(answer):
        i = next((k for k, (s, e) in enumerate(spans) if s <= m.start() < e), None)
        if i is None:
            continue
        before = MARKER.sub("", answer[spans[i][0] : m.start()]).strip()
        if not before and i > 0:
            i -= 1
        nums = [int(x) for x in re.split(r"[,，、\s]+", m.group(1) or m.group(2)) if x]
        numbers[i] += [n for n in nums if n not in numbers[i]]
    return [(s, e, numbers[i]) for i, (s, e) in enumerate(spans)]


def _support(claim: Claim, sources: SourceSet, language: str, threshold: float) -> None:
    """Attach the best supporting span of each cited source; re-assign or flag when unsupported."""
    tokens = content_tokens(claim.text)
    best = {n: _best_span(sources.get(n).hit, tokens) for n in claim.sources}
    strong = {n: b for n, b in best.items() if b[0] >= threshold}
    if not strong:
        others = {s.n: _best_span(s.hit, tokens) for s in sources.sources if s.n not in best}
        top = max(others.items(), key=lambda kv: kv[1][0], default=None)
        if top is not None and top[1][0] >= max(threshold, 0.6):
            if claim.sources:
                claim.problems.append(f"cited [{', '.join(map(str, claim.sources))}] but the text is in [{top[0]}]")
            strong = {top[0]: top[1]}
            claim.sources = [top[0]]
    if strong and claim.sources and missing_facts(claim.text, "\n".join(sources.get(n).hit.text for n in strong)):
        moved = _source_with_facts(claim, sources, tokens, threshold, exclude=set(best))
        if moved is not None:  # its numbers are in another source that supports it as well: numbered wrong
            claim.problems.append(f"cited [{', '.join(map(str, claim.sources))}] but its facts are in [{moved[0]}]")
            strong = {moved[0]: moved[1]}
            claim.sources = [moved[0]]
    if strong:
        claim.support = max(b[0] for b in strong.values())
        claim.citations = [citation_for(n, sources.get(n).hit, b[1], b[2], language, sources.paths) for n, b in strong.items()]
        return
    claim.support = max((b[0] for b in best.values()), default=0.0)
    if is_not_found_statement(claim.text):
        claim.supported = True  # "the documents do not say X" needs no source
        return
    claim.supported = False
    if claim.sources:  # keep the weak citation so a reader can judge it
        n, b = max(best.items(), key=lambda kv: kv[1][0])
        claim.citations = [citation_for(n, sources.get(n).hit, b[1], b[2], language, sources.paths)]
        claim.problems.append(f"[{n}] hardly supports it ({claim.support:.0%} of its words)")
    else:
        claim.problems.append("no source supports it")


def _source_with_facts(claim: Claim, sources: SourceSet, tokens: set[str], threshold: float,
                       exclude: set[int]) -> tuple[int, tuple[float, int, int]] | None:
    """The one other source that supports `claim` and holds all its facts (None: none, or several)."""
    found = [(s.n, b) for s in sources.sources if s.n not in exclude and not missing_facts(claim.text, s.hit.text)
             and (b := _best_span(s.hit, tokens))[0] >= threshold]
    return found[0] if len(found) == 1 else None


def _best_span(hit: Hit, tokens: set[str]) -> tuple[float, int, int]:
    """(support, start, end) of the best 1..3-sentence window of the chunk text."""
    spans = _units(hit) or [(0, len(hit.text))]
    toks = [content_tokens(hit.text[s:e]) for s, e in spans]
    best, key = (0.0, spans[0][0], spans[0][1]), (-1.0, 0)
    for i in range(len(spans)):
        acc: set[str] = set()
        for j in range(i, min(i + _MAX_WINDOW, len(spans))):
            acc = acc | toks[j]
            score = support(tokens, acc)
            candidate = (round(score, 6), -(spans[j][1] - spans[i][0]))  # equal support: the shorter span
            if candidate > key:
                best, key = (score, spans[i][0], spans[j][1]), candidate
    return best


def _units(hit: Hit) -> list[tuple[int, int]]:
    """The chunk's sentences; a spreadsheet's rows (one per line), so a citation points at the rows
    that support a claim rather than at the whole table."""
    if hit.type not in _TABULAR:
        return sentence_spans(hit.text)
    spans, at = [], 0
    for line in hit.text.split("\n"):
        if line.strip():
            spans.append((at, at + len(line)))
        at += len(line) + 1
    return spans


def citation_for(n: int, hit: Hit, start: int, end: int, language: str, among: Iterable[str] = ()) -> Citation:
    line_start = hit.line_start + hit.text.count("\n", 0, start)
    line_end = hit.line_start + hit.text.count("\n", 0, max(end - 1, start))
    page = hit.page if hit.page_end in (None, hit.page) else None
    c = Citation(
        n=n, chunk_id=hit.chunk_id, document_id=hit.document_id, path=hit.path, title=hit.title,
        section=hit.section, page=hit.page, line_start=line_start, line_end=line_end,
        char_start=hit.char_start + start, char_end=hit.char_start + end, quote=hit.text[start:end],
        url=anchored_url(hit.path, hit.anchors, hit.char_start + start),
    )
    c.label = label(hit, language, line_start, line_end, page, among)
    return c
