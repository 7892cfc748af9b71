"""Many documents at once: one COPY per table, and the HNSW index built once after a large load.

`write_documents` is `PostgresDocuments.replace_documents`: a group of documents replaces its old
rows in one transaction (a savepoint inside an ingest batch) with one DELETE per table for the old
rows, one COPY per table for the new ones (documents, texts, chunks, full-text postings, vectors)
and one statement for the BM25 statistics, instead of about fifteen statements per document.  The
rows are those `replace_document` writes (the contract tests compare both), and the group is
atomic as a whole, so each of its documents is wholly old or wholly new after a crash.

`deferred_index` is `PostgresStores.bulk_load`: while it is open, vectors of a model that has no
HNSW index yet are written without one (each insert into an HNSW graph costs a graph search), and
on the way out the index is built once, with a large `maintenance_work_mem` and parallel
maintenance workers.  A loader killed before that leaves no index: searches stay right (an exact
scan) and the next vector written creates it (vectors.py `_ensure_index`).  A model that already
has an index keeps it and is written through it: dropping a large graph to add a few documents
would cost more than it saves.
"""

from __future__ import annotations

import json
from collections.abc import Collection
from contextlib import contextmanager

from docqa.store.documents import DocumentWrite
from docqa.store.postgres.fulltext import index_chunks, unindex_chunks
from docqa.store.postgres.vectors import copy_vectors, create_index, drop_orphan_vectors, has_index
from docqa.store.sqlite.documents import _chunk_row  # the same chunk ids and indexed text on both backends
from docqa.text import segmenter

BUILD_MEMORY = "2GB"  # maintenance_work_mem of the one index build: 1M x 384 halfvec graphs fit
BUILD_WORKERS = 2  # parallel maintenance workers (capped by the server's max_parallel_workers)
DOCUMENT_COLUMNS = ("id, collection, path, type, language, title, keywords, summary, size, mtime_ns, content_hash,"
                    " chunk_count, status, error, indexed_at, metadata")
CHUNK_COLUMNS = ("seq, id, document_id, ordinal, text, context, char_start, char_end, section, page_start, page_end,"
                 " line_start, line_end, symbol, language, tokens, fts_title, fts_content, embed_hash")


def chunk_rows(w: DocumentWrite) -> tuple[list[tuple], str, str]:
    """(chunk rows without their seq, keywords and summary as indexed) of one document."""
    record = w.record
    segment = segmenter(w.segmented)
    title = segment(record.title)
    keywords, summary = segment(" ".join(record.keywords)), segment(record.summary)
    hashes = w.vectors.hashes if w.vectors is not None else [None] * len(w.chunks)
    if len(hashes) != len(w.chunks):
        raise ValueError(f"{len(hashes)} text hashes for {len(w.chunks)} chunks")
    rows = [(*_chunk_row(record.document_id, record.content_hash, title, c, segment), h) for c, h in zip(w.chunks, hashes)]
    return rows, keywords, summary


def postings_rows(seqs: list[int], rows: list[tuple], keywords: str, summary: str) -> list[tuple]:
    """(seq, title, keywords, summary, content) of each chunk, as `index_chunks` takes them."""
    return [(seq, row[-3], keywords, summary if row[2] == 0 else "", row[3] if row[-2] is None else row[-2])
            for seq, row in zip(seqs, rows)]


def reserve_seqs(conn, count: int) -> list[int]:
    return [r[0] for r in conn.execute(
        "SELECT nextval(pg_get_serial_sequence('chunks', 'seq')) FROM generate_series(1, %s)", (count,))]


def copy_rows(conn, table: str, rows) -> None:
    with conn.cursor() as cur, cur.copy(f"COPY {table} FROM STDIN") as copy:
        for row in rows:
            copy.write_row(row)


