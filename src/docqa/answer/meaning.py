"""Question terms a passage covers by meaning: the user's word for what the documentation writes another way.

Real users paraphrase the documentation ("running" where it says "run", 开放式 where it says 开放, "try" where the FAQ
says "tried", 规定 where the text has 规范), so the decision's `missing_rare` and `matched` (docqa.answer.extractive's
`evidence_features`) counted a question term as missing when the sentence does not write it, and stayed at their worst
for most long Chinese questions.  Here a missing term counts as half covered (`SHARE`) when the sentence, its
neighbours or its passage's title, section and file name hold a word close to it in meaning (`CLOSE`): the cosine of
the two words' vectors under the knowledge base's own embedder (no other model, nothing downloaded), or the same word
in a neighbouring sentence.  (At `CLOSE` 0.9 the first two are covered; try ~ tried, 0.87, and 规定 ~ 规范, 0.76, are
not: lower, near misses were answered on SQuAD 2.0 and the trust dev split.)

An exact token never counts as covered by a near word: a number or anything with a digit, an identifier, a name
(a Latin word the language's word list does not know: `callgrind` is not `helgrind`, `scp` not `rcp`), an exact token
of the question (docqa.text.exact), a one-character Chinese word or a Latin word under three letters (too
ambiguous to judge alone).  Words whose vectors are the same although they differ are the embedder's unknown word,
not a synonym (an unknown Chinese character and another), and count for nothing; nor do opposites, which word
vectors put close together: a word and its negation ("solved" and "unsolved", 支持 and 不支持), or a pair of
antonyms the caller names (docqa.answer.extractive's: "largest" and "smallest", 启用 and 禁用).

`CLOSE` and `SHARE` were fitted on the trust dev split and checked leaving each documentation set out
(benchmarks/RESULTS.md, issue 28, `softcover`); whether the cover counts in the shipped decision is `APPLY`.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from docqa.text.background import rarity
from docqa.text.exact import exact_tokens
from docqa.text.language import has_cjk
from docqa.text.segment import fold, query_terms

# A missing term is covered by a word at least this close in meaning (cosine of the two words' query vectors).
# None: off (nothing is measured).
CLOSE: float | None = 0.9
SHARE = 0.5  # how much of a term a word close in meaning covers: its weight in `missing_rare` and `matched` halved
# The cover counts in the shipped decision's own `missing_rare` and `matched`.  Off: on the trust dev split it gained 3
# answerable questions (false abstentions answered right) and lost no near miss, and CMRC answered more (0.808 ->
# 0.822 at the same abstention), but on SQuAD 2.0 (200) two unanswerable questions more were answered (abstention
# 0.588 -> 0.569), each by one more `matched` term a neighbouring sentence writes: the gain is a nudge of `matched`
# near the threshold, not `missing_rare` (a max over the missing terms, which one paraphrase left uncovered keeps).
# What the cover measures is recorded either way (`meaning_covered`, `meaning_rare`) for a refit to weigh.
APPLY = False
_UNKNOWN = 0.995  # two different words this close are one unknown-word vector, not synonyms
# What negates the word it is put before: "unsolved", "indirect", "nonfree", "disallow", 不支持, 非法, 未知, 无效.
_NEGATING = ("un", "in", "im", "il", "ir", "non", "non-", "dis", "mis", "anti", "不", "非", "未", "无", "没", "反")

Embed = Callable[[list[str], str], np.ndarray]


def judged(word: str) -> bool:
    """A word whose meaning a near word can stand for: not a number or anything with a digit, a Chinese word of two
    characters or more, a Latin word of three letters or more."""
    if any(ch.isdigit() for ch in word):
        return False
    if has_cjk(word):
        return len(word) >= 2
    return len(word) >= 3 and word.isalpha()


def candidates(question: str, terms: list[str], names: list[str]) -> list[str]:
    """The question's terms that may be covered by meaning: `judged` words that are no exact token of the question
    and none of its `names`, and, for a Latin word, one the language's word list knows (a name or jargon is exact)."""
    exact = {fold(t) for t in exact_tokens(question)} | {fold(n) for n in names}
    out = [t for t in dict.fromkeys(fold(t) for t in terms) if judged(t) and t not in exact]
    latin = [t for t in out if not has_cjk(t)]
    unknown = {t for t, r in zip(latin, rarity(latin)) if r >= 1.0}
    return [t for t in out if t not in unknown]


def opposed(a: str, b: str) -> bool:
    """One word is the other negated by a prefix (`_NEGATING`): "solved" and "unsolved", 支持 and 不支持."""
    return any(b == p + a or a == p + b for p in _NEGATING)


def closeness(terms: list[str], text: str, embed: Embed | None,
              opposite: Callable[[str, str], bool] | None = None) -> dict[str, float]:
    """For each of `terms`, how close in meaning the nearest word of `text` is (1.0: the very word), by `embed`'s
    query vectors of single words; an `opposed` word or one `opposite` (the caller's antonyms) counts for nothing.
    {} when off, with no embedder or no term."""
    if CLOSE is None or embed is None or not terms:
        return {}
    words = [w for w in dict.fromkeys(query_terms(text)) if judged(w)]
    if not words:
        return {}
    vectors = embed([*terms, *words], "query")
    sims = vectors[: len(terms)] @ vectors[len(terms) :].T
    same = np.array([[t == w for w in words] for t in terms])
    apart = np.array([[opposed(t, w) or (opposite is not None and opposite(t, w)) for w in words] for t in terms])
    sims[((sims >= _UNKNOWN) & ~same) | apart] = 0.0
    sims[same] = 1.0
    return {t: float(sims[k].max()) for k, t in enumerate(terms)}


def covered(term: str, close: dict[str, float]) -> bool:
    """Whether a missing `term` counts as covered by meaning (half: `SHARE`)."""
    return CLOSE is not None and close.get(term, 0.0) >= CLOSE
