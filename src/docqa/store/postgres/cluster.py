"""PostgresCluster: replicas, commands to live runs and jobs in the knowledge base's database.

Commands are rows (a reply, an audit, nothing lost while a listener reconnects) and NOTIFY only
wakes the owner at once; every replica also looks for its commands each `wait` timeout.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from docqa.clock import now
from docqa.errors import StoreUnavailableError
from docqa.store.cluster import ACTIONS, Cluster, Command
from docqa.store.postgres.db import PostgresDB, safe_url, track

CHANNEL = "docqa_run_commands"
_KEEP_ANSWERED = "1 hour"  # answered commands older than this are deleted when replicas are reaped
_RUN_GONE = ("the server answering this run ({who}) stopped before it finished: killed, crashed or cut off from "
             "the database. Ask again.")
_JOB_GONE = ("the server running this job ({who}) stopped before it finished: killed, crashed or cut off from the "
             "database. Start it again (unchanged files are skipped).")


class PostgresCluster(Cluster):
    def __init__(self, db: PostgresDB):
        self.db = db
        self._listener: Any = None  # the LISTEN connection (psycopg), opened by the first `wait`

    # -- replicas ------------------------------------------------------------------------------
    def beat(self, replica: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("INSERT INTO replicas (id) VALUES (%s) ON CONFLICT (id) DO UPDATE SET beat_at = now()",
                         (replica,))

    def leave(self, replica: str) -> None:
        with self.db.transaction() as conn:
            conn.execute("DELETE FROM replicas WHERE id = %s", (replica,))

    def reap(self, stale: float, gone: Callable[[str], bool]) -> dict[str, list[str]]:
        with self.db.read() as conn:
            rows = conn.execute("SELECT id, beat_at < now() - make_interval(secs => %s) FROM replicas",
                                (stale,)).fetchall()
            alive = {rid for rid, silent in rows if not silent and not gone(rid)}
            # open jobs of a replica that is not alive: silent, gone, or no longer listed (never a clean stop)
            owners = [o for (o,) in conn.execute("SELECT DISTINCT owner FROM jobs WHERE status IN ('queued', 'running')")]
        dead = sorted({rid for rid, _ in rows} - alive)
        orphaned = sorted(set(owners) - alive)
        out: dict[str, list[str]] = {"replicas": dead, "runs": [], "jobs": []}
        if not dead and not orphaned:
            return out
        with self.db.transaction() as conn:
            for who in dead:
                out["runs"] += self._fail_runs(conn, who)
            for who in orphaned:
                out["jobs"] += self._fail_jobs(conn, who)
            conn.execute("DELETE FROM replicas WHERE id = ANY(%s)", (dead,))
            conn.execute(f"DELETE FROM run_commands WHERE created_at < now() - interval '{_KEEP_ANSWERED}'")
        return out

    @staticmethod
    def _fail_runs(conn, who: str) -> list[str]:
        error = _RUN_GONE.format(who=who)
        step = json.dumps([{"stage": "failed", "error": error}])
        rows = conn.execute(
            "UPDATE runs SET status = 'FAILED', error = %s, finished_at = %s,"
            " trace = (trace::jsonb || %s::jsonb)::text WHERE status = 'RUNNING' AND owner = %s RETURNING id",
            (error, now(), step, who)).fetchall()
        return [r[0] for r in rows]

    @staticmethod
    def _fail_jobs(conn, who: str) -> list[str]:
        ended = json.dumps({"status": "failed", "error": _JOB_GONE.format(who=who), "finished_at": now()})
        rows = conn.execute(
            "UPDATE jobs SET status = 'failed', updated_at = now(), data = (data::jsonb || %s::jsonb)::text"
            " WHERE owner = %s AND status IN ('queued', 'running') RETURNING id", (ended, who)).fetchall()
        return [r[0] for r in rows]

    # -- commands --------------------------------------------------------------------------------
    def send(self, run_id: str, owner: str, action: str, text: str | None) -> int | None:
        if action not in ACTIONS:
            raise ValueError(f"unknown run command {action!r}: one of {', '.join(ACTIONS)}")
        with self.db.transaction() as conn:  # NOTIFY is delivered at commit, when the row is visible
            row = conn.execute("INSERT INTO run_commands (run_id, owner, action, text) SELECT %s, %s, %s, %s"
                               " WHERE EXISTS (SELECT 1 FROM replicas WHERE id = %s) RETURNING id",
                               (run_id, owner, action, text, owner)).fetchone()
            if row is not None:
                conn.execute("SELECT pg_notify(%s, %s)", (CHANNEL, owner))
        return None if row is None else row[0]

    def pending(self, owner: str) -> list[Command]:
        with self.db.read() as conn:
            rows = conn.execute("SELECT id, run_id, action, text FROM run_commands WHERE owner = %s AND accepted IS NULL"
                                " ORDER BY id", (owner,)).fetchall()
        return [Command(*row) for row in rows]

    def answer(self, command_id: int, accepted: bool) -> None:
        with self.db.transaction() as conn:
            conn.execute("UPDATE run_commands SET accepted = %s WHERE id = %s", (accepted, command_id))

    def outcome(self, command_id: int) -> bool | None:
        return self.db.one("SELECT accepted FROM run_commands WHERE id = %s", (command_id,))

    def wait(self, timeout: float) -> None:
        errors = self.db.errors
        try:
            if self._listener is None or self._listener.closed:
                self._listener = errors.connect(self.db.url, autocommit=True, connect_timeout=5)
                track(self._listener)
                self._listener.execute(f"LISTEN {CHANNEL}")
            for _ in self._listener.notifies(timeout=timeout, stop_after=1):
                pass
        except errors.OperationalError as exc:
            self.close()
            raise StoreUnavailableError(f"cannot listen on {safe_url(self.db.url)}: {exc}".strip()) from exc

    # -- jobs --------------------------------------------------------------------------------------
    def save_job(self, job: dict, owner: str) -> None:
        with self.db.transaction() as conn:
            conn.execute(
                "INSERT INTO jobs (id, kind, collection, owner, status, data, created_at) VALUES (%s, %s, %s, %s, %s, %s, %s)"
                " ON CONFLICT (id) DO UPDATE SET status = excluded.status, data = excluded.data, updated_at = now()",
                (job["id"], job["kind"], job.get("collection"), owner, job["status"], json.dumps(job), job["created_at"]))

    def get_job(self, job_id: str) -> dict | None:
        data = self.db.one("SELECT data FROM jobs WHERE id = %s", (job_id,))
        return None if data is None else json.loads(data)

    def close(self) -> None:
        if self._listener is not None:
            try:
                self._listener.close()
            except Exception:  # already broken
                pass
            self._listener = None
