"""SQLiteVectors: float16 vectors in the `embeddings` table, searched in memory (see store/matrix.py).

A document's new vectors are written by `SQLiteDocuments.replace_document` in its transaction
(`insert_vectors`), and the vectors no chunk uses any more are dropped there too
(`drop_orphan_vectors`).
"""

from __future__ import annotations

import json
import os
import sqlite3
import threading
import weakref
from collections.abc import Callable, Iterable

import numpy as np

from docqa.errors import StoreError
from docqa.store.base import ChunkFilter
from docqa.store.matrix import VectorMatrix
from docqa.store.sqlite import packed
from docqa.store.sqlite.db import SQLiteDB
from docqa.store.sqlite.rows import effective, filter_sql
from docqa.store.vectors import EmbedInput, VectorStore


def insert_vectors(conn: sqlite3.Connection, model: str, vectors: dict[str, np.ndarray]) -> None:
    """Write vectors of `model` by text hash (inside the caller's transaction)."""
    conn.executemany(
        "INSERT OR REPLACE INTO embeddings (model, text_hash, vector) VALUES (?, ?, ?)",
        [(model, h, np.asarray(v, dtype=np.float16).tobytes()) for h, v in vectors.items()],
    )


def drop_orphan_vectors(conn: sqlite3.Connection, hashes: list[str]) -> None:
    """Delete the vectors of texts no chunk uses any more (run after the new rows are in)."""
    conn.executemany(
        "DELETE FROM embeddings WHERE text_hash = ? AND NOT EXISTS (SELECT 1 FROM chunks WHERE embed_hash = ?)",
        [(h, h) for h in hashes],
    )


class _VectorCache:
    __slots__ = ("model", "token", "rowids", "matrix", "__weakref__")

    def __init__(self, model: str, token: str | None, rowids: np.ndarray, matrix: VectorMatrix):
        self.model, self.token, self.rowids, self.matrix = model, token, rowids, matrix


class _Shared:
    """The loaded vectors of each knowledge base file, shared by every connection to it in this process:
    a server's worker threads each open their own, but the matrix (~1 GB at 300k vectors) is loaded
    once and held once.  An entry lives while a `SQLiteVectors` holds it."""

    caches: weakref.WeakValueDictionary[tuple[str, str], _VectorCache] = weakref.WeakValueDictionary()
    loading = threading.Lock()  # one load at a time: the others wait for its matrix rather than load their own


