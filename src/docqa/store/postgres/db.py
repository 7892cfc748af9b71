"""The PostgreSQL database every PostgreSQL concern shares: a connection pool, migrations, transactions.

Reads take a pooled connection in autocommit mode (`snapshot()`: one read-only transaction, for
reads whose queries must agree); writes go through `PostgresDB.transaction()`,
so a document's row, text, chunks, full-text postings and statistics, and vectors (written by
different concern modules) commit together.  A lost server (stopped, restarting, the network)
surfaces as `StoreUnavailableError`; the pool checks each connection before lending it and
reconnects by itself, so the next call after the server is back succeeds.

Inside `batch()` (ingest), every read and write of the batching thread runs on one connection in
one open transaction, committed every `seconds` (as SQLite groups its commits): each document is
a savepoint inside it, so a killed writer still leaves every document wholly old or wholly new,
and a batch of small documents costs one commit instead of one each.  Document writes also take one advisory lock: the
corpus statistics of BM25 (document frequencies, totals) are shared rows, and one writer at a
time keeps them exact and free of deadlocks (ingest has one writer anyway; see issue 14's note).
"""

from __future__ import annotations

import os
import threading
import time
import weakref
from contextlib import contextmanager
from importlib import resources

from docqa.errors import MissingExtraError, SchemaError, StoreError, StoreUnavailableError

INSTALL = "pip install 'docqa[postgres]'"
WRITE_LOCK = 0x646F6371  # pg_advisory_xact_lock key of the document writers ("docq")
WAIT = 5.0  # seconds a call waits for a pooled connection before the database counts as unavailable
_OPEN: weakref.WeakSet = weakref.WeakSet()  # every connection this process opened (see _forget_in_child)


def _psycopg():
    try:
        import psycopg
        import psycopg_pool
    except ImportError as exc:
        raise MissingExtraError("The PostgreSQL backend (psycopg, psycopg-pool)", INSTALL) from exc
    return psycopg, psycopg_pool


def migrations() -> list[tuple[int, str, str]]:
    """(number, name, sql) of every bundled PostgreSQL migration, in order."""
    found = []
    for entry in resources.files("docqa.store").joinpath("migrations", "postgres").iterdir():
        if entry.name.endswith(".sql"):
            number, _, rest = entry.name.partition("_")
            found.append((int(number), rest.removesuffix(".sql"), entry.read_text(encoding="utf-8")))
    return sorted(found)


class PostgresDB:
    """One PostgreSQL database (by URL): the pool, the schema version, the transaction helper."""

    def __init__(self, url: str, max_size: int = 8):
        psycopg, psycopg_pool = _psycopg()
        self.url, self.errors = url, psycopg
        try:
            with psycopg.connect(url, autocommit=True) as conn:
                self.schema_version = migrate(conn, safe_url(url))
        except psycopg.OperationalError as exc:
            raise StoreError(f"cannot connect to the PostgreSQL knowledge base {safe_url(url)}: {exc}".strip()
                             + " (is the server running, and the URL right?)") from exc
        self.pool = psycopg_pool.ConnectionPool(url, min_size=1, max_size=max_size, open=True, configure=_configure,
                                                check=psycopg_pool.ConnectionPool.check_connection, timeout=WAIT,
                                                kwargs={"autocommit": True}, name="docqa")
        self._local = threading.local()  # .batch: this thread's open batch, if any

    @contextmanager
    def read(self):
        """A pooled connection for reads (autocommit: each statement sees the latest commits); inside
        this thread's batch, the batch's connection (its own uncommitted writes included)."""
        batch = getattr(self._local, "batch", None)
        if batch is not None:
            with self._reachable():
                yield batch.conn
            return
        with self._reachable(), self.pool.connection() as conn:
            yield conn

    @contextmanager
    def snapshot(self):
        """`read`, but every statement sees the same committed state (one read-only REPEATABLE READ
        transaction): figures read in several queries, such as BM25's totals and document
        frequencies, agree with each other while writers commit.  Inside this thread's batch, the
        batch's connection (its own writes included)."""
        batch = getattr(self._local, "batch", None)
        if batch is not None:
            with self._reachable():
                yield batch.conn
            return
        with self._reachable(), self.pool.connection() as conn, conn.transaction():
            conn.execute("SET TRANSACTION ISOLATION LEVEL REPEATABLE READ, READ ONLY")
            yield conn

    @contextmanager
    def transaction(self, documents: bool = False):
        """One atomic unit on its own connection; `documents=True` also takes the writers' lock.
        Inside this thread's batch: a savepoint in the batch's transaction."""
        batch = getattr(self._local, "batch", None)
        if batch is not None:
            with self._reachable():
                batch.begin(documents)
                with batch.conn.transaction():
                    yield batch.conn
                batch.commit_if_due()
            return
        with self._reachable(), self.pool.connection() as conn, conn.transaction():
            if documents:
                conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            yield conn

    @contextmanager
    def batch(self, seconds: float = 0.5):
        """Group this thread's writes into one transaction committed every `seconds` (nested: joins)."""
        if getattr(self._local, "batch", None) is not None:
            yield
            return
        with self._reachable(), self.pool.connection() as conn:
            self._local.batch = batch = _Batch(conn, seconds)
            try:
                yield
            except BaseException:
                batch.rollback()
                raise
            else:
                batch.commit()
            finally:
                self._local.batch = None

    def defer_index(self, on: bool) -> None:
        """From now on this thread's vector writes leave a missing HNSW index to the caller (bulk.py)."""
        self._local.defer_index = on

    def index_deferred(self) -> bool:
        return getattr(self._local, "defer_index", False)

    def commit_pending(self) -> None:
        """Inside a batch: commit what this thread wrote so far."""
        batch = getattr(self._local, "batch", None)
        if batch is not None:
            with self._reachable():
                batch.commit()

    @contextmanager
    def _reachable(self):
        """A lost connection or server becomes StoreUnavailableError (lock timeouts and the like stay as they are)."""
        try:
            yield
        except self.errors.OperationalError as exc:
            if not _connection_lost(exc):
                raise
            raise StoreUnavailableError(f"the PostgreSQL knowledge base {safe_url(self.url)} cannot be reached right "
                                        f"now ({_first_line(exc)}): retry in a moment") from exc

    def ping(self) -> float:
        """Seconds one round trip to the server takes; StoreUnavailableError when it cannot be reached."""
        started = time.perf_counter()
        self.one("SELECT 1")
        return time.perf_counter() - started

    def one(self, sql: str, args=()):
        """The first column of the first row of a read."""
        with self.read() as conn:
            row = conn.execute(sql, args).fetchone()
        return None if row is None else row[0]

    def close(self) -> None:
        self.pool.close()


