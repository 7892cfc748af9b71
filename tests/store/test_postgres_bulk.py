"""The PostgreSQL bulk path (store/postgres/bulk.py): `replace_documents` writes the rows
`replace_document` writes, with one COPY per table whatever the group's size, atomically; and
`bulk_load` builds a new model's HNSW index once, at its end."""

from __future__ import annotations

import os
import re

import numpy as np
import pytest

from docqa.store import ChunkVectors, DocumentWrite, TextQuery, open_store
from docqa.store.postgres.vectors import has_index
from store.backends import chunks, record

DIMS = 16
WORDS = "alpha beta gamma delta epsilon zeta theta kappa lambda sigma omega river stone cloud 北京 大学".split()


def _writes(version: int, docs: int = 6, seed: int = 3) -> list[DocumentWrite]:
    """Documents of random sentences with vectors; chunk texts repeat across documents (shared vectors)."""
    rng = np.random.default_rng(seed + version)
    out = []
    for d in range(docs):
        texts = [" ".join(rng.choice(WORDS, 6)) for _ in range(5)] + [f"shared paragraph {version}"]
        text, found = chunks(texts)
        hashes = [f"h{version}:{t}" for t in texts]
        block = rng.standard_normal((len(texts), DIMS)).astype(np.float32)
        block /= np.linalg.norm(block, axis=1, keepdims=True)
        rec = record(f"d{d}", f"/docs/{d}.txt", collection="a" if d % 2 else "b", content_hash=f"c{version}-{d}",
                     title=f"Title {d} {WORDS[d]}")
        out.append(DocumentWrite(rec, text, found, {"pages": d}, ChunkVectors("m", hashes, dict(zip(hashes, block)))))
    return out


def _dump(url: str) -> dict:
    """Every row the documents concern owns, keyed by ids (not by the chunk sequence numbers)."""
    import psycopg

    with psycopg.connect(url) as conn:
        rows = lambda sql: sorted(tuple(map(str, r)) for r in conn.execute(sql).fetchall())  # noqa: E731
        return {
            "documents": rows("SELECT * FROM documents"),
            "texts": rows("SELECT * FROM document_texts"),
            "chunks": rows("SELECT id, document_id, ordinal, text, context, char_start, char_end, section, page_start,"
                           " page_end, line_start, line_end, symbol, language, tokens, fts_title, fts_content, embed_hash"
                           " FROM chunks"),
            "postings": rows("SELECT p.term, c.id, p.freq, p.length FROM fts_postings p JOIN chunks c ON c.seq = p.chunk"),
            "terms": rows("SELECT * FROM fts_terms"),
            "totals": rows("SELECT * FROM fts_totals"),
            "vectors": rows("SELECT model, text_hash, vector::text FROM embeddings"),
            "collections": rows("SELECT name FROM collections"),
        }


def _searches(stores) -> list:
    """BM25 and dense results (ties, such as the shared chunks' equal vectors, in id order)."""
    rng = np.random.default_rng(9)
    out = [stores.fulltext.search_text(TextQuery(terms=[a, b], phrase=f"{a} {b}"), 10) for a, b in zip(WORDS, WORDS[3:])]
    for _ in range(5):
        q = rng.standard_normal(DIMS).astype(np.float32)
        out.append([(cid, round(score, 4)) for cid, score in stores.vectors.search_vector(q / np.linalg.norm(q), "m", 10)])
    return [sorted(r, key=lambda x: (-round(x[1], 4), x[0])) for r in out]


def test_a_group_writes_what_one_by_one_writes(postgres_server):
    """Two versions of six documents (the second replaces the first), one by one into one database
    and in groups into another: the same rows in every table, the same search results."""
    one, group = postgres_server.new_database(), postgres_server.new_database()
    results = {}
    for url, grouped in ((one, False), (group, True)):
        with open_store(url) as stores:
            for version in (1, 2):
                writes = _writes(version)
                if grouped:
                    stores.documents.replace_documents(writes[:4])
                    stores.documents.replace_documents(writes[4:])
                else:
                    for w in writes:
                        stores.documents.replace_document(w.record, w.text, w.chunks, w.metadata, w.vectors)
            assert stores.check()["integrity"] == "ok"
            results[grouped] = _searches(stores)
    a, b = _dump(one), _dump(group)
    assert a["chunks"] and a["postings"] and a["vectors"]
    assert not any("h1:" in v[1] for v in b["vectors"])  # version 1's vectors left with its chunks
    for table in a:
        assert a[table] == b[table], table
    assert results[False] == results[True] and any(results[True])


