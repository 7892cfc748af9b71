"""This server among several `docqa serve` replicas on one PostgreSQL database.

A run is answered by the replica whose worker iterates it; a request to steer, follow up or cancel
it may reach any replica (the proxy picks).  The replica that gets it finds the run's owner in the
run log and, when that is another replica, relays: it writes a command row and NOTIFYs; the owner's
`Replica` thread (LISTENing) takes the row, acts on its live run, and writes the outcome, which the
first replica reads back and answers with (202, or 409 when the run had ended).

Why a table woken by NOTIFY rather than NOTIFY alone: a notification is lost when the listener is
not connected at that moment (a reconnect), carries no reply, and is not kept; the row is all three,
and NOTIFY only makes the owner look at once instead of at its next poll (`_POLL`).

The same thread beats every `api.heartbeat` seconds and reaps: a replica silent for five beats (or
whose process on this host is gone) is dead, so its RUNNING runs and open jobs are marked failed —
never left running.  Jobs are shared through the database too (`SharedJobs`), so any replica shows
a job's progress.  On SQLite there is one server per file and none of this runs.
"""

from __future__ import annotations

import asyncio
import logging
import threading
import time

from docqa.api.jobs import Job
from docqa.api.live import LiveRuns
from docqa.errors import StoreError
from docqa.kb import KnowledgeBase
from docqa.run import owner

log = logging.getLogger("docqa.api")
_POLL = 1.0  # seconds between looks for commands when no notification came
_SILENT_BEATS = 5  # a replica silent this many heartbeats is dead
_PROGRESS_EVERY = 0.5  # seconds between saves of a job's progress


class Replica:
    """This replica's thread: heartbeat, commands for its live runs, the reaper."""

    def __init__(self, kb: KnowledgeBase, live: LiveRuns, heartbeat: float):
        self.kb, self.live, self.heartbeat = kb, live, heartbeat
        self.cluster = kb.cluster
        self.id = owner.current()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="docqa-replica", daemon=True)
        self._next_beat = 0.0
        self.connected = False

    def start(self) -> None:
        self.cluster.beat(self.id)  # listed before its first run or job is
        self.connected = True
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(_POLL + 5)
        try:
            self.cluster.leave(self.id)
        except StoreError as exc:  # the others reap it once it stays silent
            log.warning("could not leave the replica list: %s", exc)
        self.cluster.close()

    def _loop(self) -> None:
        backoff = 0.5
        while not self._stop.is_set():
            try:
                self._tick()
                self.cluster.wait(min(_POLL, self.heartbeat))
                backoff = 0.5
            except StoreError as exc:
                if self.connected:
                    log.warning("lost the database (%s); retrying", exc)
                self.connected = False
                self._stop.wait(backoff)
                backoff = min(backoff * 2, 5.0)
            except Exception:  # never let the replica's thread die: log and carry on
                log.exception("replica housekeeping failed")
                self._stop.wait(_POLL)

    def _tick(self) -> None:
        if time.monotonic() >= self._next_beat:
            self.cluster.beat(self.id)
            if not self.connected:
                log.info("the database is back")
            self.connected = True
            self._next_beat = time.monotonic() + self.heartbeat
            self._reap()
        for command in self.cluster.pending(self.id):
            accepted = self.live.act(command.run_id, command.action, command.text)
            self.cluster.answer(command.id, bool(accepted))

    def _reap(self) -> None:
        reaped = self.cluster.reap(self.heartbeat * _SILENT_BEATS,
                                   lambda rid: rid != self.id and owner.alive(rid) is False)
        if any(reaped.values()):
            log.warning("replicas gone: %s; their runs %s and jobs %s are marked failed",
                        reaped["replicas"], reaped["runs"], reaped["jobs"])

    async def relay(self, run_id: str, to: str, action: str, text: str | None, timeout: float = 5.0) -> bool | None:
        """Ask the replica `to` to act on its live run: its answer; False when `to` is no listed replica,
        None when it did not answer in time."""
        command = await asyncio.to_thread(self.cluster.send, run_id, to, action, text)
        if command is None:  # not answered by a replica: nobody here can reach it
            return False
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            outcome = await asyncio.to_thread(self.cluster.outcome, command)
            if outcome is not None:
                return outcome
            await asyncio.sleep(0.05)
        return None


class SharedJobs:
    """The writer's jobs, saved in the database so that every replica shows them."""

    def __init__(self, cluster, replica: str):
        self.cluster, self.replica = cluster, replica
        self._saved: dict[str, float] = {}
        self._lock = threading.Lock()

    def save(self, job: Job, progress: bool = False) -> None:
        """Save the job (a progress update at most every `_PROGRESS_EVERY` s); a lost database is logged, not raised."""
        stamp = time.monotonic()
        with self._lock:
            if progress and stamp - self._saved.get(job.id, 0.0) < _PROGRESS_EVERY:
                return
            self._saved[job.id] = stamp
            if job.status in ("succeeded", "failed"):
                self._saved.pop(job.id, None)
        try:
            self.cluster.save_job(job.to_dict(), self.replica)
        except StoreError as exc:
            log.warning("could not save job %s: %s", job.id, exc)

    def get(self, job_id: str) -> Job | None:
        data = self.cluster.get_job(job_id)
        return None if data is None else Job.from_dict(data)


def relay_target(record_owner: str | None, replica: Replica | None) -> str | None:
    """The replica to relay to: the run's owner when it is another replica (None: act here or nowhere)."""
    if replica is None or not record_owner or record_owner == replica.id:
        return None
    return record_owner

