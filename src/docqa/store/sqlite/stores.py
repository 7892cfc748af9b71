"""SQLiteStores: the embedded default — every concern of a knowledge base in one SQLite file (WAL)."""

from __future__ import annotations

import json
import sqlite3
from contextlib import contextmanager
from pathlib import Path

from docqa.store.base import Stores
from docqa.store.sqlite.db import SQLiteDB
from docqa.store.sqlite.documents import SQLiteDocuments
from docqa.store.sqlite.fulltext import COMMON_TERM_SHARE, MIN_CHUNKS_TO_PRUNE, SQLiteFullText
from docqa.store.sqlite.keys import SQLiteKeys
from docqa.store.sqlite.runlog import SQLiteRunLog
from docqa.store.sqlite.vectors import SQLiteVectors


class SQLiteStores(Stores):
    """Documents, full text, vectors, the run log and API keys on one connection to one file."""

    def __init__(self, path: str | Path, common_term_share: float = COMMON_TERM_SHARE,
                 min_chunks_to_prune: int = MIN_CHUNKS_TO_PRUNE):
        self.db = SQLiteDB(path)
        self.path, self.schema_version = self.db.path, self.db.schema_version
        self.documents = SQLiteDocuments(self.db)
        self.fulltext = SQLiteFullText(self.db, common_term_share, min_chunks_to_prune)
        self.vectors = SQLiteVectors(self.db)
        self.runlog = SQLiteRunLog(self.db)
        self.keys = SQLiteKeys(self.db)

    @contextmanager
    def batch(self, seconds: float = 0.5):
        """Group many documents into few commits (each document stays atomic; see SQLiteDB.batch)."""
        with self.db.batch(seconds):
            yield self

    def commit_pending(self) -> None:
        self.db.commit_pending()

    def stats(self) -> dict:
        one = lambda sql: self.db.conn.execute(sql).fetchone()[0]  # noqa: E731
        by_type = dict(self.db.conn.execute("SELECT type, count(*) FROM documents WHERE status='ok' GROUP BY type"))
        size = Path(self.path).stat().st_size if self.path != ":memory:" else 0
        wal = Path(self.path + "-wal")
        return {
            "path": self.path,
            "schema_version": self.schema_version,
            "collections": self.documents.collections(),
            "documents": one("SELECT count(*) FROM documents WHERE status = 'ok'"),
            "failed": one("SELECT count(*) FROM documents WHERE status = 'error'"),
            "skipped": one("SELECT count(*) FROM documents WHERE status = 'skipped'"),
            "chunks": one("SELECT count(*) FROM chunks"),
            "tokens": one("SELECT coalesce(sum(tokens), 0) FROM chunks"),
            "source_bytes": one("SELECT coalesce(sum(size), 0) FROM documents"),
            "by_type": by_type,
            "index_bytes": size + (wal.stat().st_size if wal.exists() else 0),
            "embedder": json.loads(self.vectors.embedder() or "null"),
            "vectors": one("SELECT count(*) FROM embeddings"),
        }

    def check(self) -> dict:
        """Integrity report: SQLite integrity_check, FTS5 index vs its content, row agreement."""
        conn = self.db.conn
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        try:
            conn.execute("INSERT INTO chunks_fts(chunks_fts, rank) VALUES ('integrity-check', 1)")
            fts_ok = True
        except sqlite3.DatabaseError:
            fts_ok = False
        one = lambda sql: conn.execute(sql).fetchone()[0]  # noqa: E731
        return {
            "integrity": integrity,
            "fts_integrity": fts_ok,
            "chunks": one("SELECT count(*) FROM chunks"),
            "fts_rows": one("SELECT count(*) FROM chunks_fts_docsize"),
            "fts_orphans": one("SELECT count(*) FROM chunks_fts_docsize WHERE id NOT IN (SELECT rowid FROM chunks)"),
        }

    def close(self) -> None:
        self.vectors.close()
        self.db.close()
