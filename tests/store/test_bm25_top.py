"""PostgreSQL's early-terminating BM25 top k returns exactly what scoring every posting returns.

A generated corpus where a few tokens are in almost every chunk (and many chunks tie: same counts,
same lengths), queried with common, rare, repeated and mixed tokens, with and without filters: the
top k read through impact-ordered postings (`prune_from_postings=0`: always) has the same chunk ids
in the same order and the same scores as the exhaustive ranking (`prune_from_postings=inf`: never).
"""

from __future__ import annotations

import math
import random

import pytest

from docqa.retrieve import parse_query
from docqa.store import ChunkFilter, open_store
from docqa.store.documents import DocumentWrite
from docqa.store.postgres.fulltext import TOKENS, PostgresFullText, _idf, _rank_top, _score
from docqa.store.postgres.tokens import WEIGHTS
from store.backends import chunks, record

COMMON = ["cell", "protein", "gene", "signal"]  # in nearly every chunk, several times
MIDDLE = [f"mid{i}" for i in range(6)]  # in some
RARE = [f"rare{i}" for i in range(40)]  # in a few
QUERIES = ["cell", "cell protein", "cell protein gene signal", "gene gene", "cell mid1", "mid2 mid3", "signal rare3",
           "mid4 rare7 protein", "rare1", "rare2 rare9", "gene cell mid0 mid5", "nowhere signal"]


def _paragraph(rng: random.Random) -> str:
    words = rng.choices(COMMON, k=rng.choice([4, 8, 8, 12]))
    words += rng.choices(MIDDLE, k=rng.randint(0, 3)) + rng.choices(RARE, k=rng.randint(0, 1))
    rng.shuffle(words)
    return " ".join(words + ["filler"] * rng.choice([0, 0, 2, 5]))


@pytest.fixture(scope="module")
def postgres(postgres_server):
    rng = random.Random(3)
    stores = open_store(postgres_server.new_database())
    writes = []
    for i in range(150):
        text, found = chunks([_paragraph(rng) for _ in range(12)])
        writes.append(DocumentWrite(record(f"d{i:03}", f"/docs/{'a' if i % 3 else 'b'}/doc{i:03}.txt", title=rng.choice(COMMON)),
                                    text, found))
    stores.documents.replace_documents(writes)
    yield stores
    stores.close()


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("where", [None, ChunkFilter(path_glob="docs/a/*")], ids=["all", "glob"])
@pytest.mark.parametrize("top_k", [1, 10, 40])
def test_early_termination_is_exact(postgres, query, where, top_k):
    every, early = (PostgresFullText(postgres.db, prune_from_postings=n) for n in (math.inf, 0))
    expected = every.search_text(parse_query(query), top_k, where)
    got = early.search_text(parse_query(query), top_k, where)
    assert expected
    assert [i for i, _ in got] == [i for i, _ in expected]
    assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-12)


def test_ties_are_many(postgres):
    """The corpus is the hard case: the exhaustive pool of a common token is full of equal scores."""
    scores = [s for _, s in PostgresFullText(postgres.db, prune_from_postings=math.inf).search_text(parse_query("cell"), 40)]
    assert len(scores) - len(set(scores)) >= 10


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("pool", [3, 30, 120])
def test_the_threshold_algorithm_itself_is_exact(postgres, query, pool):
    """`_rank_top` made to read through the index even where scanning every posting would be cheaper
    (`search_text` would then scan), against scoring every posting."""
    tokens = [x for t in parse_query(query).terms for x in TOKENS.terms(t)]
    with postgres.db.snapshot() as conn:
        df, chunks_, total = PostgresFullText._statistics(conn, tokens)
        weighted = [(x, _idf(df.get(x, 0), chunks_)) for x in tokens]
        every = _score(conn, weighted, total / chunks_, pool, "TRUE", [], None)
        early = _rank_top(conn, weighted, df, total / chunks_, pool, "TRUE", [], scan_when_cheaper=False)
    if len(every) < pool:  # fewer matches than the pool: nothing to terminate early, every posting is scored
        assert early is None
        return
    assert early is not None
    assert [r[0] for r in early] == [r[0] for r in every]
    assert [r[1] for r in early] == pytest.approx([r[1] for r in every], rel=1e-12)
    assert [r[2] for r in early] == [r[2] for r in every]


def test_counts_are_whole_numbers():
    """The top k reads a token's postings count level by count level (`freq = 1, 2, ...`): the field
    weights must stay whole numbers, or postings of a fractional count would never be read."""
    assert all(w == int(w) for w in WEIGHTS)