class SQLiteVectors(VectorStore):
    """Vectors in the knowledge base file; all of one model held in memory for exact search."""

    def __init__(self, db: SQLiteDB):
        self.db, self.conn = db, db.conn
        self._cache: _VectorCache | None = None
        self._vconn: sqlite3.Connection | None = None  # vector reads: run beside a full-text query
        self.last_load: str | None = None  # how this store last loaded the matrix: "packed", "synced" or "sqlite"

    def _vector_conn(self) -> sqlite3.Connection:
        """A second connection for dense search, so it runs in parallel with a full-text query on
        the main one (a connection serialises its statements; WAL lets two readers run at once)."""
        if self.db.path == ":memory:":
            return self.conn
        if self._vconn is None:
            with self.db.lock:
                if self._vconn is None:
                    self._vconn = sqlite3.connect(self.db.path, isolation_level=None, check_same_thread=False, timeout=30)
        return self._vconn

    def search_vector(self, vector: np.ndarray, model: str, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        conn = self._vector_conn()
        cache = self._vector_cache(model)
        if cache.matrix.rows == 0:
            return []
        if cache.matrix.dims != vector.shape[-1]:
            raise StoreError(f"query vector has {vector.shape[-1]} dimensions, the index {cache.matrix.dims}: run 'docqa reindex'")
        mask = None
        where = effective(conn, where)
        if where is not None:
            clause, args = filter_sql(where)
            allowed = np.fromiter((r[0] for r in conn.execute(
                f"SELECT c.rowid FROM chunks c JOIN documents d ON d.id = c.document_id WHERE {clause}", args)), dtype=np.int64)
            mask = np.isin(cache.rowids, allowed)
        best, scores = cache.matrix.search(vector, top_k, mask)
        rowids = [int(r) for r in cache.rowids[best]]
        if not rowids:
            return []
        ids = dict(conn.execute(f"SELECT rowid, id FROM chunks WHERE rowid IN ({','.join('?' * len(rowids))})", rowids))
        return [(ids[r], float(score)) for r, score in zip(rowids, scores) if r in ids]

    def prepare(self, model: str) -> None:
        self._vector_cache(model)

    def _vector_cache(self, model: str) -> _VectorCache:
        """All vectors of `model` as one matrix (see matrix.py), reloaded when the index changed, and
        shared with the other connections to the same file (`_Shared`)."""
        conn = self._vector_conn()
        token = self.db.generation(conn)
        cache = self._cache
        if cache is not None and cache.model == model and cache.token == token:
            return cache
        if self.db.path == ":memory:":
            cache = self._cache = self._load(conn, model, token)
            return cache
        key = (os.path.realpath(self.db.path), model)
        cache = _Shared.caches.get(key)
        if cache is None or cache.token != token:
            with _Shared.loading:
                cache = _Shared.caches.get(key)
                if cache is None or cache.token != token:
                    cache = _Shared.caches[key] = self._load(conn, model, token)
        self._cache = cache
        return cache

    def _load(self, conn: sqlite3.Connection, model: str, token: str | None) -> _VectorCache:
        """All vectors of `model`: from the packed copy beside the file when it is in step (packed.py), else
        from SQLite (by difference from an older copy), in one read transaction."""
        with self.db.lock:
            if self.db.path == ":memory:":
                loaded = packed.from_sqlite(conn, model)
            else:
                own = not conn.in_transaction
                if own:
                    conn.execute("BEGIN")
                try:
                    loaded = packed.load(conn, self.db.path, model, token)
                finally:
                    if own:
                        conn.execute("COMMIT")
        self.last_load = loaded.source
        matrix = VectorMatrix(loaded.matrix, loaded.int8)
        if loaded.source != "packed" and token is not None and self.db.path != ":memory:":
            loaded.int8 = matrix.int8()  # kept with the copy: the next process need not quantise again
            packed.write_later(packed.packed_path(self.db.path, model), model, token, loaded)
        return _VectorCache(model, token, loaded.rowids, matrix)

    def known_vectors(self, model: str, hashes: Iterable[str]) -> set[str]:
        hashes = list(dict.fromkeys(hashes))
        found: set[str] = set()
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            found.update(r[0] for r in self.conn.execute(
                f"SELECT text_hash FROM embeddings WHERE model = ? AND text_hash IN ({','.join('?' * len(part))})", [model, *part]))
        return found

    def set_vectors_pending(self, pending: bool) -> None:
        with self.db.transaction() as conn:
            if pending:
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('vectors_pending', '1')")
            else:
                conn.execute("DELETE FROM meta WHERE key = 'vectors_pending'")

    def vectors_pending(self) -> bool:
        return self.conn.execute("SELECT 1 FROM meta WHERE key = 'vectors_pending'").fetchone() is not None

    def missing_vectors(self, model: str, chunk_ids: list[str]) -> set[str]:
        if not chunk_ids:
            return set()
        rows = self.conn.execute(
            f"""SELECT c.id FROM chunks c WHERE c.id IN ({','.join('?' * len(chunk_ids))}) AND NOT EXISTS
                    (SELECT 1 FROM embeddings e WHERE e.model = ? AND e.text_hash = c.embed_hash)""", [*chunk_ids, model])
        return {r[0] for r in rows}

    def put_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self.db.transaction() as conn:
            used = {h for h in vectors if conn.execute("SELECT 1 FROM chunks WHERE embed_hash = ? LIMIT 1", (h,)).fetchone()}
            insert_vectors(conn, model, {h: v for h, v in vectors.items() if h in used})
            self.db.bump_generation(conn)

    def embedder(self) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        return row[0] if row else None

    def set_embedder(self, fingerprint: str | None, model: str | None) -> None:
        with self.db.transaction() as conn:
            if fingerprint is None:
                conn.execute("DELETE FROM meta WHERE key = 'embedder'")
                conn.execute("DELETE FROM embeddings")
            else:
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (fingerprint,))
                conn.execute("DELETE FROM embeddings WHERE model != ?", (model,))
            self.db.bump_generation(conn)
        if self.db.path != ":memory:":
            packed.drop_others(self.db.path, model)

    def unembedded(self, model: str, limit: int) -> list[EmbedInput]:
        rows = self.conn.execute(
            """SELECT c.embed_hash, d.title, c.section, c.context, c.text, c.symbol FROM chunks c
               JOIN documents d ON d.id = c.document_id
               WHERE c.embed_hash IS NOT NULL AND NOT EXISTS
                   (SELECT 1 FROM embeddings e WHERE e.model = ? AND e.text_hash = c.embed_hash)
               GROUP BY c.embed_hash LIMIT ?""",
            (model, limit),
        )
        return [EmbedInput(r[0], r[1], json.loads(r[2]), r[3], r[4], r[5]) for r in rows]

    def fill_hashes(self, hasher: Callable[[EmbedInput], str]) -> int:
        done = 0
        while True:
            rows = self.conn.execute(
                """SELECT c.rowid, d.title, c.section, c.context, c.text, c.symbol FROM chunks c
                   JOIN documents d ON d.id = c.document_id WHERE c.embed_hash IS NULL LIMIT 2000""").fetchall()
            if not rows:
                return done
            updates = [(hasher(EmbedInput("", r[1], json.loads(r[2]), r[3], r[4], r[5])), r[0]) for r in rows]
            with self.db.transaction() as conn:
                conn.executemany("UPDATE chunks SET embed_hash = ? WHERE rowid = ?", updates)
                self.db.bump_generation(conn)
            done += len(rows)

    def vector_count(self, model: str | None = None) -> tuple[int, int]:
        total = self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        if model is None:
            return 0, total
        embedded = self.conn.execute(
            "SELECT count(*) FROM chunks c JOIN embeddings e ON e.model = ? AND e.text_hash = c.embed_hash", (model,)
        ).fetchone()[0]
        return embedded, total

    def close(self) -> None:
        self._cache = None  # the shared matrix goes when no open store holds it
        if self._vconn is not None:
            self._vconn.close()
