"""PostgresVectors: halfvec vectors (pgvector) by (model, text hash), searched by an HNSW cosine index.

A model's HNSW index is an expression index over `vector::halfvec(D)` for that model's rows, made
when its first vectors arrive (the width is known only then).  A filtered search must not lose
recall: when the filter admits at most EXACT_LIMIT chunks it is answered exactly (a scan of those
chunks' vectors); above that, through the index with pgvector's iterative scan, which keeps
walking the graph until enough rows pass the filter.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Iterable

import numpy as np

from docqa.errors import StoreError
from docqa.store.base import ChunkFilter
from docqa.store.postgres.db import PostgresDB
from docqa.store.postgres.rows import filter_sql
from docqa.store.vectors import EmbedInput, VectorStore

EXACT_LIMIT = 20_000  # admitted chunks up to which a filtered search scans exactly (~10 ms at 384 dims)
EF_SEARCH = 100


def _halfvec(vector) -> object:
    from pgvector import HalfVector

    return HalfVector(np.asarray(vector, dtype=np.float32))


def index_name(model: str) -> str:
    return "embeddings_hnsw_" + hashlib.blake2b(model.encode(), digest_size=6).hexdigest()


def insert_vectors(conn, model: str, vectors: dict[str, np.ndarray], index: bool = True) -> None:
    """Write vectors of `model` by text hash (inside the caller's transaction), indexing the model on
    first use unless `index` is False (a bulk load builds the index once at its end: bulk.py)."""
    if not vectors:
        return
    if index:
        _ensure_index(conn, model, len(next(iter(vectors.values()))))
    with conn.cursor() as cur:
        cur.executemany("INSERT INTO embeddings (model, text_hash, vector) VALUES (%s, %s, %s)"
                        " ON CONFLICT (model, text_hash) DO UPDATE SET vector = excluded.vector",
                        [(model, h, _halfvec(v)) for h, v in vectors.items()])


def copy_vectors(conn, model: str, vectors: dict[str, np.ndarray], index: bool = True) -> None:
    """`insert_vectors` with COPY: the hashes' old rows are deleted first (the upsert's effect)."""
    if not vectors:
        return
    if index:
        _ensure_index(conn, model, len(next(iter(vectors.values()))))
    conn.execute("DELETE FROM embeddings WHERE model = %s AND text_hash = ANY(%s)", (model, list(vectors)))
    with conn.cursor() as cur, cur.copy("COPY embeddings (model, text_hash, vector) FROM STDIN") as copy:
        for h, v in vectors.items():
            copy.write_row((model, h, _halfvec(v)))


def has_index(conn, model: str) -> bool:
    return conn.execute("SELECT 1 FROM pg_class WHERE relname = %s", (index_name(model),)).fetchone() is not None


def _ensure_index(conn, model: str, dims: int) -> None:
    if not has_index(conn, model):
        create_index(conn, model, dims)


def create_index(conn, model: str, dims: int) -> None:
    """The HNSW cosine index of one model's vectors (an expression index: `halfvec(dims)`)."""
    from psycopg import sql

    conn.execute(sql.SQL("CREATE INDEX IF NOT EXISTS {} ON embeddings USING hnsw ((vector::halfvec({})) halfvec_cosine_ops)"
                         " WHERE model = {}").format(sql.Identifier(index_name(model)), sql.Literal(dims), sql.Literal(model)))


def drop_orphan_vectors(conn, hashes: list[str]) -> None:
    """Delete the vectors of texts no chunk uses any more (run after the new rows are in)."""
    if hashes:
        conn.execute("DELETE FROM embeddings e WHERE e.text_hash = ANY(%s) AND NOT EXISTS"
                     " (SELECT 1 FROM chunks c WHERE c.embed_hash = e.text_hash)", (hashes,))


