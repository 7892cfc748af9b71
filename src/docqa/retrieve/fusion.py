"""Fusing the BM25 and dense lists, and turning scores into a 0..1 relevance users can read.

Both fusions take ranked lists of `(chunk_id, score)`, best first, and return one list of
`(chunk_id, fused)`, best first; ties keep the BM25 order, then the dense order.
"""

from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass

Ranked = Sequence[tuple[str, float]]


def rrf(lists: Sequence[Ranked], k: int = 60, dense_only: Collection[str] = ()) -> list[tuple[str, float]]:
    """Reciprocal rank fusion: sum over lists of 1 / (k + rank), rank counted from 1.

    A chunk in `dense_only` (one full-text search could not have matched: another language
    than the query) counts its last list's term for every list, when that is more than it has.
    """
    fused: dict[str, float] = {}
    for ranked in lists:
        for rank, (chunk_id, _) in enumerate(ranked, start=1):
            fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (k + rank)
    if dense_only and lists:
        for rank, (chunk_id, _) in enumerate(lists[-1], start=1):
            if chunk_id in dense_only:
                fused[chunk_id] = max(fused[chunk_id], len(lists) / (k + rank))
    return _sorted(fused)


def min_max(ranked: Ranked) -> dict[str, float]:
    """Scores rescaled to 0..1 over the list (all 1.0 when they are equal)."""
    if not ranked:
        return {}
    scores = [s for _, s in ranked]
    low, high = min(scores), max(scores)
    span = high - low
    return {cid: (s - low) / span if span > 0 else 1.0 for cid, s in ranked}


def convex(bm25: Ranked, dense: Ranked, dense_weight: float, dense_only: Collection[str] = (),
           impute: float = 1.0) -> list[tuple[str, float]]:
    """w * dense + (1 - w) * bm25 over min-max-normalised scores; a list a chunk is missing from gives 0.

    A chunk in `dense_only` was out of full-text search's reach (it is in another language than
    the query), so its absence from the BM25 list, or a low place in it that a stray shared token
    earned, says nothing against it: its BM25 part is at least `impute` times its dense part.  The retriever sets `impute` to how much of the
    query the best BM25 hit leaves unmatched: when full-text search found a hit holding every
    query term, a same-language exact match keeps the lead; when it matched only stray words,
    a passage in the other language can win.  This is what lets a Chinese question find English text.
    """
    b, d = min_max(bm25), min_max(dense)
    fused = {cid: (1 - dense_weight) * b.get(cid, 0.0) + dense_weight * d.get(cid, 0.0) for cid in {**b, **d}}
    for cid in dense_only:
        if cid in d:
            fused[cid] = dense_weight * d[cid] + (1 - dense_weight) * max(impute * d[cid], b.get(cid, 0.0))
    return _sorted(fused, order=[*b, *d])


def _sorted(fused: dict[str, float], order: Sequence[str] | None = None) -> list[tuple[str, float]]:
    position = {cid: i for i, cid in enumerate(dict.fromkeys(order or fused))}
    return sorted(fused.items(), key=lambda kv: (-kv[1], position[kv[0]]))


@dataclass(frozen=True, slots=True)
class Calibration:
    """Logistic map from a hit's raw evidence to a 0..1 relevance: sigmoid(a*cos + b*log1p(bm25) + c).

    Fitted on the SQuAD 2.0 subset (answerable vs unanswerable questions, top hit) by
    benchmarks/relevance.py, separately per mode, so that 0.5 is where the two classes separate
    best.  A feature the mode does not use has weight 0.
    """

    cos: float
    bm25: float
    bias: float

    def __call__(self, cos: float | None, bm25: float | None) -> float:
        z = self.bias + self.cos * (cos if cos is not None else 0.0) + self.bm25 * math.log1p(max(bm25 or 0.0, 0.0))
        return 1.0 / (1.0 + math.exp(-z))


def monotone(scores: Sequence[float]) -> list[float]:
    """Scores capped so they never rise down the ranking (a user reads them as an ordering)."""
    out: list[float] = []
    for s in scores:
        out.append(min(s, out[-1]) if out else s)
    return out
