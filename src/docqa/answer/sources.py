"""Numbered sources: the hits an answer may cite as [n], with readable location labels, fitted
into the model's context window (lowest-ranked dropped first, and reported)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from docqa.text.sentences import sentence_spans
from docqa.text.tokens import count_tokens
from docqa.types import Hit

_PAGED = {"pdf", "pptx", "ppt", "odp", "epub"}


@dataclass(slots=True)
class Source:
    n: int
    hit: Hit
    truncated: bool = False  # the text given to the model was cut to fit the context window
    text: str = ""  # what the model sees (the chunk text, unless truncated)
    # for a release question, the lines above the chunk in its document: the release heading of a long NEWS entry is
    # often in an earlier chunk (docqa.answer.release.label)
    above: Hit | None = None
    # a chunk read beside a hit (the one before or after it in its document, docqa.answer.pipeline.read_beside): the
    # number of that hit, whose place in the ranking its sentences take; 0 for a hit of the search
    beside: int = 0

    def __post_init__(self) -> None:
        if not self.text:
            self.text = self.hit.text


@dataclass(slots=True)
class SourceSet:
    sources: list[Source]
    dropped: list[Hit] = field(default_factory=list)  # did not fit the context window
    namesakes: list[str] = field(default_factory=list)  # other documents' paths with a source's file name

    def get(self, n: int) -> Source | None:
        return self.sources[n - 1] if 1 <= n <= len(self.sources) else None

    def __len__(self) -> int:
        return len(self.sources)

    @property
    def paths(self) -> list[str]:
        """The files the sources come from, and the knowledge base's other files of the same names:
        their labels must tell them apart (`openssh-client/README.Debian.gz`, not `README.Debian.gz`)."""
        return [s.hit.path for s in self.sources] + self.namesakes


def label(hit: Hit, language: str = "en", line_start: int | None = None, line_end: int | None = None,
          page: int | None = None, among: Iterable[str] = ()) -> str:
    """`[source: config.md §Database, L12–18]` or `[来源: deploy.pdf 第5页]`; `among`: the paths of the
    answer's other sources, which the file's name must not be mistaken for."""
    return f"[{'来源' if language == 'zh' else 'source'}: {location(hit, language, line_start, line_end, page, among)}]"


def distinct_name(path: str, among: Iterable[str] = ()) -> str:
    """The shortest tail of `path` that no other path in `among` ends with: `cache.rst`, or
    `howto/cache.rst` when `reference/cache.rst` is among them too."""
    parts = [p for p in path.replace("\\", "/").split("/") if p]
    others = {"/" + o.replace("\\", "/").lstrip("/") for o in among if o != path}
    for k in range(1, len(parts) + 1):
        tail = "/".join(parts[-k:])
        if not any(o.endswith("/" + tail) for o in others):
            return tail
    return path


def location(hit: Hit, language: str = "en", line_start: int | None = None, line_end: int | None = None,
             page: int | None = None, among: Iterable[str] = ()) -> str:
    """File name (with as many folders as tell it apart from the paths `among`), last section,
    and page (paged formats) or lines (everything else)."""
    zh = language == "zh"
    parts = [distinct_name(hit.path, among)]
    section = hit.section.split(" > ")[-1] if hit.section else ""
    if hit.symbol:
        section = hit.symbol
    if section:
        parts.append(f"§{section}")
    first = hit.page if page is None else page
    last = hit.page_end if page is None else page
    a, b = line_start or hit.line_start, line_end or hit.line_end
    if first is not None and (hit.type in _PAGED or hit.path.lower().endswith((".pdf", ".pptx"))):
        if last not in (None, first):
            parts.append(f"第{first}–{last}页" if zh else f"pp. {first}–{last}")
        else:
            parts.append(f"第{first}页" if zh else f"p. {first}")
    else:
        lines = f"{a}" if a == b else f"{a}–{b}"
        parts.append(f"第{lines}行" if zh else f"L{lines}")
    if zh:
        return " ".join(parts)
    return parts[0] + (" " + ", ".join(parts[1:]) if len(parts) > 1 else "")


def fit(hits: list[Hit], budget_tokens: int) -> SourceSet:
    """Number the hits in rank order, keeping as many as fit in `budget_tokens`.

    The best hit is always kept (cut to the budget if it alone is too long, and marked
    truncated); every later hit that does not fit is dropped — never silently: the caller
    reports `dropped`.
    """
    kept: list[Source] = []
    dropped: list[Hit] = []
    used = 0
    for hit in hits:
        cost = count_tokens(hit.text) + 40  # the fence, the label line and separators
        if used + cost <= budget_tokens:
            kept.append(Source(len(kept) + 1, hit))
            used += cost
        elif not kept:
            kept.append(Source(1, hit, truncated=True, text=_cut(hit.text, max(budget_tokens - 40, 32))))
            used = budget_tokens
        else:
            dropped.append(hit)
    return SourceSet(kept, dropped)


def focused(hits: list[Hit], centres: dict[str, tuple[int, int]], count: int, tokens: int) -> SourceSet:
    """Sources for a small model: at most `count` hits (those with a centre first, in rank order), each
    cut to the sentences around its centre span (chunk id -> (start, end) in its text) that fit in
    about `tokens` tokens; a hit without a centre keeps its first sentences."""
    order = sorted(hits, key=lambda h: h.chunk_id not in centres)
    kept: list[Source] = []
    for hit in order[:count]:
        text = _around(hit.text, centres.get(hit.chunk_id), tokens)
        kept.append(Source(len(kept) + 1, hit, truncated=text != hit.text, text=text))
    return SourceSet(kept, order[count:])


def _around(text: str, centre: tuple[int, int] | None, tokens: int) -> str:
    """The sentences of `text` around `centre` (else from its start) that fit in `tokens` tokens."""
    if count_tokens(text) <= tokens:
        return text
    spans = _pieces(text)
    at = next((i for i, (s, e) in enumerate(spans) if centre and s <= centre[0] < e), 0)
    lo = hi = at
    used = count_tokens(text[spans[at][0] : spans[at][1]])
    while True:
        grown = False
        for i in (hi + 1, lo - 1):
            if 0 <= i < len(spans) and (i > hi or i < lo):
                cost = count_tokens(text[spans[i][0] : spans[i][1]])
                if used + cost <= tokens:
                    lo, hi, used, grown = min(lo, i), max(hi, i), used + cost, True
        if not grown:
            break
    window = text[spans[lo][0] : spans[hi][1]]
    window = window if used <= tokens else _cut(window, tokens)
    return _with_header(text, spans[lo][0], window)


def _pieces(text: str) -> list[tuple[int, int]]:
    """The sentences of `text`, each cut at its line breaks (a table is one "sentence" of many rows)."""
    out = []
    for s, e in sentence_spans(text) or [(0, len(text))]:
        at = s
        for line in text[s:e].split("\n"):
            if line.strip():
                out.append((at, at + len(line)))
            at += len(line) + 1
    return out or [(0, len(text))]


def _with_header(text: str, start: int, window: str) -> str:
    """`window` (from `start` in `text`) after the first two rows of its table when it starts inside
    a table below them: the column names say what a row's values are."""
    lines = text[:start].split("\n")[:-1]  # the whole lines before the window
    if " | " not in window.split("\n", 1)[0] or not lines or " | " not in lines[-1]:
        return window
    first = len(lines)
    while first > 0 and " | " in lines[first - 1]:
        first -= 1
    return "\n".join(lines[first : first + 2] + [window])


def _cut(text: str, tokens: int) -> str:
    from docqa.text.tokens import decode, encode

    return decode(encode(text)[:tokens])
