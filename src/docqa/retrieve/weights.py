"""Term weights: a query term's inverse document frequency, one formula for every caller.

BM25's IDF in the non-negative form Lucene uses, `ln(1 + (N - n + 0.5) / (n + 0.5))` for a term
in `n` of `N` chunks: rare terms weigh about ln(N / n), a term in every chunk almost nothing.
Hybrid fusion uses it to measure how much of a query full-text search left unmatched; the
extractive answerer to weigh the question's terms in a sentence.
"""

from __future__ import annotations

import math
from collections.abc import Callable

# The store's term_counts: (chunks containing each term, all chunks).
TermCounts = Callable[[list[str]], tuple[dict[str, int], int]]


def idf(n: int, total: int) -> float:
    """The inverse document frequency of a term found in `n` of `total` chunks."""
    return math.log(1 + (total - n + 0.5) / (n + 0.5))


def term_weights(term_counts: TermCounts, terms: list[str]) -> dict[str, float]:
    """IDF of each term, from one `term_counts` call."""
    counts, total = term_counts(terms)
    return {t: idf(n, total) for t, n in counts.items()}


def term_weights_and_total(term_counts: TermCounts, terms: list[str]) -> tuple[dict[str, float], int]:
    """`term_weights` and the number of chunks they were counted over, from one `term_counts` call."""
    counts, total = term_counts(terms)
    return {t: idf(n, total) for t, n in counts.items()}, total
