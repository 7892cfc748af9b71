"""`Cluster`: what several API servers (replicas) on one database share, beyond the knowledge base.

    replicas   each server beats every few seconds; one that stops beating (or whose process on
               this host is gone) is dead, and its RUNNING runs and open jobs are marked failed
    commands   steer, follow up or cancel a run that another replica answers: the replica that got
               the request writes a command, the run's owner takes it, acts, and writes the outcome
    jobs       background jobs as the API shows them, readable through every replica

Only a backend that several processes share implements it (PostgreSQL); `Stores.cluster` is None
on SQLite, where one server owns the file and keeps all of this in memory.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass

ACTIONS = ("steer", "follow_up", "cancel")


@dataclass(frozen=True, slots=True)
class Command:
    """One request to a live run, waiting for the replica that answers it."""

    id: int
    run_id: str
    action: str  # one of ACTIONS
    text: str | None


class Cluster(ABC):
    """Replica liveness, commands to live runs, and shared jobs."""

    # -- replicas ------------------------------------------------------------------------------
    @abstractmethod
    def beat(self, replica: str) -> None:
        """Record that `replica` (a run owner id: host/pid/start) is alive now."""

    @abstractmethod
    def leave(self, replica: str) -> None:
        """`replica` stops cleanly: forget it (its jobs have been finished or failed by then)."""

    @abstractmethod
    def reap(self, stale: float, gone: Callable[[str], bool]) -> dict[str, list[str]]:
        """Replicas silent for more than `stale` seconds, or for which `gone(id)` is true, are dead:
        their RUNNING runs and queued or running jobs are marked failed with the reason, and they are
        forgotten.  Returns {"replicas": [...], "runs": [...], "jobs": [...]} of what was reaped."""

    # -- commands to live runs -------------------------------------------------------------------
    @abstractmethod
    def send(self, run_id: str, owner: str, action: str, text: str | None) -> int | None:
        """Queue a command for the replica `owner` (and wake it); returns the command's id, or None
        when `owner` is not a live replica (a `docqa ask` process, or a replica already reaped)."""

    @abstractmethod
    def pending(self, owner: str) -> list[Command]:
        """Commands for `owner` not answered yet, oldest first."""

    @abstractmethod
    def answer(self, command_id: int, accepted: bool) -> None:
        """The owner acted on the command (accepted) or found the run no longer live (refused)."""

    @abstractmethod
    def outcome(self, command_id: int) -> bool | None:
        """True accepted, False refused, None not answered yet."""

    @abstractmethod
    def wait(self, timeout: float) -> None:
        """Block until a command may have been sent (a notification) or `timeout` seconds pass."""

    # -- jobs -------------------------------------------------------------------------------------
    @abstractmethod
    def save_job(self, job: dict, owner: str) -> None:
        """Insert or update a job (as the API shows it: id, kind, collection, status, ...)."""

    @abstractmethod
    def get_job(self, job_id: str) -> dict | None:
        """A job as last saved by its replica; None when there is none."""

    def close(self) -> None:
        """Release what `wait` holds open."""