def _statements(trace: str) -> list[str]:
    """The SQL the client sent, from a libpq trace (Parse or Query messages)."""
    parse = re.findall(r'\tF\t\d+\tParse\t "[^"]*" "(.*)"(?: \d+)+$', trace, re.M)
    return parse + re.findall(r'\tF\t\d+\tQuery\t "(.*)"$', trace, re.M)


def _sent(url: str, trace, docs: int) -> list[str]:
    """The statements one `replace_documents` of `docs` documents sends (after a first group)."""
    with open_store(url) as stores, stores.batch():
        stores.documents.replace_documents(_writes(0, docs=1))  # the index exists already
        with stores.db.read() as conn, open(trace, "w") as f:
            conn.pgconn.trace(f.fileno())
            try:
                stores.documents.replace_documents(_writes(1, docs=docs))
            finally:
                conn.pgconn.untrace()
    return _statements(trace.read_text(errors="replace"))


def test_a_group_costs_the_same_statements_whatever_its_size(postgres_server, tmp_path):
    """One COPY per table: what the client sends for 12 documents is what it sends for 2."""
    two = _sent(postgres_server.new_database(), tmp_path / "two.txt", 2)
    twelve = _sent(postgres_server.new_database(), tmp_path / "twelve.txt", 12)
    copies = sorted(s.split(" (")[0] for s in twelve if s.startswith("COPY"))
    assert copies == ["COPY chunks", "COPY document_texts", "COPY documents", "COPY embeddings", "COPY fts_postings"], twelve
    assert twelve == two
    assert not any(s.startswith("INSERT INTO embeddings") for s in twelve)


def test_a_group_is_atomic(postgres_server):
    """A group that fails part-way (a NUL byte the server refuses, in its last document) writes
    nothing: every document keeps its old version."""
    with open_store(postgres_server.new_database()) as stores:
        stores.documents.replace_documents(_writes(1))
        before = _dump(stores.db.url)
        bad = _writes(2)
        bad[-1].text += "\x00"
        with pytest.raises(Exception):  # noqa: B017 - whatever the server refuses with: the point is the rollback
            stores.documents.replace_documents(bad)
        assert _dump(stores.db.url) == before


def test_bulk_load_builds_a_new_models_index_once_at_the_end(postgres_server):
    with open_store(postgres_server.new_database()) as stores:
        with stores.bulk_load():
            stores.documents.replace_documents(_writes(1)[:3])
            stores.documents.replace_documents(_writes(1)[3:])
            with stores.db.read() as conn:
                assert not has_index(conn, "m")  # deferred: no graph insert per vector
        with stores.db.read() as conn:
            assert has_index(conn, "m")
        # A model already indexed keeps its index through a later bulk load.
        with stores.bulk_load():
            stores.documents.replace_documents(_writes(2))
            with stores.db.read() as conn:
                assert has_index(conn, "m")
        assert stores.check()["integrity"] == "ok"
        q = _writes(2)[0].vectors.new
        first = next(iter(q))
        hit = stores.vectors.search_vector(q[first], "m", 1)
        assert hit and stores.documents.get_hits([hit[0][0]])[0].text == _writes(2)[0].chunks[0].text


def test_a_load_killed_before_its_index_build_is_indexed_by_the_next_write(postgres_server):
    """A loader that dies inside bulk_load leaves vectors without an index; searches still answer
    (an exact scan), and the next vector write outside a bulk load creates the index."""
    url = postgres_server.new_database()
    pid = os.fork()
    if pid == 0:  # the loader: writes, commits, dies before the build
        try:
            with open_store(url) as stores, stores.bulk_load():
                stores.documents.replace_documents(_writes(1))
                stores.commit_pending()
                os._exit(0)
        finally:
            os._exit(1)
    assert os.waitpid(pid, 0)[1] == 0
    with open_store(url) as stores:
        with stores.db.read() as conn:
            assert not has_index(conn, "m")
        w = _writes(1)[0]
        first = w.vectors.new[w.vectors.hashes[0]]
        assert stores.vectors.search_vector(first, "m", 1)[0][0] == stores.documents.chunk_ids("d0")[0]
        stores.documents.replace_documents(_writes(2)[:1])
        with stores.db.read() as conn:
            assert has_index(conn, "m")
