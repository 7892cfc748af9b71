"""PostgresRunLog: sessions, runs (the audit trail) and feedback in the knowledge base's PostgreSQL database.

It uses the knowledge base's pool and transaction helper (`docqa.store.postgres.db.PostgresDB`);
rows and their JSON are kept as the SQLite run log keeps them (sqlite.py), so both read alike.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Any, Protocol

from docqa.clock import now
from docqa.errors import NotFoundError
from docqa.store.sources import MARK_UNKNOWN, READ_SOURCES, SOURCE_COLUMNS, UNKNOWN, WRITE_COLUMNS, citations, is_passage, source_rows
from docqa.store.sqlite.runlog import _READ_COLUMNS, _RUN_COLUMNS, _STALE, _dumps, _run_row, _title, read_run
from docqa.store.runlog import RunLog
from docqa.types import RATINGS, RUN_STATUSES, FeedbackRecord, RunRecord, SessionRecord


# A citation is written with whether its quote is its document's text at its offsets (the version it rests on
# is the stored one when its hash is known), as SQLite's run log writes it: a change to the document passes over
# an exact one by offsets alone (stale.py).
_INSERT_SOURCE = (f"INSERT INTO run_sources (run_id, {', '.join(WRITE_COLUMNS)}, exact)"
                  " SELECT %(run)s, %(n)s, %(doc)s, %(hash)s, %(chunk)s, %(start)s::int, %(end)s::int, %(quote)s,"
                  " %(hash)s::text <> %(unknown)s::text AND %(start)s::int >= 0 AND %(end)s::int >= %(start)s::int"
                  " AND coalesce((SELECT substr(text, %(start)s::int + 1, %(end)s::int - %(start)s::int) = %(quote)s"
                  " FROM document_texts WHERE document_id = %(doc)s), FALSE)")
_SOURCE_KEYS = ("run", "n", "doc", "hash", "chunk", "start", "end", "quote")


class Database(Protocol):
    """What the run log needs of the knowledge base's PostgreSQL database."""

    def read(self) -> AbstractContextManager[Any]: ...

    def transaction(self) -> AbstractContextManager[Any]: ...


