"""Per-document enrichment: a title, keywords and a lead summary (no LLM).

Keywords are TF-IDF: Chinese words come from jieba's dictionary (segmented with rjieba, the same
cut as jieba about 35x faster) and weighted by jieba.analyse's own IDF table, which is what
`jieba.analyse.extract_tags` computes; Latin words get the same TF-IDF with a flat IDF, a
stopword list and a length prior, since no offline English IDF table ships with our dependencies.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import lru_cache
from pathlib import Path

from docqa.text.segment import STOPWORDS, has_cjk
from docqa.types import HEADING, Document, Enrichment

SUMMARY_CHARS = 300
KEYWORDS = 10
_SAMPLE_CHARS = 200_000  # keywords from the head of very long documents; enough to be stable
_LATIN = re.compile(r"[A-Za-z][A-Za-z\-']{2,}")
_CJK_WORD = re.compile(r"^[\u4e00-\u9fff]{2,}$")
_MARKUP = re.compile(r"^[#=\-*\s]+|[#=\-*\s]+$")
_WEB_NOISE = frozenset({"http", "https", "www", "com", "org", "html", "net"})
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")


@lru_cache(maxsize=1)
def _idf() -> tuple[dict[str, float], float]:
    """jieba.analyse's IDF table and its median (jieba's default for unseen words)."""
    import importlib.util

    # Located without importing jieba.analyse, whose import opens this file and never closes it.
    path = Path(importlib.util.find_spec("jieba").origin).parent / "analyse" / "idf.txt"
    table: dict[str, float] = {}
    with path.open(encoding="utf-8") as fh:
        for line in fh:
            word, _, value = line.rstrip().partition(" ")
            if value:
                table[word] = float(value)
    values = sorted(table.values())
    return table, values[len(values) // 2]


def enrich(document: Document) -> Enrichment:
    """Title, keywords and summary of a document."""
    return Enrichment(title=title_of(document), keywords=keywords_of(document.text), summary=summary_of(document))


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


def keywords_of(text: str, top_k: int = KEYWORDS) -> list[str]:
    """The top TF-IDF keywords of a text (Chinese and Latin words)."""
    sample = text[:_SAMPLE_CHARS]
    counts: Counter[str] = Counter()
    if has_cjk(sample):
        import rjieba

        counts.update(w for w in rjieba.cut(sample, False) if _CJK_WORD.match(w) and w not in STOPWORDS)
    counts.update(w.lower() for w in _LATIN.findall(sample) if w.lower() not in STOPWORDS and w.lower() not in _WEB_NOISE)
    if not counts:
        return []
    idf, median = _idf()
    total = sum(counts.values())

    def weight(word: str) -> float:
        if _CJK_WORD.match(word):
            return idf.get(word, median)
        return median * (0.6 + 0.1 * min(len(word), 10))  # longer Latin words are more specific

    scored = sorted(counts, key=lambda w: (-(counts[w] / total) * weight(w), w))
    return scored[:top_k]


def summary_of(document: Document) -> str:
    """The first meaningful paragraph, trimmed at a sentence end to about SUMMARY_CHARS."""
    headings = {(b.start, b.end) for b in document.blocks if b.kind == HEADING}
    fallback = ""
    for start, para in _paragraphs(document.text):
        if any(hs <= start < he for hs, he in headings):
            continue
        flat = " ".join(para.split())
        if _meaningful(flat):
            return _trim(flat)
        fallback = fallback or flat
    return _trim(fallback)


def _paragraphs(text: str):
    pos = 0
    for part in re.split(r"\n\s*\n", text[:_SAMPLE_CHARS]):
        start = text.find(part, pos) if part else pos
        pos = start + len(part)
        if part.strip():
            yield start + (len(part) - len(part.lstrip())), part.strip()


def _meaningful(flat: str) -> bool:
    if flat.startswith(("#", "|", "```", "---", "From:", "import ", "from ", "//", "/*")):
        return False
    letters = sum(ch.isalpha() for ch in flat)
    return (letters >= 60 or (has_cjk(flat) and letters >= 20)) and letters / max(len(flat), 1) > 0.5


def _trim(flat: str) -> str:
    if len(flat) <= SUMMARY_CHARS:
        return flat
    cut = flat[:SUMMARY_CHARS]
    ends = [m.start() for m in _SENTENCE_END.finditer(cut) if m.start() > SUMMARY_CHARS // 3]
    return cut[: ends[-1]].rstrip() if ends else cut.rsplit(" ", 1)[0] + " …"
