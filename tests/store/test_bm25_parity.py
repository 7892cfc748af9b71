"""The PostgreSQL full text ranks like SQLite's FTS5: same corpus, same queries, same top 10 and scores.

Both backends get the same documents (titles, keywords, summaries, English and Chinese text);
PostgreSQL keeps its own postings and corpus statistics and must reproduce FTS5's weighted
bm25(), the proximity boost and the phrase boost.
"""

from __future__ import annotations

import random

import pytest

from docqa.retrieve import parse_query
from docqa.store import ChunkFilter, open_store
from store.backends import chunks, record

WORDS = tuple(("vaccine immune response cell protein gene expression mouse tumor growth signal pathway receptor "
         "binding clinical trial patient dose risk factor cohort study blood pressure heart failure").split())
CHINESE = ["密钥轮换策略", "数据库备份与恢复", "向量检索的召回率", "全文检索排序", "服务器部署指南"]
QUERIES = ["immune response", "tumor growth factor", "clinical trial dose", "receptor binding protein",
           "heart failure risk", "密钥轮换", "数据库备份", "gene expression in mouse cells", "blood pressure cohort study"]


def _corpus(rng: random.Random) -> list[tuple]:
    # Zipf-like: a few words are common, most rare, so IDFs spread as in real text (none floored).
    vocabulary = WORDS + tuple(f"{a}{b}" for a in ("ka", "lo", "mi", "nu", "pe", "ro") for b in ("tan", "vel", "dor", "sim", "ax"))
    weights = [1 / (rank + 3) for rank in range(len(vocabulary))]
    rng.shuffle(weights)
    docs = []
    for i in range(60):
        paragraphs = [" ".join(rng.choices(vocabulary, weights, k=rng.randint(6, 40))) for _ in range(rng.randint(1, 4))]
        if i % 7 == 0:
            paragraphs.append(rng.choice(CHINESE) + "，" + rng.choice(CHINESE) + "。")
        title = " ".join(rng.sample(WORDS, 2)).title()
        rec = record(f"d{i:02}", f"/docs/{'a' if i % 2 else 'b'}/doc{i:02}.{'md' if i % 3 else 'txt'}",
                     content_hash=f"h{i}", title=title)
        rec.keywords, rec.summary = rng.sample(WORDS, 3), " ".join(rng.sample(WORDS, 5))
        docs.append((rec, *chunks(paragraphs)))
    return docs


@pytest.fixture(scope="module")
def both(postgres_server, tmp_path_factory):
    corpus = _corpus(random.Random(14))
    opened = [open_store(str(tmp_path_factory.mktemp("parity") / "kb.db")), open_store(postgres_server.new_database())]
    for stores in opened:
        for rec, text, found in corpus:
            stores.documents.replace_document(rec, text, found)
    yield opened
    for stores in opened:
        stores.close()


@pytest.mark.parametrize("query", QUERIES)
@pytest.mark.parametrize("where", [None, ChunkFilter(path_glob="docs/a/*"), ChunkFilter(types=("md",))], ids=["all", "glob", "type"])
def test_same_top10_and_scores(both, query, where):
    sqlite, postgres = (s.fulltext.search_text(parse_query(query), 10, where) for s in both)
    assert sqlite, "the corpus should match every query"
    assert [i for i, _ in postgres] == [i for i, _ in sqlite]
    assert [s for _, s in postgres] == pytest.approx([s for _, s in sqlite], rel=1e-9)


def test_statistics_follow_updates_and_deletes(both):
    sqlite, postgres = both
    for stores in both:
        text, found = chunks(["an entirely new immune response text"])
        stores.documents.replace_document(record("d03", "/docs/a/doc03.txt", content_hash="new"), text, found)
        stores.documents.delete_documents(["d05", "d08"])
    for query in QUERIES[:4]:
        expected, got = (s.fulltext.search_text(parse_query(query), 10) for s in both)
        assert [i for i, _ in got] == [i for i, _ in expected]
        assert [s for _, s in got] == pytest.approx([s for _, s in expected], rel=1e-9)
    # A fresh SQLite connection: SQLite's own cache of the counts misses writes made on its connection.
    with open_store(sqlite.path) as fresh:
        assert fresh.fulltext.term_counts(["immune", "cells"]) == postgres.fulltext.term_counts(["immune", "cells"])
    assert postgres.check()["integrity"] == "ok"
