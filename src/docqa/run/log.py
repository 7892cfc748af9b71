"""Log: the recorded runs, conversations, ratings and corrections, for one caller (`kb.log`).

Who may see a run is the rule of docqa.access (the collection it asked over); the question-and-answer
log and its exports are for those with the log permission.
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime
from typing import IO, TYPE_CHECKING

from docqa.access import LOCAL, Principal, require, visible_collection, visible_run, visible_runs, visible_sessions
from docqa.clock import now
from docqa.errors import InputError, NotFoundError
from docqa.settings import Settings
from docqa.types import RATINGS, DocumentRecord, FeedbackRecord, RunRecord, SessionRecord, SessionSummary

if TYPE_CHECKING:
    from docqa.ingest.service import Documents
    from docqa.store import Stores


class Log:
    """The run log of one knowledge base, as a principal may read and rate it."""

    def __init__(self, store: Stores, settings: Settings, documents: Documents):
        self.store, self.settings, self.documents = store, settings, documents

    # -- conversations -------------------------------------------------------------------------
    def session(self, session_id: str, *, principal: Principal = LOCAL) -> SessionRecord:
        """A conversation by id (NotFoundError when the principal may not see every run of it)."""
        record = self.store.runlog.get_session(session_id)
        self.session_runs(session_id, principal=principal)
        return record

    def sessions(self, limit: int | None = None, *, principal: Principal = LOCAL) -> list[SessionSummary]:
        """The conversations the principal may open and continue, most recently active first."""
        require(principal, "read")
        found = self.store.runlog.list_sessions(None if principal.collections else limit)
        return visible_sessions(principal, found)[:limit]

    def session_runs(self, session_id: str, *, principal: Principal = LOCAL) -> list[RunRecord]:
        """A conversation's runs, oldest first.  The one rule for continuing a conversation: a scoped
        principal continues only one whose every run it may see (else NotFoundError, as for none)."""
        require(principal, "read")
        return visible_runs(principal, session_id, self.store.runlog.session_runs(session_id))

    # -- runs ------------------------------------------------------------------------------------
    def run(self, run_id: str, *, principal: Principal = LOCAL) -> RunRecord:
        """One run's audit record: question, trace, published result, timings, feedback."""
        require(principal, "read")
        try:
            record = self.store.runlog.get_run(run_id)
        except NotFoundError:
            raise NotFoundError(f"no run {run_id!r}: 'docqa log' lists the runs with their ids") from None
        return visible_run(principal, record)

    def runs(self, since: str | None = None, until: str | None = None, statuses: list[str] | None = None,
             limit: int | None = None, *, principal: Principal = LOCAL, stale: bool | None = None) -> list[RunRecord]:
        """Runs newest first; `since` (inclusive) and `until` (exclusive) are dates or ISO times;
        `stale` True: only the answers a cited document changed under (False: only the others).
        Only the runs asked over collections the principal sees (a limit counts those)."""
        require(principal, "read")
        runs = self.store.runlog.list_runs(since=_utc_bound(since, "since"), until=_utc_bound(until, "until"),
                                           statuses=statuses, limit=None if principal.collections else limit, stale=stale)
        return [r for r in runs if principal.can_see(r.collection)][:limit]

    def feedback(self, run_id: str, rating: str, comment: str | None = None, *,
                 principal: Principal = LOCAL) -> FeedbackRecord:
        """Rate a run 'up' or 'down', with an optional comment.  Rating down an answer repeated from an
        earlier one (answer.recall) rates that one down too: it is retired and shows in the attention list."""
        run = self.run(run_id, principal=principal)
        rating = rating.strip().lower()
        if rating not in RATINGS:
            raise InputError(f"a rating is 'up' or 'down', not {rating!r}")
        earlier = ((run.result or {}).get("retrieval") or {}).get("recalled_from")
        if rating == "down" and earlier:
            note = f"(rated down on run {run_id}, which repeated this answer) {(comment or '').strip()}".strip()
            self.store.runlog.add_feedback(earlier, "down", note)
        return self.store.runlog.add_feedback(run_id, rating, (comment or "").strip() or None)

    def correct(self, run_id: str, text: str, *, principal: Principal = LOCAL) -> DocumentRecord:
        """A maintainer's correction to a logged run: the right answer or a missing fact, saved as a
        Markdown note (who, when, which run) and indexed at once into the run's collection, so later
        answers there find and cite it as a correction of that collection, seen by exactly those who
        see the collection (a run over every collection: the `corrections` collection).  Editors
        (access.py: correct) of the run's collection."""
        from docqa.ingest.service import corrections_folder
        from docqa.session import correction

        run = self.run(run_id, principal=principal)
        require(principal, "correct", run.collection)
        author = f"API key {principal.key_id}" if principal.key_id else "the local owner"
        path = correction.write(corrections_folder(self.settings), run, correction.note(run, text, author, now()))
        home = correction.home(run)
        self.documents.add([path], collection=home)  # the core files its own note (not a path the caller named)
        return self.documents.get(path, home)

    # -- the question-and-answer log -------------------------------------------------------------
    def qa_log(self, since: str | None = None, attention: bool = False, *, principal: Principal = LOCAL,
               until: str | None = None, collection: str | None = None, statuses: list[str] | None = None,
               text: str | None = None, kinds: list[str] | None = None, stale: bool | None = None) -> list[dict]:
        """The question-and-answer log, newest first; `attention`: only the runs that need a
        maintainer's look (not answered, failed, low confidence, rated down), each with its reason,
        `kinds` narrowing it to some of those (docqa.session.ATTENTION).  Filters: runs since/until
        (dates or ISO times), of one `collection`, with one of `statuses`, mentioning `text`, `stale`
        (True: only the answers whose cited source changed since; False: only the others).
        Only the runs asked over collections the principal sees."""
        require(principal, "log")
        from docqa.ingest.service import corrections_folder
        from docqa.session import ATTENTION, matches, needs_attention, qa_log
        from docqa.session.correction import corrected_runs

        unknown = sorted(set(kinds or ()) - set(ATTENTION))
        if unknown:
            raise InputError(f"unknown attention kind {unknown[0]!r}: use {', '.join(ATTENTION)}")
        if collection is not None:
            visible_collection(principal, collection, f"no collection {collection!r}")
        runs = [r for r in self.runs(since=since, until=until, statuses=statuses, principal=principal, stale=stale)
                if collection is None or r.collection == collection]
        rows = needs_attention(runs, kinds) if attention or kinds else qa_log(runs)
        notes = self.store.documents.list_documents(None, path_prefix=str(corrections_folder(self.settings)) + os.sep)
        corrected = corrected_runs([r.path for r in notes])
        for row in rows:
            row["corrected"] = row["run_id"] in corrected
        return [row for row in rows if matches(row, text)] if text else rows

    def export(self, fp: IO[str], fmt: str = "jsonl", since: str | None = None, attention: bool = False,
               limit: int | None = None, *, principal: Principal = LOCAL, **filters) -> int:
        """Write the Q&A log to `fp` as jsonl, csv or md (Markdown); returns how many questions.
        `filters`: those of `qa_log` (until, collection, statuses, text, kinds)."""
        from docqa.session import EXPORT_FORMATS, export

        if fmt not in EXPORT_FORMATS:
            raise InputError(f"unknown log format {fmt!r}: use one of {', '.join(EXPORT_FORMATS)}")
        rows = self.qa_log(since, attention, principal=principal, **filters)[:limit]
        export(rows, fmt, fp, "Questions that need attention" if attention or filters.get("kinds") else "Questions and answers")
        return len(rows)


def _utc_bound(value: str | None, name: str) -> str | None:
    """A date or ISO time as the stored times compare (UTC text); a date stays a date."""
    if not value:
        return None
    try:
        return date.fromisoformat(value).isoformat()
    except ValueError:
        pass
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise InputError(f"{name} must be a date like 2026-01-31 or an ISO time, not {value!r}") from None
    moment = moment.replace(tzinfo=moment.tzinfo or UTC)  # a time without a zone is UTC
    return moment.astimezone(UTC).isoformat(timespec="milliseconds")
