"""SQLiteRunLog: sessions, runs (the audit trail) and feedback in the knowledge base's SQLite file.

It writes through the knowledge base's shared transaction helper (`docqa.store.sqlite.db.SQLiteDB`,
which hands it out), so inside an ingest `batch()` a run joins the open batch transaction instead
of committing it early.  Nothing here raises inside a transaction (input is checked first,
unknown runs are found by row counts), because an exception there rolls back the whole open batch.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from contextlib import AbstractContextManager
from typing import Protocol

from docqa.clock import now
from docqa.errors import NotFoundError
from docqa.store.sources import (MARK_UNKNOWN, READ_SOURCES, SOURCE_COLUMNS, STALE, STALE_AT, UNKNOWN, WRITE_COLUMNS, chunked,
                                   citations, is_passage, source_rows)
from docqa.store.runlog import RunLog
from docqa.types import RATINGS, RUN_STATUSES, FeedbackRecord, RunRecord, SessionRecord, SessionSummary

_RUN_COLUMNS = ("id, session_id, question, standalone, mode, status, answerable, confidence, answer, result, trace, "
                "timings, usage, model, error, created_at, finished_at, collection, owner, origin")
# Read with every run: its latest recheck and when its first cited document changed (None: none did).
_READ_COLUMNS = _RUN_COLUMNS + ", recheck, " + STALE_AT
_STALE = STALE
# A citation is written with whether its quote is its document's text at its offsets (the version it rests on
# is the stored one when its hash is known): a change to the document passes over an exact one by offsets alone.
_INSERT_SOURCE = (f"INSERT INTO run_sources (run_id, {', '.join(WRITE_COLUMNS)}, exact)"
                  " SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?4 <> ?9 AND ?6 >= 0 AND ?7 >= ?6"
                  " AND coalesce((SELECT substr(text, ?6 + 1, ?7 - ?6) = ?8"
                  " FROM document_texts WHERE document_id = ?3), 0)")
_SESSION_TITLE_CHARS = 80  # a session created by its first run is titled with that question


# One row per session with runs: its first question, run count, last activity, latest and every collection.
_SESSIONS_SQL = """
SELECT s.id, s.title,
       (SELECT question FROM runs WHERE session_id = s.id ORDER BY created_at, rowid LIMIT 1),
       COUNT(r.id), s.created_at, MAX(COALESCE(r.finished_at, r.created_at)),
       (SELECT collection FROM runs WHERE session_id = s.id ORDER BY created_at DESC, rowid DESC LIMIT 1),
       json_group_array(DISTINCT r.collection),
       (SELECT origin FROM runs WHERE session_id = s.id ORDER BY created_at, rowid LIMIT 1)
FROM sessions s JOIN runs r ON r.session_id = s.id
GROUP BY s.id
ORDER BY MAX(COALESCE(r.finished_at, r.created_at)) DESC, s.rowid DESC"""


class Database(Protocol):
    """What the run log needs of the knowledge base's SQLite file (docqa.store.sqlite.db.SQLiteDB)."""

    conn: sqlite3.Connection

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]: ...


