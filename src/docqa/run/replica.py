"""This process among several servers on one PostgreSQL database: the replica relay of live runs.

A run is answered by the replica whose worker iterates it; a request to steer, follow up or cancel
it may reach any replica (the proxy picks), or a `docqa` command on the same database.  `kb.runs`
finds the run's owner in the run log and, when that is another process, relays: it writes a command
row and NOTIFYs; the owner's `Replica` thread (LISTENing) takes the row, acts on its live run, and
writes the outcome, which the sender reads back (accepted, or refused when the run had ended).

Why a table woken by NOTIFY rather than NOTIFY alone: a notification is lost when the listener is
not connected at that moment (a reconnect), carries no reply, and is not kept; the row is all three,
and NOTIFY only makes the owner look at once instead of at its next poll (`_POLL`).

The same thread beats every `heartbeat` seconds and reaps: a replica silent for five beats (or
whose process on this host is gone) is dead, so its RUNNING runs and open jobs are marked failed —
never left running.  On SQLite there is one server per file and none of this runs.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable

from docqa.errors import StoreError
from docqa.run import owner
from docqa.store.cluster import Cluster

log = logging.getLogger("docqa.run")
_POLL = 1.0  # seconds between looks for commands when no notification came
_SILENT_BEATS = 5  # a replica silent this many heartbeats is dead
_OUTCOME_POLL = 0.05  # seconds between looks for a relayed command's outcome


class Replica:
    """This process's replica thread: heartbeat, commands for its live runs, the reaper.  `cluster`
    is its own (its connection LISTENs); `act(run_id, action, text)` acts on a live run of this
    process (`LiveRuns.act`); `kb.runs.replica(heartbeat)` makes one."""

    def __init__(self, cluster: Cluster, act: Callable[[str, str, str | None], bool | None], heartbeat: float):
        self.cluster, self.act, self.heartbeat = cluster, act, heartbeat
        self.id = owner.current()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._loop, name="docqa-replica", daemon=True)
        self._next_beat = 0.0
        self.connected = False

    def start(self) -> Replica:
        self.cluster.beat(self.id)  # listed before its first run or job is
        self.connected = True
        self._thread.start()
        return self

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
            accepted = self.act(command.run_id, command.action, command.text)
            self.cluster.answer(command.id, bool(accepted))

    def _reap(self) -> None:
        reaped = self.cluster.reap(self.heartbeat * _SILENT_BEATS,
                                   lambda rid: rid != self.id and owner.alive(rid) is False)
        if any(reaped.values()):
            log.warning("replicas gone: %s; their runs %s and jobs %s are marked failed",
                        reaped["replicas"], reaped["runs"], reaped["jobs"])


def relay(cluster: Cluster, run_id: str, to: str, action: str, text: str | None, timeout: float = 5.0) -> bool | None:
    """Ask the replica `to` to act on its live run: its answer; False when `to` is no listed replica
    (a `docqa ask` process, or one already reaped), None when it did not answer in time."""
    command = cluster.send(run_id, to, action, text)
    if command is None:
        return False
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        outcome = cluster.outcome(command)
        if outcome is not None:
            return outcome
        time.sleep(_OUTCOME_POLL)
    return None
