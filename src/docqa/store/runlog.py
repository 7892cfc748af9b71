"""`RunLog`: the conversations asked of a knowledge base — sessions, their runs, the users' feedback.

A run is one question answered, with its full trace, kept for audit and replay.  The log lives
in the knowledge base beside the documents, with what each published answer rested on (its
sources: docqa.store.sources), which the document store marks changed when a cited document
changes or goes, in the document's own transaction (a backend implements it over the same connection,
so inside an ingest batch a run joins the open transaction); `docqa.store.open_store` hands it
out as `stores.runlog`.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable

from docqa.types import FeedbackRecord, RunRecord, SessionRecord, SessionSummary


class RunLog(ABC):
    """Sessions, runs and feedback."""

    @abstractmethod
    def save_session(self, session: SessionRecord) -> SessionRecord:
        """Insert or update a session (its created_at is kept, updated_at set to now); returns it as stored."""

    @abstractmethod
    def get_session(self, session_id: str) -> SessionRecord:
        """A session by id; NotFoundError when there is none."""

    @abstractmethod
    def delete_session(self, session_id: str) -> bool:
        """Delete a session with its runs and their feedback; False when it did not exist."""

    @abstractmethod
    def save_run(self, run: RunRecord) -> RunRecord:
        """Insert or update a run in one transaction, creating its session when missing (titled with
        the question) and bumping the session's updated_at.  A missing created_at is set to now,
        and an update keeps the stored one.  Feedback is not written; the sources its published
        citations rest on are (docqa.store.sources).  ValueError for an unknown
        status or a run without question or session id."""

    @abstractmethod
    def get_run(self, run_id: str) -> RunRecord:
        """A run with its feedback (oldest first), its sources, staleness and latest recheck;
        NotFoundError when there is none."""

    @abstractmethod
    def list_runs(self, *, since: str | None = None, until: str | None = None, statuses: Iterable[str] | None = None,
                  session_id: str | None = None, limit: int | None = None, stale: bool | None = None) -> list[RunRecord]:
        """Runs with their feedback and sources, newest first.

        `since` (inclusive) and `until` (exclusive) compare with created_at as ISO 8601 text, so a
        day `2026-01-31` or a full timestamp both work.  `statuses` keeps only runs in those;
        `stale` True only the runs a cited document changed under, False only the others.
        """

    @abstractmethod
    def save_recheck(self, run_id: str, recheck: dict) -> None:
        """Record a run's latest recheck against the new text (docqa.answer.recheck); NotFoundError
        when there is no such run."""

    @abstractmethod
    def add_feedback(self, run_id: str, rating: str, comment: str | None = None) -> FeedbackRecord:
        """Record a rating ('up' or 'down', else ValueError) of a run; NotFoundError when the run does not exist."""

    def session_runs(self, session_id: str, limit: int | None = None) -> list[RunRecord]:
        """A session's runs oldest first: all of them, or the last `limit`."""
        return self.list_runs(session_id=session_id, limit=limit)[::-1]

    def list_sessions(self, limit: int | None = None) -> list[SessionSummary]:
        """Sessions that have runs, most recently active first: all of them, or the first `limit`.
        A backend may answer this in one query; this one reads every run."""
        grouped: dict[str, list[RunRecord]] = {}
        for run in self.list_runs()[::-1]:  # oldest first
            grouped.setdefault(run.session_id, []).append(run)
        out = [_summary(self.get_session(sid), runs) for sid, runs in grouped.items()]
        out.sort(key=lambda s: s.last_activity, reverse=True)
        return out[:limit]


def _summary(session: SessionRecord, runs: list[RunRecord]) -> SessionSummary:
    """A session's summary from its runs, oldest first."""
    last = max(r.finished_at or r.created_at for r in runs)
    return SessionSummary(session.id, session.title, runs[0].question, len(runs), session.created_at, last,
                          runs[-1].collection, list(dict.fromkeys(r.collection for r in runs)), runs[0].origin)
