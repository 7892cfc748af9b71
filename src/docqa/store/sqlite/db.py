"""The one SQLite connection every SQLite concern shares: pragmas, migrations, transactions, batches.

All writes of a knowledge base go through `SQLiteDB.transaction()`, so a document's row, chunks,
full-text entries and vectors (written by different concern modules) commit together, and
inside `batch()` every concern's writes, runs included, join the one open transaction.
"""

from __future__ import annotations

import secrets
import sqlite3
import threading
import time
from contextlib import contextmanager
from pathlib import Path

from docqa.errors import SchemaError
from docqa.store.sqlite.migrate import migrate


class SQLiteDB:
    """One knowledge base file (WAL): the connection, its lock, and the transaction helper."""

    def __init__(self, path: str | Path):
        self.path = str(path)
        if self.path != ":memory:":
            Path(self.path).parent.mkdir(parents=True, exist_ok=True)
        try:
            self.conn = sqlite3.connect(self.path, isolation_level=None, check_same_thread=False, timeout=30)
            self.conn.execute("PRAGMA journal_mode=WAL")
            self.conn.execute("PRAGMA synchronous=NORMAL")
            self.conn.execute("PRAGMA foreign_keys=ON")
            self.conn.execute("PRAGMA cache_size=-65536")
            self.conn.execute("PRAGMA journal_size_limit=67108864")  # shrink the WAL after a checkpoint
            # Scratch tables of one write (stale.py: a group's new texts), in memory: never a temp file on disk.
            self.conn.execute("ATTACH DATABASE ':memory:' AS scratch")
            self.schema_version = migrate(self.conn, self.path)
        except sqlite3.DatabaseError as exc:
            raise SchemaError(f"{self.path} is not a usable docqa knowledge base ({exc}): move it away or pass another --kb") from exc
        self.lock = threading.RLock()
        self._batching = False
        self._batch_started: float | None = None  # when the open batch transaction began
        self._batch_seconds = 0.5

    @contextmanager
    def transaction(self):
        """One atomic unit: its own transaction, or part of the running batch transaction."""
        with self.lock:
            if self._batching:
                yield from self._in_batch()
                return
            self.conn.execute("BEGIN IMMEDIATE")
            try:
                yield self.conn
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise
            self.conn.execute("COMMIT")

    def _in_batch(self):
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

    @contextmanager
    def batch(self, seconds: float = 0.5):
        """Group many documents into few commits (each document stays atomic).

        FTS5 flushes its pending terms on every commit, so committing per document is several
        times slower than committing every `seconds`.  A crash or a failing write loses the
        uncommitted documents, each of which is then still wholly its previous version.
        """
        with self.lock:
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
        with self.lock:
            self._commit_batch()

    def _commit_batch(self) -> None:
        if self._batch_started is not None:
            self._batch_started = None
            self.conn.execute("COMMIT")

    @staticmethod
    def bump_generation(conn: sqlite3.Connection) -> None:
        """Mark the chunks or vectors as changed (the vector cache reloads on a new generation).

        Not PRAGMA data_version: that changes on every commit, and a run or feedback saved after
        each question must not make the next search reload every vector.  A random token, not a
        counter: the vectors loaded from one file are shared by every connection to it in the
        process (sqlite/vectors.py), and a file replaced at the same path (a restored backup, a
        new knowledge base) must never match a token of the old one.
        """
        conn.execute("INSERT INTO meta VALUES ('generation', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                     (secrets.token_hex(12),))

    @staticmethod
    def generation(conn: sqlite3.Connection) -> str | None:
        row = conn.execute("SELECT value FROM meta WHERE key = 'generation'").fetchone()
        return row[0] if row else None

    def close(self) -> None:
        self.conn.close()
