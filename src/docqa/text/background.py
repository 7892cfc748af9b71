"""How rare a word is in the language, whatever the collection: the background a small collection's own
counts cannot give.

English: -ln(word frequency) from wordfreq's bundled 'small' list (no download); Chinese: jieba's IDF
table (jieba.analyse's).  Keyword extraction (docqa.ingest.enrich) ranks a document's words by them; the
answer-or-abstain decision (docqa.answer.answerability) weighs a question's terms by them when the
knowledge base is too small for its own document frequencies to tell an everyday word from a rare one.
"""

from __future__ import annotations

import gzip
import math
from functools import lru_cache
from pathlib import Path

import numpy as np

from docqa.errors import MissingExtraError
from docqa.text.language import has_cjk
from docqa.text.segment import STOPWORDS

UNSEEN_EN_IDF = 14.0  # rarer than anything in the list: names, jargon (ln of ~1e-6)
_WEB_NOISE = frozenset({"http", "https", "www", "com", "org", "html", "net"})


class Table:
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
    def parse(cls, raw: bytes) -> Table:
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
def chinese_idf() -> Table:
    """jieba.analyse's IDF table (its median is jieba's default for unseen words)."""
    import importlib.util

    # Located without importing jieba.analyse, whose import opens this file and never closes it.
    path = Path(importlib.util.find_spec("jieba").origin).parent / "analyse" / "idf.txt"
    return Table.parse(path.read_bytes())


@lru_cache(maxsize=1)
def english_idf() -> dict[str, float]:
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
def ceilings() -> tuple[float, float]:
    """The highest IDF an English and a Chinese word can get (unseen words included)."""
    return max(UNSEEN_EN_IDF, *english_idf().values()), chinese_idf().highest


def rarity(words: list[str]) -> list[float]:
    """How rare each word is in its language, 0 (a stopword, "the") to 1 (unseen: a name, jargon): its
    background IDF over the highest one.  A Chinese word jieba does not know gets jieba's median."""
    english, chinese = ceilings()
    table = english_idf()
    zh = [w for w in words if has_cjk(w)]
    looked = dict(zip(zh, chinese_idf().get_many(zh, chinese_idf().median)))
    return [looked[w] / chinese if has_cjk(w) else table.get(w.lower(), UNSEEN_EN_IDF) / english for w in words]
