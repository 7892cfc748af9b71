"""SQLiteStore: the embedded default — one SQLite file (WAL) per knowledge base, FTS5 for BM25."""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from docqa.errors import NotFoundError, SchemaError, StoreError
from docqa.index.base import CatalogPage, ChunkFilter, ChunkVectors, EmbedInput, FileState, Store, TextQuery
from docqa.index.migrate import migrate
from docqa.index.sqlite_keys import KeyTables
from docqa.index.sqlite_sessions import SessionTables
from docqa.index.vectors import VectorMatrix
from docqa.text import segment_for_index
from docqa.types import Chunk, DocumentRecord, Hit

BM25_WEIGHTS = (4.0, 3.0, 3.0, 1.0)  # title, keywords, summary, content
# A query term found in more than this share of the chunks is skipped when rarer ones remain
# (measured: SciFact nDCG@10 0.6926 -> 0.6922 when forced on; p50 at 100k chunks 18 -> 14 ms).
COMMON_TERM_SHARE = 0.25
MIN_CHUNKS_TO_PRUNE = 20_000  # below this, scoring every match is cheap and pruning is not worth it
_DOC_COLUMNS = (
    "id, path, collection, type, title, keywords, summary, size, content_hash, chunk_count, "
    "status, error, indexed_at, mtime_ns, language"
)
_HIT_SQL = f"""
SELECT c.id, c.document_id, d.path, d.collection, d.title, c.section, c.page_start, c.page_end,
       c.line_start, c.line_end, c.char_start, c.char_end, c.text, c.symbol, d.type
FROM chunks c JOIN documents d ON d.id = c.document_id WHERE c.id IN (%s)"""


def fts_literal(term: str) -> str:
    """A term as an FTS5 string literal, so no user input can be read as query syntax."""
    return '"' + term.replace('"', '""') + '"'


