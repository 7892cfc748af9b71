"""One IDF for hybrid fusion and the extractive answerer."""

from __future__ import annotations

import math

import pytest

from docqa.retrieve.weights import idf, term_weights


@pytest.mark.parametrize("n,total,expected", [
    (1, 1000, math.log(1 + 999.5 / 1.5)),   # rare: about ln(N / n)
    (500, 1000, math.log(2)),               # in half the chunks
    (1000, 1000, math.log(1 + 0.5 / 1000.5)),  # in every chunk: almost nothing, never negative
    (0, 0, math.log(2)),                    # an empty index
])
def test_idf(n, total, expected):
    assert idf(n, total) == pytest.approx(expected)


def test_term_weights_asks_the_store_once():
    calls = []

    def term_counts(terms):
        calls.append(terms)
        return {"backup": 3, "the": 90}, 100

    weights = term_weights(term_counts, ["backup", "the"])
    assert calls == [["backup", "the"]]
    assert weights["backup"] > weights["the"] > 0