def write_documents(conn, writes: list[DocumentWrite], index: bool = True) -> None:
    """Replace the rows of these documents (distinct ids) inside the caller's transaction."""
    ids = [w.record.document_id for w in writes]
    if len(set(ids)) != len(ids):
        raise ValueError("replace_documents: each document may appear once in a group")
    prepared = [chunk_rows(w) for w in writes]
    for name in dict.fromkeys(w.record.collection for w in writes):
        conn.execute("INSERT INTO collections VALUES (%s, now()::text) ON CONFLICT DO NOTHING", (name,))
    old_hashes = delete_rows(conn, ids)
    conn.execute("DELETE FROM documents WHERE id = ANY(%s)", (ids,))
    copy_rows(conn, f"documents ({DOCUMENT_COLUMNS})", (document_row(w) for w in writes))
    copy_rows(conn, "document_texts (document_id, text)", ((w.record.document_id, w.text) for w in writes))
    seqs = iter(reserve_seqs(conn, sum(len(rows) for rows, _, _ in prepared)))
    numbered = [([next(seqs) for _ in rows], rows, keywords, summary) for rows, keywords, summary in prepared]
    copy_rows(conn, f"chunks ({CHUNK_COLUMNS})", ((seq, *row) for s, rows, _, _ in numbered for seq, row in zip(s, rows)))
    index_chunks(conn, [p for n in numbered for p in postings_rows(*n)])
    for model, vectors in _new_vectors(writes).items():
        copy_vectors(conn, model, vectors, index=index)
    drop_orphan_vectors(conn, old_hashes)


def delete_rows(conn, document_ids: list[str]) -> list[str]:
    """Delete documents' chunks (their postings cascade), statistics and texts; returns their chunks' text hashes."""
    rows = conn.execute("SELECT seq, embed_hash FROM chunks WHERE document_id = ANY(%s)", (document_ids,)).fetchall()
    if rows:
        unindex_chunks(conn, [r[0] for r in rows])
        conn.execute("DELETE FROM chunks WHERE document_id = ANY(%s)", (document_ids,))
    conn.execute("DELETE FROM document_texts WHERE document_id = ANY(%s)", (document_ids,))
    return sorted({r[1] for r in rows if r[1] is not None})


def document_row(w: DocumentWrite) -> tuple:
    r = w.record
    return (r.document_id, r.collection, r.path, r.type, r.language, r.title, json.dumps(r.keywords, ensure_ascii=False),
            r.summary, r.size, r.mtime_ns, r.content_hash, len(w.chunks), r.status, r.error, r.indexed_at,
            json.dumps(w.metadata or {}, ensure_ascii=False, default=str))


def _new_vectors(writes: list[DocumentWrite]) -> dict[str, dict]:
    by_model: dict[str, dict] = {}
    for w in writes:
        if w.vectors is not None and w.vectors.model and w.vectors.new:
            by_model.setdefault(w.vectors.model, {}).update(w.vectors.new)
    return by_model


@contextmanager
def deferred_index(db):
    """While open, this thread writes vectors of unindexed models without an index; built once on exit."""
    with db.read() as conn:
        before = {m for (m,) in conn.execute("SELECT DISTINCT model FROM embeddings")}
        indexed = {m for m in before if has_index(conn, m)}
    db.defer_index(True)
    try:
        yield
    finally:
        db.defer_index(False)
    build_indexes(db, skip=indexed)


def build_indexes(db, skip: Collection[str] = frozenset()) -> list[str]:
    """Create the missing HNSW index of every model with vectors (one build each); returns the models indexed."""
    built = []
    with db.read() as conn:
        models = conn.execute("SELECT model, vector_dims(vector) FROM (SELECT DISTINCT ON (model) model, vector"
                              " FROM embeddings ORDER BY model) m").fetchall()
        for model, dims in models:
            if model in skip or has_index(conn, model):
                continue
            with conn.transaction():
                conn.execute(f"SET LOCAL maintenance_work_mem = '{BUILD_MEMORY}'")
                conn.execute(f"SET LOCAL max_parallel_maintenance_workers = {int(BUILD_WORKERS)}")
                create_index(conn, model, dims)
            built.append(model)
    return built