class _Batch:
    """One thread's open batch: its connection, and since when its transaction is open."""

    def __init__(self, conn, seconds: float):
        self.conn, self.seconds = conn, seconds
        self.opened: float | None = None
        self.locked = False

    def begin(self, documents: bool) -> None:
        if self.opened is None:
            self.conn.execute("BEGIN")
            self.opened, self.locked = time.monotonic(), False
        if documents and not self.locked:
            self.conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            self.locked = True

    def commit_if_due(self) -> None:
        if self.opened is not None and time.monotonic() - self.opened >= self.seconds:
            self.commit()

    def commit(self) -> None:
        if self.opened is not None:
            self.opened = None
            self.conn.execute("COMMIT")

    def rollback(self) -> None:
        if self.opened is not None:
            self.opened = None
            try:
                self.conn.execute("ROLLBACK")
            except Exception:  # a lost connection has nothing to roll back
                pass


def _connection_lost(exc: Exception) -> bool:
    """The error means the server or the connection is gone: no SQLSTATE (closed connection, pool
    timeout), class 08 (connection exception) or 57P0x (shutdown, crash, cannot connect now)."""
    state = getattr(exc, "sqlstate", None)
    return state is None or state.startswith("08") or state.startswith("57P")


def _first_line(exc: Exception) -> str:
    return (str(exc).strip().splitlines() or [type(exc).__name__])[0]


def track(conn) -> None:
    """Remember a connection, so that a forked child lets go of it (see `_forget_in_child`)."""
    _OPEN.add(conn)


def _forget_in_child() -> None:
    """In a forked child (ingest's parsing workers): point each inherited connection's socket at
    /dev/null.  Otherwise the child keeps the parent's sessions open after the parent is killed: the
    server never sees them end, and a transaction the parent had open (the ingest batch, its write
    lock) would block every other writer for as long as the orphaned child lives."""
    null = os.open(os.devnull, os.O_RDWR)
    try:
        for conn in list(_OPEN):
            try:
                os.dup2(null, conn.pgconn.socket)  # the number stays valid; nothing reaches the server
            except Exception:  # closed or broken: nothing to let go of
                pass
    finally:
        os.close(null)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_in_child)


def _configure(conn) -> None:
    """Each pooled connection: pgvector's types (vectors travel in binary, not as text)."""
    track(conn)
    try:
        from pgvector.psycopg import register_vector
    except ImportError as exc:
        raise MissingExtraError("The PostgreSQL backend (pgvector)", INSTALL) from exc
    register_vector(conn)


def migrate(conn, where: str) -> int:
    """Apply the migrations this database lacks, each in its own transaction; return the schema version."""
    conn.execute("SELECT pg_advisory_lock(%s)", (WRITE_LOCK + 1,))  # two processes opening at once migrate once
    try:
        conn.execute("CREATE TABLE IF NOT EXISTS _migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
        done = {row[0] for row in conn.execute("SELECT number FROM _migrations")}
        known = migrations()
        newest = known[-1][0]
        if done and max(done) > newest:
            raise SchemaError(f"{where} was written by a newer docqa (schema {max(done)}, this one knows {newest}): upgrade docqa")
        for number, name, sql in known:
            if number not in done:
                with conn.transaction():
                    conn.execute(sql)
                    conn.execute("INSERT INTO _migrations VALUES (%s, %s, now()::text)", (number, name))
        return newest
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (WRITE_LOCK + 1,))


def safe_url(url: str) -> str:
    """The URL without its password (for messages)."""
    head, sep, tail = url.partition("@")
    if not sep or "://" not in head:
        return url
    scheme, _, user = head.partition("://")
    return f"{scheme}://{user.split(':')[0]}@{tail}"