class SQLiteStore(SessionTables, KeyTables, Store):
    """Embedded store in one SQLite file (sessions, runs and feedback: sqlite_sessions.py; API keys: sqlite_keys.py)."""

    def __init__(self, path: str | Path, common_term_share: float = COMMON_TERM_SHARE,
                 min_chunks_to_prune: int = MIN_CHUNKS_TO_PRUNE):
        self.path = str(path)
        self.common_term_share, self.min_chunks_to_prune = common_term_share, min_chunks_to_prune
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA cache_size=-65536")
            self.conn.execute("PRAGMA journal_size_limit=67108864")  # shrink the WAL after a checkpoint
            self.schema_version = migrate(self.conn, self.path)
        except sqlite3.DatabaseError as exc:
            raise SchemaError(f"{self.path} is not a usable docqa knowledge base ({exc}): move it away or pass another --kb") from exc
        self._lock = threading.RLock()
        self._batching = False
        self._total_cache: tuple[int, int] = (-1, 0)  # (PRAGMA data_version, chunk count)
        self._df_cache: dict[str, int] = {}  # term -> chunks containing it, for _selective_terms
        self._batch_started: float | None = None  # when the open batch transaction began
        self._batch_seconds = 0.5
        self._vectors: _VectorCache | None = None
        self._vconn: sqlite3.Connection | None = None  # vector reads: run beside a full-text query

    # -- writing -------------------------------------------------------------------------
    @contextmanager
    def _transaction(self):
        """One atomic unit: its own transaction, or part of the running batch transaction."""
        with self._lock:
            if self._batching:
                if self._batch_started is None:  # open lazily: hold the write lock only while writing
                    self.conn.execute("BEGIN IMMEDIATE")
                    self._batch_started = time.monotonic()
                try:
                    yield self.conn
                except BaseException:
                    # No savepoints (FTS5 flushes its buffer at each one, which costs 30 % of
                    # ingest time): a failing write rolls back the open batch, leaving every
                    # document in it at its previous version, and ends the batch.
                    self._batch_started = None
                    self._batching = False
                    self.conn.execute("ROLLBACK")
                    raise
                if time.monotonic() - self._batch_started >= self._batch_seconds:
                    self._commit_batch()
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    @contextmanager
    def batch(self, seconds: float = 0.5):
        """Group many documents into few commits (each document stays atomic).

        FTS5 flushes its pending terms on every commit, so committing per document is several
        times slower than committing every `seconds`.  A crash or a failing write loses the
        uncommitted documents, each of which is then still wholly its previous version.
        """
        with self._lock:
            self._batching, self._batch_seconds = True, seconds
            # Checkpoint the WAL once at the end rather than every 1,000 pages while writing.
            self.conn.execute("PRAGMA wal_autocheckpoint=20000")
            try:
                yield self
            finally:  # what was written completely is kept, also on error
                self._batching = False
                self._commit_batch()
                self.conn.execute("PRAGMA wal_autocheckpoint=1000")
                self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")

    def commit_pending(self) -> None:
        with self._lock:
            self._commit_batch()

    def _commit_batch(self) -> None:
        if self._batch_started is not None:
            self._batch_started = None
            self.conn.execute("COMMIT")

    @staticmethod
    def _bump_generation(conn: sqlite3.Connection) -> None:
        """Mark the chunks or vectors as changed (the vector cache reloads on a new generation).

        A counter rather than PRAGMA data_version: that changes on every commit, and a run or
        feedback saved after each question must not make the next search reload every vector.
        """
        conn.execute("INSERT INTO meta VALUES ('generation', '1') "
                     "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1")

    def _generation(self, conn: sqlite3.Connection) -> str | None:
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return row[0] if row else None

    def _ensure_collection(self, conn: sqlite3.Connection, name: str) -> None:
        conn.execute("INSERT OR IGNORE INTO collections VALUES (?, datetime('now'))", (name,))

    def _delete_rows(self, conn: sqlite3.Connection, document_id: str) -> list[str]:
        # Remove the index entries with exactly the values they were indexed with, then the rows.
        # Only when there are some: any write statement on the FTS table flushes its buffer.
        if conn.execute("SELECT 1 FROM chunks WHERE document_id = ? LIMIT 1", (document_id,)).fetchone() is None:
            conn.execute("DELETE FROM document_texts WHERE document_id = ?", (document_id,))
            return []
        conn.execute(
            "INSERT INTO chunks_fts (chunks_fts, rowid, title, keywords, summary, content) "
            "SELECT 'delete', rowid, title, keywords, summary, content FROM chunks_fts_source "
            "WHERE rowid IN (SELECT rowid FROM chunks WHERE document_id = ?)",
            (document_id,),
        )
        old_hashes = [r[0] for r in conn.execute(
            "SELECT DISTINCT embed_hash FROM chunks WHERE document_id = ? AND embed_hash IS NOT NULL", (document_id,))]
        conn.execute("DELETE FROM chunks WHERE document_id = ?", (document_id,))
        conn.execute("DELETE FROM document_texts WHERE document_id = ?", (document_id,))
        return old_hashes

    @staticmethod
    def _drop_orphan_vectors(conn: sqlite3.Connection, hashes: list[str]) -> None:
        """Delete the vectors of texts no chunk uses any more (run after the new rows are in)."""
        conn.executemany(
            "DELETE FROM embeddings WHERE text_hash = ? AND NOT EXISTS (SELECT 1 FROM chunks WHERE embed_hash = ?)",
            [(h, h) for h in hashes],
        )

    def _upsert_document(self, conn: sqlite3.Connection, r: DocumentRecord, metadata: dict, chunk_count: int,
                         fts: tuple[str, str] = ("", "")) -> None:
        conn.execute(
            """INSERT INTO documents (id, collection, path, type, language, title, keywords, summary, size,
                   mtime_ns, content_hash, chunk_count, status, error, indexed_at, metadata, fts_keywords, fts_summary)
               VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)
               ON CONFLICT(id) DO UPDATE SET type=excluded.type, language=excluded.language,
                   title=excluded.title, keywords=excluded.keywords, summary=excluded.summary,
                   size=excluded.size, mtime_ns=excluded.mtime_ns, content_hash=excluded.content_hash,
                   chunk_count=excluded.chunk_count, status=excluded.status, error=excluded.error,
                   indexed_at=excluded.indexed_at, metadata=excluded.metadata,
                   fts_keywords=excluded.fts_keywords, fts_summary=excluded.fts_summary""",
            (r.document_id, r.collection, r.path, r.type, r.language, r.title, json.dumps(r.keywords, ensure_ascii=False),
             r.summary, r.size, r.mtime_ns, r.content_hash, chunk_count, r.status, r.error, r.indexed_at,
             json.dumps(metadata, ensure_ascii=False, default=str), *fts),
        )

    def replace_document(self, record: DocumentRecord, text: str, chunks: list[Chunk], metadata: dict | None = None,
                         vectors: ChunkVectors | None = None) -> None:
        title = segment_for_index(record.title)
        fts_doc = (segment_for_index(" ".join(record.keywords)), segment_for_index(record.summary))
        hashes = vectors.hashes if vectors is not None else [None] * len(chunks)
        if len(hashes) != len(chunks):
            raise ValueError(f"{len(hashes)} text hashes for {len(chunks)} chunks")
        rows = [(*_chunk_row(record.document_id, record.content_hash, title, c), h) for c, h in zip(chunks, hashes)]
        with self._transaction() as conn:
            self._ensure_collection(conn, record.collection)
            old_hashes = self._delete_rows(conn, record.document_id)
            self._upsert_document(conn, record, metadata or {}, len(chunks), fts_doc)
            conn.execute("INSERT INTO document_texts VALUES (?, ?)", (record.document_id, text))
            first = conn.execute("SELECT coalesce(max(rowid), 0) + 1 FROM chunks").fetchone()[0]
            conn.executemany(
                "INSERT INTO chunks (rowid, id, document_id, ordinal, text, context, char_start, char_end, section,"
                " page_start, page_end, line_start, line_end, symbol, language, tokens, fts_title, fts_content, embed_hash)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                [(first + i, *row) for i, row in enumerate(rows)],
            )
            conn.executemany(
                "INSERT INTO chunks_fts (rowid, title, keywords, summary, content) VALUES (?,?,?,?,?)",
                [(first + i, row[-3], fts_doc[0], fts_doc[1] if row[2] == 0 else "", row[3] if row[-2] is None else row[-2])
                 for i, row in enumerate(rows)],
            )
            if vectors is not None and vectors.model and vectors.new:
                self._insert_vectors(conn, vectors.model, vectors.new)
            if old_hashes:
                self._drop_orphan_vectors(conn, old_hashes)
            self._bump_generation(conn)

    def record_failure(self, record: DocumentRecord) -> None:
        with self._transaction() as conn:
            self._ensure_collection(conn, record.collection)
            exists = conn.execute("SELECT 1 FROM documents WHERE id = ?", (record.document_id,)).fetchone()
            if exists:  # keep the last good version searchable; flag it
                conn.execute(
                    "UPDATE documents SET status='error', error=?, size=?, mtime_ns=?, indexed_at=? WHERE id=?",
                    (record.error, record.size, record.mtime_ns, record.indexed_at, record.document_id),
                )
            else:
                self._upsert_document(conn, record, {}, 0)

    def delete_documents(self, document_ids: Iterable[str]) -> int:
        count = 0
        with self._transaction() as conn:
            for doc_id in document_ids:
                old_hashes = self._delete_rows(conn, doc_id)
                count += conn.execute("DELETE FROM documents WHERE id = ?", (doc_id,)).rowcount
                self._drop_orphan_vectors(conn, old_hashes)
            self._bump_generation(conn)
        return count

    def move_document(self, old_id: str, new_id: str, new_path: str, size: int, mtime_ns: int) -> None:
        with self._transaction() as conn:
            conn.execute("PRAGMA defer_foreign_keys = ON")  # rows point at the new id by commit time
            conn.execute("UPDATE documents SET id=?, path=?, size=?, mtime_ns=? WHERE id=?", (new_id, new_path, size, mtime_ns, old_id))
            conn.execute("UPDATE chunks SET document_id=? WHERE document_id=?", (new_id, old_id))
            conn.execute("UPDATE document_texts SET document_id=? WHERE document_id=?", (new_id, old_id))
            self._bump_generation(conn)

    def touch(self, document_id: str, size: int, mtime_ns: int) -> None:
        with self._transaction() as conn:
            conn.execute("UPDATE documents SET size=?, mtime_ns=? WHERE id=?", (size, mtime_ns, document_id))

    # -- reading -------------------------------------------------------------------------
    def file_states(self, collection: str) -> dict[str, FileState]:
        rows = self.conn.execute(
            "SELECT path, size, mtime_ns, content_hash, status, title FROM documents WHERE collection = ?", (collection,)
        )
        return {r[0]: FileState(*r) for r in rows}

    def list_documents(self, collection: str | None = None, path_prefix: str | None = None) -> list[DocumentRecord]:
        sql, args = f"SELECT {_DOC_COLUMNS} FROM documents WHERE 1=1", []
        if collection is not None:
            sql += " AND collection = ?"
            args.append(collection)
        if path_prefix is not None:
            sql += " AND (path = ? OR substr(path, 1, ?) = ?)"
            prefix = path_prefix.rstrip("/") + "/"
            args += [path_prefix, len(prefix), prefix]
        return [_record(r) for r in self.conn.execute(sql + " ORDER BY collection, path", args)]

    def document_record(self, document_id: str) -> DocumentRecord:
        row = self.conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE id = ?", (document_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no document {document_id!r}: document ids come from 'docqa list --json' or list_docs")
        return _record(row)

    def search_text(self, query: TextQuery, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        if not query.terms:
            return []
        where = self._effective(where)
        pool = max(top_k * 3, 30)  # boosts re-order a wider pool than what is returned
        terms = self._selective_terms(query.terms)
        scored = dict(self._match(" OR ".join(fts_literal(t) for t in terms), pool, where))
        if len(query.terms) > 1 and scored:
            # Proximity in the title or text earns half the boost, the exact phrase all of it.
            # (Not in keywords/summary: those lists put unrelated words side by side.)
            near = "{title content} : NEAR(" + " ".join(fts_literal(t) for t in query.terms) + f", {len(query.terms) + 3})"
            self._boost(scored, near, 1 + (query.phrase_boost - 1) / 2, pool, where)
            if query.phrase:
                self._boost(scored, "{title content} : " + fts_literal(query.phrase), query.phrase_boost, pool, where)
        return sorted(scored.items(), key=lambda kv: -kv[1])[:top_k]

    def _effective(self, where: ChunkFilter | None, conn: sqlite3.Connection | None = None) -> ChunkFilter | None:
        """The filter, or None when it cannot exclude anything (a join would only cost time)."""
        if where is None or where.empty:
            return None
        if not where.path_glob and not where.types:
            names = [r[0] for r in (conn or self.conn).execute("SELECT name FROM collections")]
            if names == [where.collection]:
                return None
        return where

    def _selective_terms(self, terms: list[str]) -> list[str]:
        """Drop terms found in more than COMMON_TERM_SHARE of the chunks, when rarer ones remain.

        FTS5 spends its time running bm25() on every chunk that matches any term; a term in a
        quarter of a 100k-chunk index adds 25k rows to score while its IDF (about 1, against 7-9
        for the rare terms) barely moves the ranking.  Counting matches is cheap; scoring is not.
        The proximity and phrase boosts still use every term.
        """
        total = self._chunk_total()
        if len(terms) < 2 or total < self.min_chunks_to_prune or self.common_term_share >= 1:
            return terms
        limit = self.common_term_share * total
        rare = [t for t in terms if self._matches(t) <= limit]
        return rare or terms

    def _matches(self, term: str) -> int:
        """How many chunks contain `term` (cached until the index changes)."""
        count = self._df_cache.get(term)
        if count is None:
            sql = "SELECT count(*) FROM chunks_fts WHERE chunks_fts MATCH ?"
            count = self._df_cache[term] = self.conn.execute(sql, (fts_literal(term),)).fetchone()[0]
            if len(self._df_cache) > 50_000:
                self._df_cache.clear()
        return count

    def _chunk_total(self) -> int:
        version = self.conn.execute("PRAGMA data_version").fetchone()[0]
        if self._total_cache[0] != version:  # written since (by anyone): counts are stale
            self._total_cache = (version, self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0])
            self._df_cache.clear()
        return self._total_cache[1]

    def _boost(self, scored: dict[str, float], match: str, factor: float, pool: int, where: ChunkFilter | None) -> None:
        for chunk_id, _ in self._match(match, pool, where):
            if chunk_id in scored:
                scored[chunk_id] *= factor

    def _match(self, match: str, top_k: int, where: ChunkFilter | None) -> list[tuple[str, float]]:
        weights = ", ".join(str(w) for w in BM25_WEIGHTS)
        if where is None:
            # Rank inside FTS5 alone, then look up the few winners: a join here makes SQLite
            # fetch every matching chunk row before sorting (about twice as slow at 100k chunks).
            sql = (f"SELECT c.id, -f.score FROM (SELECT rowid, bm25(chunks_fts, {weights}) AS score FROM chunks_fts"
                   " WHERE chunks_fts MATCH ? ORDER BY score LIMIT ?) f JOIN chunks c ON c.rowid = f.rowid ORDER BY f.score")
            args: list = [match, top_k]
        else:
            clause, filter_args = _filter_sql(where)
            sql = (f"SELECT c.id, -bm25(chunks_fts, {weights}) AS score FROM chunks_fts"
                   " JOIN chunks c ON c.rowid = chunks_fts.rowid JOIN documents d ON d.id = c.document_id"
                   f" WHERE chunks_fts MATCH ? AND {clause} ORDER BY bm25(chunks_fts, {weights}) LIMIT ?")
            args = [match, *filter_args, top_k]
        try:
            return [(r[0], r[1]) for r in self.conn.execute(sql, args)]
        except sqlite3.OperationalError as exc:  # only reachable through a bug in escaping
            raise StoreError(f"full-text query failed: {exc}") from exc

    # -- vectors ---------------------------------------------------------------------------
    def _vector_conn(self) -> sqlite3.Connection:
        """A second connection for dense search, so it runs in parallel with a full-text query on
        the main one (a connection serialises its statements; WAL lets two readers run at once)."""
        if self.path == ":memory:":
            return self.conn
        if self._vconn is None:
            with self._lock:
                if self._vconn is None:
                    self._vconn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
        return self._vconn

    def search_vector(self, vector: np.ndarray, model: str, top_k: int, where: ChunkFilter | None = None) -> list[tuple[str, float]]:
        conn = self._vector_conn()
        cache = self._vector_cache(model)
        if cache.matrix.rows == 0:
            return []
        if cache.matrix.dims != vector.shape[-1]:
            raise StoreError(f"query vector has {vector.shape[-1]} dimensions, the index {cache.matrix.dims}: run 'docqa reindex'")
        mask = None
        where = self._effective(where, conn)
        if where is not None:
            clause, args = _filter_sql(where)
            allowed = np.fromiter((r[0] for r in conn.execute(
                f"SELECT c.rowid FROM chunks c JOIN documents d ON d.id = c.document_id WHERE {clause}", args)), dtype=np.int64)
            mask = np.isin(cache.rowids, allowed)
        best, scores = cache.matrix.search(vector, top_k, mask)
        rowids = [int(r) for r in cache.rowids[best]]
        if not rowids:
            return []
        ids = dict(conn.execute(f"SELECT rowid, id FROM chunks WHERE rowid IN ({','.join('?' * len(rowids))})", rowids))
        return [(ids[r], float(score)) for r, score in zip(rowids, scores) if r in ids]

    def _vector_cache(self, model: str) -> _VectorCache:
        """All vectors of `model` as one matrix (see vectors.py), reloaded when the index changed."""
        conn = self._vector_conn()
        token = self._generation(conn)
        cache = self._vectors
        if cache is None or cache.model != model or cache.token != token:
            with self._lock:
                rows = conn.execute(
                    "SELECT c.rowid, e.vector FROM chunks c JOIN embeddings e ON e.model = ? AND e.text_hash = c.embed_hash",
                    (model,)).fetchall()
            rowids = np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))
            blob = b"".join(r[1] for r in rows)
            dims = len(rows[0][1]) // 2 if rows else 0
            matrix = VectorMatrix(np.frombuffer(blob, dtype=np.float16).reshape(len(rows), dims))
            cache = self._vectors = _VectorCache(model, token, rowids, matrix)
        return cache

    def _insert_vectors(self, conn: sqlite3.Connection, model: str, vectors: dict[str, np.ndarray]) -> None:
        conn.executemany(
            "INSERT OR REPLACE INTO embeddings (model, text_hash, vector) VALUES (?, ?, ?)",
            [(model, h, np.asarray(v, dtype=np.float16).tobytes()) for h, v in vectors.items()],
        )

    def known_vectors(self, model: str, hashes: Iterable[str]) -> set[str]:
        hashes = list(dict.fromkeys(hashes))
        found: set[str] = set()
        for i in range(0, len(hashes), 500):
            part = hashes[i : i + 500]
            found.update(r[0] for r in self.conn.execute(
                f"SELECT text_hash FROM embeddings WHERE model = ? AND text_hash IN ({','.join('?' * len(part))})", [model, *part]))
        return found

    def put_vectors(self, model: str, vectors: dict[str, np.ndarray]) -> None:
        with self._transaction() as conn:
            self._insert_vectors(conn, model, vectors)
            self._bump_generation(conn)

    def embedder(self) -> str | None:
        row = self.conn.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
        return row[0] if row else None

    def set_embedder(self, fingerprint: str | None, model: str | None) -> None:
        with self._transaction() as conn:
            if fingerprint is None:
                conn.execute("DELETE FROM meta WHERE key = 'embedder'")
                conn.execute("DELETE FROM embeddings")
            else:
                conn.execute("INSERT OR REPLACE INTO meta VALUES ('embedder', ?)", (fingerprint,))
                conn.execute("DELETE FROM embeddings WHERE model != ?", (model,))
            self._bump_generation(conn)

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
            with self._transaction() as conn:
                conn.executemany("UPDATE chunks SET embed_hash = ? WHERE rowid = ?", updates)
                self._bump_generation(conn)
            done += len(rows)

    def vector_count(self, model: str | None = None) -> tuple[int, int]:
        total = self.conn.execute("SELECT count(*) FROM chunks").fetchone()[0]
        if model is None:
            return 0, total
        embedded = self.conn.execute(
            "SELECT count(*) FROM chunks c JOIN embeddings e ON e.model = ? AND e.text_hash = c.embed_hash", (model,)
        ).fetchone()[0]
        return embedded, total

    def get_hits(self, chunk_ids: list[str]) -> list[Hit]:
        if not chunk_ids:
            return []
        rows = self.conn.execute(_HIT_SQL % ",".join("?" * len(chunk_ids)), chunk_ids).fetchall()
        by_id = {r[0]: _hit(r) for r in rows}
        return [by_id[i] for i in chunk_ids if i in by_id]

    def document_text(self, document_id: str) -> str:
        row = self.conn.execute("SELECT text FROM document_texts WHERE document_id = ?", (document_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no stored text for document {document_id}: run 'docqa list' to see what is indexed")
        return row[0]

    def catalog(self, collection: str | None = None, offset: int = 0, limit: int | None = None,
                select: Callable[[list[str]], list[int]] | None = None) -> CatalogPage:
        where, args = ("collection = ?", [collection]) if collection is not None else ("1", [])
        total, ok = self.conn.execute(f"SELECT count(*), coalesce(sum(status = 'ok'), 0) FROM documents WHERE {where}",
                                      args).fetchone()
        page = "" if limit is None else f" LIMIT {int(limit)} OFFSET {int(offset)}"
        if select is None:  # the path index gives the order; only the page's rows are read
            rows = self.conn.execute(f"SELECT {_DOC_COLUMNS} FROM documents WHERE status = 'ok' AND {where} "
                                     f"ORDER BY path{page}", args).fetchall()
            return CatalogPage([_record(r) for r in rows], ok, total - ok)
        # Filter on the few columns a catalog line shows; full records only for the page kept.
        rows = self.conn.execute(f"SELECT id, path, title, keywords, summary FROM documents "
                                 f"WHERE status = 'ok' AND {where} ORDER BY path", args).fetchall()
        kept = [rows[i][0] for i in select([f"{r[1]}\n{r[2]}\n{_keyword_text(r[3])}\n{r[4]}" for r in rows])]
        chosen = kept[offset:] if limit is None else kept[offset:offset + limit]
        records = []
        for start in range(0, len(chosen), 500):
            ids = chosen[start:start + 500]
            records += [_record(r) for r in self.conn.execute(
                f"SELECT {_DOC_COLUMNS} FROM documents WHERE id IN ({','.join('?' * len(ids))}) ORDER BY path", ids)]
        return CatalogPage(records, len(kept), total - ok)

    def find_documents(self, path: str) -> list[DocumentRecord]:
        # A suffix cannot use the path index; one scan of the documents table takes ~2 ms at 10k.
        sql = f"SELECT {_DOC_COLUMNS} FROM documents WHERE path = ? OR substr(path, -?) = ? ORDER BY path, collection"
        tail = "/" + path.lstrip("/")
        return [_record(r) for r in self.conn.execute(sql, (path, len(tail), tail))]

    def document_texts(self, where: ChunkFilter | None = None) -> Iterator[tuple[str, str, str, str]]:
        clause, args = _filter_sql(where or ChunkFilter())
        cursor = self.conn.execute(
            f"SELECT d.id, d.path, d.title, t.text FROM documents d JOIN document_texts t ON t.document_id = d.id "
            f"WHERE d.status = 'ok' AND {clause} ORDER BY d.path", args)
        try:
            while rows := cursor.fetchmany(64):
                yield from rows
        finally:
            cursor.close()

    def path_bounds(self, collection: str | None = None) -> tuple[str, str] | None:
        sql, args = "SELECT min(path), max(path) FROM documents WHERE status = 'ok'", []
        if collection is not None:
            sql, args = sql + " AND collection = ?", [collection]
        low, high = self.conn.execute(sql, args).fetchone()
        return None if low is None else (low, high)

    def page_lines(self, document_id: str) -> list[tuple[int, int]]:
        rows = self.conn.execute(
            "SELECT page_start, min(line_start) FROM chunks WHERE document_id = ? AND page_start IS NOT NULL "
            "GROUP BY page_start ORDER BY page_start", (document_id,))
        return [(r[0], r[1]) for r in rows]

    def term_counts(self, terms: list[str]) -> tuple[dict[str, int], int]:
        total = self._chunk_total()
        return {t: self._matches(t) for t in dict.fromkeys(terms)}, total

    def text_heads(self, chunk_ids: list[str], chars: int = 300) -> dict[str, str]:
        if not chunk_ids:
            return {}
        sql = f"SELECT id, substr(text, 1, ?) FROM chunks WHERE id IN ({','.join('?' * len(chunk_ids))})"
        return dict(self.conn.execute(sql, [chars, *chunk_ids]))

    def chunk_ids(self, document_id: str) -> list[str]:
        rows = self.conn.execute("SELECT id FROM chunks WHERE document_id = ? ORDER BY ordinal", (document_id,))
        return [r[0] for r in rows]

    def collections(self) -> list[str]:
        return [r[0] for r in self.conn.execute("SELECT name FROM collections ORDER BY name")]

    def collection_sizes(self) -> dict[str, int]:
        return dict(self.conn.execute("SELECT c.name, count(d.id) FROM collections c LEFT JOIN documents d "
                                      "ON d.collection = c.name GROUP BY c.name ORDER BY c.name"))

    def create_collection(self, name: str) -> bool:
        with self._transaction() as conn:
            return conn.execute("INSERT OR IGNORE INTO collections VALUES (?, datetime('now'))", (name,)).rowcount > 0

    def delete_collection(self, name: str) -> list[DocumentRecord]:
        if name not in self.collections():  # checked first: nothing may raise inside a batch transaction
            raise NotFoundError(f"no collection {name!r}: 'docqa stats' lists the collections")
        records = self.list_documents(name)
        with self._transaction() as conn:
            for record in records:
                old_hashes = self._delete_rows(conn, record.document_id)
                conn.execute("DELETE FROM documents WHERE id = ?", (record.document_id,))
                self._drop_orphan_vectors(conn, old_hashes)
            conn.execute("DELETE FROM collections WHERE name = ?", (name,))
            self._bump_generation(conn)
        return records

    def stats(self) -> dict:
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        by_type = dict(self.conn.execute("SELECT type, count(*) FROM documents WHERE status='ok' GROUP BY type"))
        size = Path(self.path).stat().st_size if self.path != ":memory:" else 0
        wal = Path(self.path + "-wal")
        return {
            "path": self.path,
            "schema_version": self.schema_version,
            "collections": self.collections(),
            "documents": one("SELECT count(*) FROM documents"),
            "failed": one("SELECT count(*) FROM documents WHERE status != 'ok'"),
            "chunks": one("SELECT count(*) FROM chunks"),
            "tokens": one("SELECT coalesce(sum(tokens), 0) FROM chunks"),
            "source_bytes": one("SELECT coalesce(sum(size), 0) FROM documents"),
            "by_type": by_type,
            "index_bytes": size + (wal.stat().st_size if wal.exists() else 0),
            "embedder": json.loads(self.embedder() or "null"),
            "vectors": one("SELECT count(*) FROM embeddings"),
        }

    def check(self) -> dict:
        """Integrity report: SQLite integrity_check, FTS5 index vs its content, row agreement."""
        integrity = self.conn.execute("PRAGMA integrity_check").fetchone()[0]
        try:
            self.conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
            fts_ok = True
        except sqlite3.DatabaseError:
            fts_ok = False
        one = lambda sql: self.conn.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "integrity": integrity,
            "fts_integrity": fts_ok,
            "chunks": one("SELECT count(*) FROM chunks"),
            "fts_rows": one("SELECT count(*) FROM chunks_fts_docsize"),
            "fts_orphans": one("SELECT count(*) FROM chunks_fts_docsize WHERE id NOT IN (SELECT rowid FROM chunks)"),
        }

    def close(self) -> None:
        if self._vconn is not None:
            self._vconn.close()
        self.conn.close()


class _VectorCache:
    __slots__ = ("model", "token", "rowids", "matrix")

    def __init__(self, model: str, token: str | None, rowids: np.ndarray, matrix: np.ndarray):
        self.model, self.token, self.rowids, self.matrix = model, token, rowids, matrix


def _filter_sql(where: ChunkFilter) -> tuple[str, list]:
    """A WHERE clause over `documents d` for a filter, with its arguments."""
    clauses, args = [], []
    if where.collection is not None:
        clauses.append("d.collection = ?")
        args.append(where.collection)
    if where.path_glob:
        clauses.append("d.path GLOB ?")
        args.append(path_glob_pattern(where.path_glob))
    if where.types:
        kinds = [t.lower().lstrip(".") for t in where.types]
        ors = [f"d.type IN ({','.join('?' * len(kinds))})"] + ["lower(d.path) GLOB ?"] * len(kinds)
        clauses.append("(" + " OR ".join(ors) + ")")
        args += kinds + [f"*.{k}" for k in kinds]
    return " AND ".join(clauses) or "1", args


def path_glob_pattern(glob: str) -> str:
    """A user's path glob as an SQLite GLOB over absolute paths (`**` = `*`; relative = any depth)."""
    pattern = glob.replace("**/", "*").replace("**", "*")
    if not pattern.startswith(("/", "*")):
        pattern = "*/" + pattern.removeprefix("./")
    return pattern


def _fts_title(title: str, chunk: Chunk) -> str:
    parts = [title, *map(segment_for_index, chunk.section)]
    if chunk.symbol:
        parts.append(chunk.symbol)
    return " / ".join(p for p in parts if p)


def _chunk_row(document_id: str, content_hash: str, title: str, c: Chunk) -> tuple:
    chunk_id = hashlib.blake2b(f"{document_id}:{content_hash}:{c.ordinal}".encode(), digest_size=8).hexdigest()
    indexed = segment_for_index(c.context + "\n" + c.text if c.context else c.text)
    return (chunk_id, document_id, c.ordinal, c.text, c.context, c.char_start, c.char_end,
            json.dumps(list(c.section), ensure_ascii=False), c.page_start, c.page_end, c.line_start, c.line_end,
            c.symbol, c.language, c.tokens, _fts_title(title, c), None if indexed == c.text else indexed)


def _keyword_text(keywords_json: str) -> str:
    """A stored JSON list of keywords as space-separated words, without decoding it (10k rows a call)."""
    return keywords_json.strip("[]").replace('", "', " ").replace('"', "")


def _record(r: tuple) -> DocumentRecord:
    return DocumentRecord(
        document_id=r[0], path=r[1], collection=r[2], type=r[3], title=r[4], keywords=json.loads(r[5]),
        summary=r[6], size=r[7], content_hash=r[8], chunks=r[9], status=r[10], error=r[11], indexed_at=r[12],
        mtime_ns=r[13], language=r[14],
    )


def _hit(r: tuple) -> Hit:
    section = " > ".join(json.loads(r[5]))
    return Hit(chunk_id=r[0], document_id=r[1], path=r[2], collection=r[3], title=r[4], section=section,
               page=r[6], page_end=r[7], line_start=r[8], line_end=r[9], char_start=r[10], char_end=r[11],
               score=0.0, text=r[12], symbol=r[13], type=r[14])
