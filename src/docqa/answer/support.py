"""How well a piece of source text supports a sentence: shared content words.

Latin words are lower-cased and cut to a short stem (so "indexes" meets "indexing"); Chinese
is compared by character bigrams, which do not depend on how a segmenter splits words and
so match a paraphrase's wording as well as the source's.  Numbers are normalised like the
fact checker does (1,000 = 1000, full-width digits, simple Chinese numerals).
"""

from __future__ import annotations

import re
from collections.abc import Iterable

from docqa.answer.facts import normalise
from docqa.text.language import HAN_RUN
from docqa.text.segment import STOPWORDS

_LATIN = re.compile(r"[A-Za-z][A-Za-z0-9_'-]*|\d+(?:\.\d+)?%?")
_CJK_STOP = frozenset("的了是在和与及或也就都而之其这那有为以于个吗呢吧啊")


def content_tokens(text: str) -> set[str]:
    """The content words of `text` as comparable tokens (stems, numbers, Chinese bigrams)."""
    norm = normalise(text)
    out: set[str] = set()
    for m in _LATIN.finditer(norm):
        word = m.group().lower().strip("'-")
        if not word or word in STOPWORDS or (len(word) < 2 and not word.isdigit()):
            continue
        out.add(word[: max(4, len(word) - 2)] if word.isalpha() and len(word) > 5 else word)
    for m in HAN_RUN.finditer(norm):
        run = "".join(ch for ch in m.group() if ch not in _CJK_STOP) if len(m.group()) > 2 else m.group()
        if len(run) == 1:
            out.add(run)
        out.update(run[i : i + 2] for i in range(len(run) - 1))
    return out


def support(claim: set[str], source: set[str], weights: dict[str, float] | None = None) -> float:
    """Share of the claim's tokens found in the source (0 when the claim has none)."""
    if not claim:
        return 0.0
    if weights is None:
        return len(claim & source) / len(claim)
    total = sum(weights.get(t, 1.0) for t in claim)
    return sum(weights.get(t, 1.0) for t in claim & source) / total if total else 0.0


def jaccard(a: set[str], b: set[str]) -> float:
    return len(a & b) / len(a | b) if a and b else 0.0


def union(sets: Iterable[set[str]]) -> set[str]:
    out: set[str] = set()
    for s in sets:
        out |= s
    return out
