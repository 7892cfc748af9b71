"""Runs: the live runs of a knowledge base and what a caller may do to them (`kb.runs`).

A run registers itself here while it is answered (a question and its follow-ups share one handle),
so every door — the CLI, the API, MCP, Python — steers, follows up and cancels it the same way:

    kb.runs.steer(run_id, "only the 2024 policy", principal=who)
    kb.runs.follow_up(run_id, "and how long are they kept?", principal=who)
    kb.runs.cancel(run_id, principal=who)

The caller must see the run (the rule of `kb.log.run`: a run over a collection it cannot see is
NotFoundError, as for none).  A run answered by another server on the same PostgreSQL database is
reached through the store's cluster (run/replica.py); one that has ended is RunStateError.
"""

from __future__ import annotations

import threading
import weakref
from typing import TYPE_CHECKING

from docqa.access import LOCAL, Principal
from docqa.errors import InputError, RunStateError, RunUnreachableError
from docqa.names import check_nul
from docqa.run import owner
from docqa.types import RUNNING

if TYPE_CHECKING:
    from docqa.run.life import Run
    from docqa.run.log import Log
    from docqa.run.replica import Replica
    from docqa.store.cluster import Cluster

ACTIONS = ("steer", "follow_up", "cancel")


class LiveRuns:
    """Run id → the live run's handle, in this process.  A run adds each of its ids when it records it
    RUNNING, and drops them when it has ended (a follow-up it accepted is still answered).  Held weakly:
    a run its caller dropped unfinished is still collected, and so recorded CANCELLED (docqa.run.life)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._runs: weakref.WeakValueDictionary[str, Run] = weakref.WeakValueDictionary()

    def register(self, run_id: str, run: Run) -> None:
        with self._lock:
            self._runs[run_id] = run

    def get(self, run_id: str) -> Run | None:
        with self._lock:
            return self._runs.get(run_id)

    def act(self, run_id: str, action: str, text: str | None = None) -> bool | None:
        """Steer, follow up or cancel the run here: True done, False it is no longer live (or takes no
        more follow-ups), None it is not answered in this process."""
        run = self.get(run_id)
        if run is None:
            return None
        if not run.live:
            return False
        if action == "steer":
            run.steer(text or "")
        elif action == "follow_up":
            return run.follow_up(text or "")
        elif action == "cancel":
            run.cancel()
        else:
            raise ValueError(f"unknown action on a live run: {action!r}")
        return True

    def close(self, run: Run) -> None:
        """The run has ended: its ids can no longer be steered, followed up or cancelled."""
        with self._lock:
            for run_id in [r for r, one in list(self._runs.items()) if one is run]:
                self._runs.pop(run_id, None)

    def __len__(self) -> int:
        return len(self._runs)

    def cancel_all(self) -> None:
        """Cancel every live run (a server stopping)."""
        with self._lock:
            runs = list(self._runs.values())
        for run in runs:
            run.cancel()


_LIVE: weakref.WeakValueDictionary[str, LiveRuns] = weakref.WeakValueDictionary()
_LIVE_LOCK = threading.Lock()


def live_runs(location: str) -> LiveRuns:
    """The live runs of the knowledge base at `location` in this process, shared by every KnowledgeBase
    opened on it (a server opens one per thread: a run one thread answers is steered from another)."""
    with _LIVE_LOCK:
        found = _LIVE.get(location)
        if found is None:
            found = _LIVE[location] = LiveRuns()
        return found


class Runs:
    """Steering, following up and cancelling live runs, as a principal may."""

    def __init__(self, log: Log, live: LiveRuns, cluster: Cluster | None, relay_timeout: float = 5.0):
        self.log, self.live, self.cluster, self.relay_timeout = log, live, cluster, relay_timeout

    def steer(self, run_id: str, text: str, *, principal: Principal = LOCAL) -> None:
        """Tell a live agent run something; it joins after its current tool round."""
        self._act(run_id, "steer", _text(text, "steering message"), principal)

    def follow_up(self, run_id: str, question: str, *, principal: Principal = LOCAL) -> None:
        """Queue a question to answer after a live run, in its session and its event stream."""
        self._act(run_id, "follow_up", _text(question, "follow-up question"), principal)

    def cancel(self, run_id: str, *, principal: Principal = LOCAL) -> None:
        """Stop a live run before its next model call; recorded CANCELLED."""
        self._act(run_id, "cancel", None, principal)

    def replica(self, heartbeat: float) -> Replica | None:
        """Join the servers on this knowledge base's database (PostgreSQL; None on SQLite): a started
        `Replica` that takes the commands relayed to this process's live runs, beats every `heartbeat`
        seconds and reaps dead replicas.  It uses this knowledge base's cluster connection (LISTEN):
        open a knowledge base for it alone, and stop the replica before closing that."""
        if self.cluster is None:
            return None
        from docqa.run.replica import Replica

        return Replica(self.cluster, self.live.act, heartbeat).start()

    def _act(self, run_id: str, action: str, text: str | None, principal: Principal) -> None:
        record = self.log.run(run_id, principal=principal)  # NotFoundError unless the principal sees it
        done = self.live.act(run_id, action, text)
        if done is None and record.status == RUNNING and self._elsewhere(record.owner):
            done = self._relay(run_id, record.owner or "", action, text)
        if not done:
            record = self.log.run(run_id, principal=principal)
            if record.status == RUNNING and record.owner and record.owner != owner.current():
                pid = record.owner.split("/")[1] if record.owner.count("/") else record.owner
                raise RunStateError(f"run {run_id} is answered by another process (pid {pid}) that this one cannot "
                                    "reach: steer, follow up or cancel it where it was asked (Ctrl-C stops a 'docqa ask')")
            raise RunStateError(f"run {run_id} is not running (status {record.status}): only a live run can be "
                                "steered, followed up or cancelled")

    def _elsewhere(self, record_owner: str | None) -> bool:
        """The run is answered by another process that the cluster reaches."""
        return self.cluster is not None and bool(record_owner) and record_owner != owner.current()

    def _relay(self, run_id: str, to: str, action: str, text: str | None) -> bool:
        from docqa.run.replica import relay

        assert self.cluster is not None
        done = relay(self.cluster, run_id, to, action, text, self.relay_timeout)
        if done is None:
            raise RunUnreachableError(f"the server answering run {run_id} did not take the {action.replace('_', '-')} "
                                      "in time: retry in a moment")
        return done


def _text(text: str, what: str) -> str:
    check_nul(text, what)
    if not text or not text.strip():
        raise InputError(f"the {what} is empty")
    return text.strip()
