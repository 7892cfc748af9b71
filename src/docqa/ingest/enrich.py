"""Per-document enrichment: a title, keywords and a lead summary (no LLM).

Keywords are TF-IDF: Chinese words come from jieba's dictionary (segmented with rjieba, the same
cut as jieba about 35x faster) and weighted by jieba.analyse's own IDF table, which is what
`jieba.analyse.extract_tags` computes; Latin words get the same TF-IDF with an IDF of
-ln(word frequency) from wordfreq's bundled English list, so everyday words ("every", "minutes")
rank below the document's own terms.
"""

from __future__ import annotations

import gzip
import heapq
import math
import operator
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from functools import lru_cache
from itertools import repeat
from pathlib import Path

import numpy as np

from docqa.errors import MissingExtraError
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
_UNSEEN_EN_IDF = 14.0  # rarer than anything in the list: names, jargon (ln of ~1e-6)
_WEB_NOISE = frozenset({"http", "https", "www", "com", "org", "html", "net"})
_CJK_STOPWORDS = tuple(w for w in STOPWORDS if _CJK_WORD.fullmatch(w))
_SENTENCE_END = re.compile(r"(?<=[.!?。！？])\s*")
_BLANK_LINE = re.compile(r"\n\s*\n")


class _Table:
    """A large word -> IDF table in little memory: UTF-8 keys sorted in one numpy array (jieba's
    270,000 words take ~6 MB instead of ~40 MB as a dict), the few longer words in a dict."""

    WIDTH = 12  # bytes: four Chinese characters; 98 % of jieba's words

    def __init__(self, keys: np.ndarray, values: np.ndarray, long: dict[str, float]):
        """`keys` (UTF-8, at most WIDTH bytes) with their `values`; a key given twice keeps its last
        value.  `long`: the longer words."""
        order = np.argsort(keys, kind="stable")
        keys = keys[order]
        last = np.append(keys[1:] != keys[:-1], True)  # the last of equal keys (stable: the later one)
        self._keys = keys[last]
        self._values = values[order][last]
        self._long = long
        every = np.concatenate([self._values, np.fromiter(long.values(), dtype=np.float64, count=len(long))])
        self.highest = float(every.max())
        self.median = float(np.sort(every)[len(every) // 2])

    @classmethod
    def parse(cls, raw: bytes) -> _Table:
        """A table from lines of "word value" (jieba's idf.txt), parsed in numpy: 270,000 Python
        strings and floats would leave ~30 MB of fragmented heap behind in every parser process."""
        data = np.frombuffer(raw + b"\n", dtype=np.uint8)
        ends = np.flatnonzero(data == 10)
        starts = np.concatenate([[0], ends[:-1] + 1])
        spaces = np.flatnonzero(data == 32)
        first = spaces[np.minimum(np.searchsorted(spaces, starts), len(spaces) - 1)] if len(spaces) else ends
        ok = (first > starts) & (first < ends)  # a word and a value
        starts, ends, first = starts[ok], ends[ok], first[ok]
        ends = ends - (data[ends - 1] == 13)  # CRLF
        width = first - starts
        short = width <= cls.WIDTH
        keys = _gather(data, starts[short], first[short], cls.WIDTH)
        values = _gather(data, first[short] + 1, ends[short], 32).astype(np.float64)
        long = {raw[s:e].decode(): float(raw[e + 1 : t]) for s, e, t in zip(starts[~short], first[~short], ends[~short])}
        return cls(keys, values, long)

    def get_many(self, words: list[str], default: float) -> list[float]:
        """The IDF of each word, `default` for a word not in the table."""
        if not words:
            return []
        keys = np.array([w.encode() for w in words], dtype=f"S{self.WIDTH}")  # longer words are cut: looked up below
        at = np.minimum(np.searchsorted(self._keys, keys), len(self._keys) - 1)
        values = np.where(self._keys[at] == keys, self._values[at], default).tolist()
        for i, word in enumerate(words):
            if len(word) * 3 > self.WIDTH and len(word.encode()) > self.WIDTH:
                values[i] = self._long.get(word, default)
        return values


def _gather(data: np.ndarray, starts: np.ndarray, ends: np.ndarray, width: int) -> np.ndarray:
    """data[starts[i]:ends[i]] (each at most `width` bytes) as one fixed-width bytes array, in slices
    of 32,768 rows so that the index arrays stay small."""
    out = np.zeros((len(starts), width), dtype=np.uint8)
    columns = np.arange(width)
    for at in range(0, len(starts), 32_768):
        s, e = starts[at : at + 32_768, None], ends[at : at + 32_768, None]
        index = s + columns
        out[at : at + 32_768] = np.where(index < e, data[np.minimum(index, len(data) - 1)], 0)
    return out.view(f"S{width}").ravel()


@lru_cache(maxsize=1)
def _idf() -> _Table:
    """jieba.analyse's IDF table (its median is jieba's default for unseen words)."""
    import importlib.util

    # Located without importing jieba.analyse, whose import opens this file and never closes it.
    path = Path(importlib.util.find_spec("jieba").origin).parent / "analyse" / "idf.txt"
    return _Table.parse(path.read_bytes())


@lru_cache(maxsize=1)
def _english_idf() -> dict[str, float]:
    """-ln(frequency) of English words from wordfreq's bundled 'small' list (no download), with
    stopwords and web-address parts at 0 so they never rank.

    Read from wordfreq's data file directly: importing wordfreq costs ~13 MB and 85 ms in every parser
    process.  The file is a list of buckets, bucket i holding the words of frequency 10^(-i/100)
    (wordfreq's "cB" format, version 1; a test checks the table against wordfreq's own)."""
    import importlib.util

    import msgpack

    path = Path(importlib.util.find_spec("wordfreq").origin).parent / "data" / "small_en.msgpack.gz"
    with gzip.open(path, "rb") as fh:
        header, *buckets = msgpack.load(fh, raw=False)
    if header != {"format": "cB", "version": 1}:
        raise MissingExtraError(f"keyword extraction ({path} has an unexpected format {header!r})",
                                "pip install --force-reinstall wordfreq==3.1.1")
    step = math.log(10) / 100
    table = {word: i * step for i, bucket in enumerate(buckets) for word in bucket}
    table.update(dict.fromkeys(STOPWORDS | _WEB_NOISE, 0.0))
    return table


@lru_cache(maxsize=1)
def _ceilings() -> tuple[float, float]:
    """The highest IDF an English and a Chinese word can get (unseen words included)."""
    return max(_UNSEEN_EN_IDF, *_english_idf().values()), _idf().highest


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
