"""PostgresStores: every concern of a knowledge base in one PostgreSQL database (pgvector for vectors)."""

from __future__ import annotations

import json
from contextlib import contextmanager

from docqa.store.base import Stores
from docqa.store.postgres.bulk import deferred_index
from docqa.store.postgres.cluster import PostgresCluster
from docqa.store.postgres.db import PostgresDB, safe_url
from docqa.store.postgres.documents import PostgresDocuments
from docqa.store.postgres.fulltext import PostgresFullText
from docqa.store.postgres.keys import PostgresKeys
from docqa.store.postgres.runlog import PostgresRunLog
from docqa.store.postgres.vectors import PostgresVectors
from docqa.store.sqlite.fulltext import COMMON_TERM_SHARE, MIN_CHUNKS_TO_PRUNE


class PostgresStores(Stores):
    """Documents, full text, vectors, the run log and API keys over one connection pool; `batch`
    groups an ingest's documents into one transaction every half second (db.py)."""

    def __init__(self, url: str, common_term_share: float = COMMON_TERM_SHARE, min_chunks_to_prune: int = MIN_CHUNKS_TO_PRUNE):
        self.db = PostgresDB(url)
        self.path, self.schema_version = safe_url(url), self.db.schema_version
        self.documents = PostgresDocuments(self.db)
        self.fulltext = PostgresFullText(self.db, common_term_share, min_chunks_to_prune)
        self.vectors = PostgresVectors(self.db)
        self.runlog = PostgresRunLog(self.db)
        self.keys = PostgresKeys(self.db)
        self.cluster = PostgresCluster(self.db)

    def stats(self) -> dict:
        with self.db.read() as conn:
            one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
            return {
                "path": self.path,
                "schema_version": self.schema_version,
                "collections": self.documents.collections(),
                "documents": one("SELECT count(*) FROM documents WHERE status = 'ok'"),
                "failed": one("SELECT count(*) FROM documents WHERE status = 'error'"),
                "skipped": one("SELECT count(*) FROM documents WHERE status = 'skipped'"),
                "chunks": one("SELECT count(*) FROM chunks"),
                "tokens": int(one("SELECT coalesce(sum(tokens), 0) FROM chunks")),
                "source_bytes": int(one("SELECT coalesce(sum(size), 0) FROM documents")),
                "by_type": dict(conn.execute("SELECT type, count(*) FROM documents WHERE status='ok' GROUP BY type").fetchall()),
                "index_bytes": one("SELECT pg_database_size(current_database())"),
                "embedder": json.loads(self.vectors.embedder() or "null"),
                "vectors": one("SELECT count(*) FROM embeddings"),
            }

    def check(self) -> dict:
        """Agreement of the full-text statistics with the postings and chunks they count (one snapshot:
        a writer committing meanwhile is no disagreement)."""
        with self.db.snapshot() as conn:
            one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
            totals = conn.execute("SELECT chunks, tokens FROM fts_totals").fetchone()
            df_wrong = one("SELECT count(*) FROM (SELECT term, count(*) n FROM fts_postings GROUP BY term) p"
                           " FULL JOIN fts_terms t USING (term) WHERE p.n IS DISTINCT FROM t.df")
            chunks = one("SELECT count(*) FROM chunks")
            tokens = int(one("SELECT coalesce(sum(length), 0) FROM (SELECT DISTINCT chunk, length FROM fts_postings) c"))
        return {
            "integrity": "ok" if df_wrong == 0 and tuple(totals) == (chunks, tokens) else "statistics disagree with the postings",
            "fts_integrity": df_wrong == 0,
            "chunks": chunks,
            "fts_rows": totals[0],
            "fts_orphans": _orphans(self.db),
        }

    @contextmanager
    def batch(self, seconds: float = 0.5):
        with self.db.batch(seconds):
            yield self

    @contextmanager
    def bulk_load(self, seconds: float = 5.0):
        """A batch whose new models' HNSW indexes are built once, at the end (bulk.py)."""
        with deferred_index(self.db), self.db.batch(seconds):
            yield self

    def commit_pending(self) -> None:
        self.db.commit_pending()

    def ping(self) -> float:
        return self.db.ping()

    def close(self) -> None:
        self.cluster.close()
        self.db.close()


def _orphans(db: PostgresDB) -> int:
    """Chunks without a posting (a chunk with text always has one)."""
    return db.one("SELECT count(*) FROM chunks c WHERE NOT EXISTS (SELECT 1 FROM fts_postings p WHERE p.chunk = c.seq)"
                  " AND (c.text != '' OR c.fts_title != '')")