class PostgresRunLog(RunLog):
    """Sessions, runs and feedback in the knowledge base database."""

    def __init__(self, db: Database):
        self.db = db

    def _rows(self, sql: str, args=()) -> list[tuple]:
        with self.db.read() as conn:
            return conn.execute(sql, args).fetchall()

    # -- sessions --------------------------------------------------------------------------
    def save_session(self, session: SessionRecord) -> SessionRecord:
        stamp = now()
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, collection, created_at, updated_at) VALUES (%s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET title = excluded.title, collection = excluded.collection,"
                " updated_at = excluded.updated_at",
                (session.id, session.title or "", session.collection, session.created_at or stamp, stamp))
        return self.get_session(session.id)

    def get_session(self, session_id: str) -> SessionRecord:
        rows = self._rows("SELECT id, title, collection, created_at, updated_at FROM sessions WHERE id = %s", (session_id,))
        if not rows:
            raise NotFoundError(f"no session {session_id!r}: 'docqa log' shows the session of every run")
        return SessionRecord(*rows[0])

    def delete_session(self, session_id: str) -> bool:
        with self.db.transaction() as conn:
            return conn.execute("DELETE FROM sessions WHERE id = %s", (session_id,)).rowcount > 0

    # -- runs ------------------------------------------------------------------------------
    def save_run(self, run: RunRecord) -> RunRecord:
        if run.status not in RUN_STATUSES:
            raise ValueError(f"unknown run status {run.status!r}: one of {', '.join(RUN_STATUSES)}")
        if not isinstance(run.question, str) or not run.session_id:
            raise ValueError("a run needs a question and a session id")
        stamp = now()
        row = list(_run_row(run, run.created_at or stamp))
        row[6] = None if row[6] is None else bool(row[6])  # answerable: a boolean column here
        columns = _RUN_COLUMNS.split(", ")
        updates = ", ".join(f"{c} = excluded.{c}" for c in columns if c not in ("id", "created_at"))
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, collection, created_at, updated_at) VALUES (%s, %s, NULL, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET updated_at = excluded.updated_at",
                (run.session_id, _title(run.question), stamp, stamp))
            conn.execute(f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({', '.join(['%s'] * len(row))})"
                         f" ON CONFLICT (id) DO UPDATE SET {updates}", row)
            _write_sources(conn, run, stamp)
        return self.get_run(run.id)

    def save_recheck(self, run_id: str, recheck: dict) -> None:
        with self.db.transaction() as conn:
            updated = conn.execute("UPDATE runs SET recheck = %s WHERE id = %s", (_dumps(recheck), run_id)).rowcount
        if not updated:
            raise NotFoundError(f"no run {run_id!r}: 'docqa log' lists the runs with their ids")

    def get_run(self, run_id: str) -> RunRecord:
        rows = self._rows(f"SELECT {_READ_COLUMNS} FROM runs WHERE id = %s", (run_id,))
        if not rows:
            raise NotFoundError(f"no run {run_id!r}: 'docqa log' lists the runs with their ids")
        return self._with_feedback([read_run(rows[0])])[0]

    def list_runs(self, *, since: str | None = None, until: str | None = None, statuses: Iterable[str] | None = None,
                  session_id: str | None = None, limit: int | None = None, stale: bool | None = None) -> list[RunRecord]:
        sql, args = f"SELECT {_READ_COLUMNS} FROM runs WHERE TRUE", list[object]()
        if stale is not None:
            sql += f" AND {'' if stale else 'NOT '}{_STALE}"
        if since:
            sql += " AND created_at >= %s"
            args.append(since)
        if until:
            sql += " AND created_at < %s"
            args.append(until)
        if statuses is not None:
            sql += " AND status = ANY(%s)"
            args.append(list(statuses))
        if session_id is not None:
            sql += " AND session_id = %s"
            args.append(session_id)
        sql += ' ORDER BY created_at COLLATE "C" DESC, seq DESC'
        if limit is not None:
            sql += " LIMIT %s"
            args.append(max(limit, 0))
        return self._with_feedback([read_run(r) for r in self._rows(sql, args)])

    # -- feedback --------------------------------------------------------------------------
    def add_feedback(self, run_id: str, rating: str, comment: str | None = None) -> FeedbackRecord:
        if rating not in RATINGS:
            raise ValueError(f"rating must be 'up' or 'down', not {rating!r}")
        stamp = now()
        with self.db.transaction() as conn:
            row = conn.execute("INSERT INTO feedback (run_id, rating, comment, created_at) SELECT id, %s, %s, %s"
                               " FROM runs WHERE id = %s RETURNING id", (rating, comment, stamp, run_id)).fetchone()
        if row is None:
            raise NotFoundError(f"no run {run_id!r} to rate: 'docqa log' lists the runs with their ids")
        return FeedbackRecord(row[0], run_id, rating, comment, stamp)

    def _with_feedback(self, runs: list[RunRecord]) -> list[RunRecord]:
        by_id = {r.id: r for r in runs}
        if by_id:
            for row in self._rows("SELECT id, run_id, rating, comment, created_at FROM feedback WHERE run_id = ANY(%s)"
                                  " ORDER BY id", (list(by_id),)):
                by_id[row[1]].feedback.append(FeedbackRecord(*row))
            for row in self._rows(f"{READ_SOURCES} WHERE s.run_id = ANY(%s) ORDER BY s.run_id, s.n, s.char_start",
                                  (list(by_id),)):
                by_id[row[0]].sources.append(dict(zip(SOURCE_COLUMNS, row[1:])))
        return runs


def _write_sources(conn, run: RunRecord, stamp: str) -> None:
    """Replace the run's sources: what its published citations rest on (docqa.store.sources)."""
    conn.execute("DELETE FROM run_sources WHERE run_id = %s", (run.id,))
    cited = citations(run)
    if not cited:
        return
    chunk_ids = [str(c.get("chunk_id")) for c in cited if not is_passage(str(c.get("chunk_id") or ""))]
    chunks = dict(conn.execute("SELECT c.id, d.content_hash FROM chunks c JOIN documents d ON d.id = c.document_id"
                               " WHERE c.id = ANY(%s)", (chunk_ids,)).fetchall())
    docs = dict(conn.execute("SELECT id, content_hash FROM documents WHERE id = ANY(%s)",
                             (list({str(c["document_id"]) for c in cited}),)).fetchall())
    rows = source_rows(run, chunks, docs)
    with conn.cursor() as cur:
        cur.executemany(_INSERT_SOURCE, [{**dict(zip(_SOURCE_KEYS, row)), "unknown": UNKNOWN} for row in rows])
    if any(row[3] == UNKNOWN for row in rows):
        conn.execute(MARK_UNKNOWN.format(p="%s"), (stamp, run.id, UNKNOWN))