class PostgresVectors(VectorStore):
    """Vectors in PostgreSQL, searched by HNSW (or exactly, for a narrow filter)."""

    def __init__(self, db: PostgresDB, exact_limit: int = EXACT_LIMIT):
        self.db, self.exact_limit = db, exact_limit

    def search_vector(self, vector: np.ndarray, model: str, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        with self.db.read() as conn:
            dims = conn.execute("SELECT vector_dims(vector) FROM embeddings WHERE model = %s LIMIT 1", (model,)).fetchone()
            if dims is None:
                return []
            if dims[0] != vector.shape[-1]:
                raise StoreError(f"query vector has {vector.shape[-1]} dimensions, the index {dims[0]}: run 'docqa reindex'")
            filtered = where is not None and not where.empty
            clause, args = filter_sql(where) if filtered else ("TRUE", [])
            join = " JOIN documents d ON d.id = c.document_id" if filtered else ""
            exact = filtered and conn.execute(f"SELECT count(*) FROM (SELECT 1 FROM chunks c{join} WHERE {clause}"
                                              f" LIMIT {self.exact_limit + 1}) x", args).fetchone()[0] <= self.exact_limit
            expr = f"(e.vector::halfvec({int(dims[0])}))"
            sql = (f"SELECT c.id, 1 - ({expr} <=> %s::halfvec({int(dims[0])})) FROM embeddings e"
                   f" JOIN chunks c ON c.embed_hash = e.text_hash{join} WHERE e.model = %s AND {clause}"
                   f" ORDER BY {expr} <=> %s::halfvec({int(dims[0])}) LIMIT %s")
            query = _halfvec(vector)
            with conn.transaction():
                if exact:
                    conn.execute("SET LOCAL enable_indexscan = off")  # a narrow filter: scan its chunks exactly
                else:
                    conn.execute(f"SET LOCAL hnsw.ef_search = {max(EF_SEARCH, top_k)}")
                    conn.execute("SET LOCAL hnsw.iterative_scan = relaxed_order")
                rows = conn.execute(sql, (query, model, *args, query, top_k)).fetchall()
        return sorted(((r[0], float(r[1])) for r in rows), key=lambda x: -x[1])

    def known_vectors(self, model: str, hashes: Iterable[str]) -> set[str]:
        with self.db.read() as conn:
            return {r[0] for r in conn.execute("SELECT text_hash FROM embeddings WHERE model = %s AND text_hash = ANY(%s)",
                                               (model, list(dict.fromkeys(hashes))))}

    def set_vectors_pending(self, pending: bool) -> None:
        with self.db.transaction(documents=True) as conn:
            if pending:
                conn.execute("INSERT INTO meta VALUES ('vectors_pending', '1') ON CONFLICT (key) DO NOTHING")
            else:
                conn.execute("DELETE FROM meta WHERE key = 'vectors_pending'")

    def vectors_pending(self) -> bool:
        return self.db.one("SELECT 1 FROM meta WHERE key = 'vectors_pending'") is not None

    def missing_vectors(self, model: str, chunk_ids: list[str]) -> set[str]:
        if not chunk_ids:
            return set()
        with self.db.read() as conn:
            return {r[0] for r in conn.execute(
                """SELECT c.id FROM chunks c WHERE c.id = ANY(%s) AND NOT EXISTS
                       (SELECT 1 FROM embeddings e WHERE e.model = %s AND e.text_hash = c.embed_hash)""", (chunk_ids, model))}

    def put_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self.db.transaction(documents=True) as conn:
            used = {r[0] for r in conn.execute("SELECT DISTINCT embed_hash FROM chunks WHERE embed_hash = ANY(%s)", (list(vectors),))}
            insert_vectors(conn, model, {h: v for h, v in vectors.items() if h in used}, index=not self.db.index_deferred())

    def embedder(self) -> str | None:
        return self.db.one("SELECT value FROM meta WHERE key = 'embedder'")

    def set_embedder(self, fingerprint: str | None, model: str | None) -> None:
        with self.db.transaction(documents=True) as conn:
            if fingerprint is None:
                conn.execute("DELETE FROM meta WHERE key = 'embedder'")
                conn.execute("DELETE FROM embeddings")
            else:
                conn.execute("INSERT INTO meta VALUES ('embedder', %s) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                             (fingerprint,))
                conn.execute("DELETE FROM embeddings WHERE model != %s", (model,))
            keep = [] if model is None or fingerprint is None else [index_name(model)]
            for (name,) in conn.execute("SELECT indexname FROM pg_indexes WHERE tablename = 'embeddings'"
                                        " AND indexname LIKE 'embeddings_hnsw_%%' AND NOT indexname = ANY(%s)", (keep,)).fetchall():
                conn.execute(f'DROP INDEX IF EXISTS "{name}"')  # names are ours: embeddings_hnsw_<hex>

    def unembedded(self, model: str, limit: int) -> list[EmbedInput]:
        with self.db.read() as conn:
            rows = conn.execute(
                """SELECT DISTINCT ON (c.embed_hash) c.embed_hash, d.title, c.section, c.context, c.text, c.symbol
                   FROM chunks c JOIN documents d ON d.id = c.document_id
                   WHERE c.embed_hash IS NOT NULL AND NOT EXISTS
                       (SELECT 1 FROM embeddings e WHERE e.model = %s AND e.text_hash = c.embed_hash)
                   ORDER BY c.embed_hash LIMIT %s""", (model, limit)).fetchall()
        return [EmbedInput(r[0], r[1], json.loads(r[2]), r[3], r[4], r[5]) for r in rows]

    def fill_hashes(self, hasher: Callable[[EmbedInput], str]) -> int:
        done = 0
        while True:
            with self.db.read() as conn:
                rows = conn.execute("SELECT c.seq, d.title, c.section, c.context, c.text, c.symbol FROM chunks c"
                                    " JOIN documents d ON d.id = c.document_id WHERE c.embed_hash IS NULL LIMIT 2000").fetchall()
            if not rows:
                return done
            updates = [(hasher(EmbedInput("", r[1], json.loads(r[2]), r[3], r[4], r[5])), r[0]) for r in rows]
            with self.db.transaction(documents=True) as conn, conn.cursor() as cur:
                cur.executemany("UPDATE chunks SET embed_hash = %s WHERE seq = %s", updates)
            done += len(rows)

    def vector_count(self, model: str | None = None) -> tuple[int, int]:
        with self.db.read() as conn:
            total = conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
            if model is None:
                return 0, total
            embedded = conn.execute("SELECT count(*) FROM chunks c JOIN embeddings e ON e.model = %s"
                                    " AND e.text_hash = c.embed_hash", (model,)).fetchone()[0]
        return embedded, total
