"""Per-document enrichment: a title, keywords and a lead summary (no LLM).

Keywords are TF-IDF: Chinese words come from jieba's dictionary (segmented with rjieba, the same
cut as jieba about 35x faster) and weighted by jieba.analyse's own IDF table, which is what
`jieba.analyse.extract_tags` computes; Latin words get the same TF-IDF with an IDF of
-ln(word frequency) from wordfreq's bundled English list, so everyday words ("every", "minutes")
rank below the document's own terms.
"""

from __future__ import annotations

import heapq
import math
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from itertools import repeat
from pathlib import Path

from docqa.text.background import UNSEEN_EN_IDF as _UNSEEN_EN_IDF
from docqa.text.background import Table as _Table  # noqa: F401  (tests/ingest/test_enrich.py)
from docqa.text.background import ceilings as _ceilings
from docqa.text.background import chinese_idf as _idf
from docqa.text.background import english_idf as _english_idf
from docqa.text.language import HAN, HAN_RUN, has_cjk
from docqa.text.segment import STOPWORDS
from docqa.types import HEADING, Document, Enrichment

SUMMARY_CHARS = 300
KEYWORDS = 10
# Keywords and the summary come from the head of a document (plus its later headings): TF-IDF
# top terms are stable well before 20k characters, and scanning more costs time on every file.
_SAMPLE_CHARS = 20_000
_PARAGRAPH_CHARS = 2_000  # enough of one paragraph to judge it and cut a summary from it
_LATIN = re.compile(r"[A-Za-z][A-Za-z\-']{2,}")
_CJK_WORD = re.compile(f"[{HAN}]{{2,}}")
_MARKUP = re.compile(r"^[#=\-*\s]+|[#=\-*\s]+$")
_CJK_STOPWORDS = tuple(w for w in STOPWORDS if _CJK_WORD.fullmatch(w))
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_BLANK_LINE = re.compile(r"\n\s*\n")


def enrich(document: Document) -> Enrichment:
    """Title, keywords and summary of a document."""
    later = [document.text[b.start : b.end] for b in document.blocks
             if b.kind == HEADING and b.start >= _SAMPLE_CHARS]
    return Enrichment(title=title_of(document), keywords=keywords_of(document.text, headings=later),
                      summary=summary_of(document))


def title_of(document: Document) -> str:
    """Metadata title, else the first heading, else the file name."""
    if document.title and document.title.strip():
        return " ".join(document.title.split())[:200]
    for block in document.blocks:
        if block.kind == HEADING:
            text = _MARKUP.sub("", document.text[block.start : block.end])
            if text:
                return " ".join(text.split())[:200]
    return Path(document.path).name


def keywords_of(text: str, top_k: int = KEYWORDS, headings: Iterable[str] = ()) -> list[str]:
    """The top TF-IDF keywords (sublinear tf) of the head of a text plus `headings` (Chinese and
    Latin words)."""
    sample = "\n".join([text[:_SAMPLE_CHARS], *headings])
    english = Counter(_LATIN.findall(sample.lower()))
    scored = _scored(english, _english_lookup, _UNSEEN_EN_IDF, _ceilings()[0], top_k)
    if not sample.isascii() and has_cjk(sample):
        import rjieba

        # Only the Chinese runs: cutting the Latin text between them would only be thrown away.
        words = Counter(rjieba.cut("\n".join(HAN_RUN.findall(sample)), False))
        chinese = Counter({w: n for w, n in words.items() if _CJK_WORD.fullmatch(w)})
        for word in _CJK_STOPWORDS:
            chinese.pop(word, None)
        idf = _idf()
        scored = heapq.nlargest(top_k, scored + _scored(chinese, idf.get_many, idf.median, _ceilings()[1], top_k))
    return [word for score, word in scored if score > 0]


def _scored(counts: Counter, idf: Callable[[list[str], float], list[float]], unseen: float, ceiling: float,
            top_k: int) -> list[tuple[float, str]]:
    """The `top_k` (tf-idf, word) pairs, tf = 1 + ln(count) so repetition alone cannot win; `idf`
    gives the IDF of each of a list of words (`unseen` for one it does not know).

    Most distinct words occur once and score their bare IDF, at most `ceiling`: when the
    repeated words already fill the top above that, the single ones need no lookup."""
    repeated = [w for w, n in counts.items() if n > 1]
    tf = map(operator.add, repeat(1.0), map(math.log, map(counts.__getitem__, repeated)))
    # map() over C callables: no Python frame per word (a document has thousands of words).
    top = heapq.nlargest(top_k, zip(map(operator.mul, tf, idf(repeated, unseen)), repeated))
    if len(top) == top_k and top[-1][0] > ceiling:
        return top
    single = [w for w, n in counts.items() if n == 1]
    return heapq.nlargest(top_k, top + list(zip(idf(single, unseen), single)))


def _english_lookup(words: list[str], unseen: float) -> list[float]:
    return list(map(_english_idf().get, words, repeat(unseen)))


def summary_of(document: Document) -> str:
    """The first meaningful paragraph of the head, trimmed at a sentence end to about SUMMARY_CHARS."""
    headings = [(b.start, b.end) for b in document.blocks if b.kind == HEADING and b.start < _SAMPLE_CHARS]
    fallback = ""
    for start, para in _paragraphs(document.text[:_SAMPLE_CHARS]):
        if any(hs <= start < he for hs, he in headings):
            continue
        flat = " ".join(para[:_PARAGRAPH_CHARS].split())
        if _meaningful(flat):
            return _trim(flat)
        fallback = fallback or flat
    return _trim(fallback)


def _paragraphs(head: str) -> Iterator[tuple[int, str]]:
    """`(start, stripped text)` of each blank-line-separated paragraph, lazily."""
    pos = 0
    for m in _BLANK_LINE.finditer(head):
        if head[pos : m.start()].strip():
            yield _stripped(head, pos, m.start())
        pos = m.end()
    if head[pos:].strip():
        yield _stripped(head, pos, len(head))


def _stripped(head: str, start: int, end: int) -> tuple[int, str]:
    part = head[start:end]
    return start + len(part) - len(part.lstrip()), part.strip()


def _meaningful(flat: str) -> bool:
    if flat.startswith(("#", "|", "```", "---", "From:", "import ", "from ", "//", "/*")):
        return False
    letters = sum(map(str.isalpha, flat))
    return (letters >= 60 or (has_cjk(flat) and letters >= 20)) and letters / max(len(flat), 1) > 0.5


def _trim(flat: str) -> str:
    if len(flat) <= SUMMARY_CHARS:
        return flat
    cut = flat[:SUMMARY_CHARS]
    ends = [m.start() for m in _SENTENCE_END.finditer(cut) if m.start() > SUMMARY_CHARS // 3]
    return cut[: ends[-1]].rstrip() if ends else cut.rsplit(" ", 1)[0] + " …"