class SQLiteRunLog(RunLog):
    """Sessions, runs and feedback in the knowledge base file."""

    def __init__(self, db: Database):
        self.db, self.conn = db, db.conn

    # -- sessions --------------------------------------------------------------------------
    def save_session(self, session: SessionRecord) -> SessionRecord:
        stamp = now()
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, collection, created_at, updated_at) VALUES (?, ?, ?, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET title = excluded.title, collection = excluded.collection,"
                " updated_at = excluded.updated_at",
                (session.id, session.title or "", session.collection, session.created_at or stamp, stamp),
            )
        return self.get_session(session.id)

    def get_session(self, session_id: str) -> SessionRecord:
        row = self.conn.execute(
            "SELECT id, title, collection, created_at, updated_at FROM sessions WHERE id = ?", (session_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no session {session_id!r}: 'docqa log' shows the session of every run")
        return SessionRecord(*row)

    def delete_session(self, session_id: str) -> bool:
        with self.db.transaction() as conn:  # runs and their feedback go with it (ON DELETE CASCADE)
            return conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,)).rowcount > 0

    def list_sessions(self, limit: int | None = None) -> list[SessionSummary]:
        sql = _SESSIONS_SQL + (" LIMIT ?" if limit is not None else "")
        rows = self.conn.execute(sql, () if limit is None else (max(limit, 0),)).fetchall()
        return [SessionSummary(*row[:7], json.loads(row[7]), row[8]) for row in rows]  # type: ignore[call-arg]  # mypy takes a star tuple to fill every parameter

    # -- runs ------------------------------------------------------------------------------
    def save_run(self, run: RunRecord) -> RunRecord:
        if run.status not in RUN_STATUSES:
            raise ValueError(f"unknown run status {run.status!r}: one of {', '.join(RUN_STATUSES)}")
        if not isinstance(run.question, str) or not run.session_id:
            raise ValueError("a run needs a question and a session id")
        stamp = now()
        row = _run_row(run, run.created_at or stamp)
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, collection, created_at, updated_at) VALUES (?, ?, NULL, ?, ?)"
                " ON CONFLICT(id) DO UPDATE SET updated_at = excluded.updated_at",
                (run.session_id, _title(run.question), stamp, stamp),
            )
            updates = ", ".join(f"{c} = excluded.{c}" for c in _RUN_COLUMNS.split(", ") if c not in ("id", "created_at"))
            conn.execute(
                f"INSERT INTO runs ({_RUN_COLUMNS}) VALUES ({', '.join('?' * len(row))})"
                f" ON CONFLICT(id) DO UPDATE SET {updates}",
                row,
            )
            _write_sources(conn, run, stamp)
        return self.get_run(run.id)

    def save_recheck(self, run_id: str, recheck: dict) -> None:
        with self.db.transaction() as conn:
            updated = conn.execute("UPDATE runs SET recheck = ? WHERE id = ?", (_dumps(recheck), run_id)).rowcount
        if not updated:
            raise NotFoundError(f"no run {run_id!r}: 'docqa log' lists the runs with their ids")

    def get_run(self, run_id: str) -> RunRecord:
        row = self.conn.execute(f"SELECT {_READ_COLUMNS} FROM runs WHERE id = ?", (run_id,)).fetchone()
        if row is None:
            raise NotFoundError(f"no run {run_id!r}: 'docqa log' lists the runs with their ids")
        return self._with_feedback([read_run(row)])[0]

    def list_runs(self, *, since: str | None = None, until: str | None = None, statuses: Iterable[str] | None = None,
                  session_id: str | None = None, limit: int | None = None, stale: bool | None = None) -> list[RunRecord]:
        sql, args = f"SELECT {_READ_COLUMNS} FROM runs WHERE 1=1", list[object]()
        if stale is not None:
            sql += f" AND {'' if stale else 'NOT '}{_STALE}"
        if since:
            sql += " AND created_at >= ?"
            args.append(since)
        if until:
            sql += " AND created_at < ?"
            args.append(until)
        if statuses is not None:
            wanted = list(statuses)
            sql += f" AND status IN ({','.join('?' * len(wanted))})" if wanted else " AND 0"
            args += wanted
        if session_id is not None:
            sql += " AND session_id = ?"
            args.append(session_id)
        sql += " ORDER BY created_at DESC, rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            args.append(max(limit, 0))
        return self._with_feedback([read_run(r) for r in self.conn.execute(sql, args)])

    # -- feedback --------------------------------------------------------------------------
    def add_feedback(self, run_id: str, rating: str, comment: str | None = None) -> FeedbackRecord:
        if rating not in RATINGS:
            raise ValueError(f"rating must be 'up' or 'down', not {rating!r}")
        stamp = now()
        with self.db.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO feedback (run_id, rating, comment, created_at) SELECT id, ?, ?, ? FROM runs WHERE id = ?",
                (rating, comment, stamp, run_id),
            )
            added = cursor.lastrowid if cursor.rowcount else None
        if added is None:
            raise NotFoundError(f"no run {run_id!r} to rate: 'docqa log' lists the runs with their ids")
        return FeedbackRecord(added, run_id, rating, comment, stamp)

    def _with_feedback(self, runs: list[RunRecord]) -> list[RunRecord]:
        """Attach each run's feedback, oldest first."""
        by_id = {r.id: r for r in runs}
        ids = list(by_id)
        for i in range(0, len(ids), 500):
            part = ids[i : i + 500]
            rows = self.conn.execute(
                "SELECT id, run_id, rating, comment, created_at FROM feedback"
                f" WHERE run_id IN ({','.join('?' * len(part))}) ORDER BY id", part)
            for row in rows:
                by_id[row[1]].feedback.append(FeedbackRecord(*row))
            rows = self.conn.execute(f"{READ_SOURCES} WHERE s.run_id IN ({','.join('?' * len(part))})"
                                     " ORDER BY s.n, s.char_start", part)
            for row in rows:
                by_id[row[0]].sources.append(dict(zip(SOURCE_COLUMNS, row[1:])))
        return runs


def _write_sources(conn: sqlite3.Connection, run: RunRecord, stamp: str) -> None:
    """Replace the run's sources: what its published citations rest on (docqa.store.sources)."""
    conn.execute("DELETE FROM run_sources WHERE run_id = ?", (run.id,))
    cited = citations(run)
    if not cited:
        return
    chunk_ids = [str(c.get("chunk_id")) for c in cited if not is_passage(str(c.get("chunk_id") or ""))]
    doc_ids = list({str(c["document_id"]) for c in cited})
    chunks: dict[str, str] = {}
    docs: dict[str, str] = {}
    for part in chunked(chunk_ids):
        chunks.update(conn.execute("SELECT c.id, d.content_hash FROM chunks c JOIN documents d ON d.id = c.document_id"
                                   f" WHERE c.id IN ({','.join('?' * len(part))})", part).fetchall())
    for part in chunked(doc_ids):
        docs.update(conn.execute(f"SELECT id, content_hash FROM documents WHERE id IN ({','.join('?' * len(part))})",
                                 part).fetchall())
    rows = source_rows(run, chunks, docs)
    conn.executemany(_INSERT_SOURCE, [(*row, UNKNOWN) for row in rows])
    if any(row[3] == UNKNOWN for row in rows):
        conn.execute(MARK_UNKNOWN.format(p="?"), (stamp, run.id, UNKNOWN))


def _title(question: str) -> str:
    title = " ".join(question.split())
    return title if len(title) <= _SESSION_TITLE_CHARS else title[: _SESSION_TITLE_CHARS - 1] + "…"


def _dumps(value) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _run_row(r: RunRecord, created_at: str) -> tuple:
    answerable = None if r.answerable is None else int(bool(r.answerable))
    result = None if r.result is None else _dumps(r.result)
    return (r.id, r.session_id, r.question, r.standalone, r.mode, r.status, answerable, r.confidence, r.answer,
            result, _dumps(r.trace or []), _dumps(r.timings or {}), _dumps(r.usage or {}), r.model, r.error,
            created_at, r.finished_at, r.collection, r.owner, r.origin)


def read_run(row: tuple) -> RunRecord:
    """A run read with _READ_COLUMNS: its columns, then its recheck and when it went stale."""
    run = _run(row[:-2])
    run.recheck = None if row[-2] is None else json.loads(row[-2])
    run.stale_at = row[-1]
    return run


def _run(row: tuple) -> RunRecord:
    fields = dict(zip(_RUN_COLUMNS.split(", "), row))
    fields["answerable"] = None if fields["answerable"] is None else bool(fields["answerable"])
    fields["result"] = None if fields["result"] is None else json.loads(fields["result"])
    for name in ("trace", "timings", "usage"):
        fields[name] = json.loads(fields[name])
    return RunRecord(**fields)

