"""Answers: questions answered for one caller (`kb.answers`) — a `Run` per question, with the
caller's checks made before it starts, the library it reads scoped to the caller, the skills the
agent may use and the recall of earlier verified answers."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from functools import partial
from typing import TYPE_CHECKING

from docqa.access import LOCAL, Principal, require, scope
from docqa.names import check_nul
from docqa.flow.control import Control
from docqa.settings import Settings
from docqa.events import Event
from docqa.types import Answer

if TYPE_CHECKING:
    from docqa.answer.factcheck import FactCheck
    from docqa.answer.recall import Recall
    from docqa.browse.service import Browse
    from docqa.ingest.service import Documents
    from docqa.llm import ChatModel
    from docqa.models import Models
    from docqa.retrieve.service import Search
    from docqa.run.library import ScopedLibrary
    from docqa.run.life import Run
    from docqa.run.log import Log
    from docqa.run.runs import LiveRuns
    from docqa.skills import Skill, SkillSet
    from docqa.store import Stores
    from docqa.view.service import Viewer


class Answers:
    """Answering over one knowledge base, as a principal may ask."""

    def __init__(self, store: Stores, settings: Settings, models: Models, *, search: Search, documents: Documents,
                 browse: Browse, viewer: Viewer, log: Log, live: LiveRuns | None = None):
        self.store, self.settings, self.models, self.live = store, settings, models, live
        self.search, self.documents, self.browse, self.viewer, self.log = search, documents, browse, viewer, log
        self._recall: Recall | None = None

    def start(self, question: str, *, principal: Principal = LOCAL, session_id: str | None = None,
              collection: str | None = None, check: bool | None = None, mode: str | None = None, record: bool = True,
              control: Control | None = None, timeout: float | None = None, fresh: bool = False,
              history: Sequence[tuple[str, str]] = (), origin: str | None = None) -> Run:
        """Start answering a question: a `Run`, an iterator of its events (metadata, status, content,
        citations, failure, done) and a handle to steer, follow up or cancel it (docqa.run.life).

        Nothing happens until it is iterated.  A follow-up in the same `session_id` is understood
        from the previous turn.  `record=False` keeps it out of the run log (evaluations).  `mode`:
        pipeline, agent (the model explores with tools) or auto (answer.mode; see `choose_mode`).
        `control`: a Control made before the run (to cancel it from a thread that does not hold it).
        `timeout`: seconds from its start after which it stops before its next model call or streamed
        token: it ends FAILED, recorded with the time limit as its error and sent as `failure {code: timeout}`.
        `fresh`: answer anew even when an earlier verified answer to the same question holds (answer.recall).
        `history`: the conversation so far as (question, answer) pairs, oldest first, when the caller keeps
        it rather than a session (an OpenAI-compatible client): the question is a follow-up to its last turn.
        `origin`: where it is asked (cli, mcp, api), recorded so a list of conversations can group them.
        """
        check_nul(question, "question")  # no database stores a NUL
        collection = self.check_start(principal=principal, session_id=session_id, collection=collection)
        from docqa.run.life import Run, Setup

        recall = None if fresh or session_id or history or not record or not self.settings.answer.recall else (
            partial(self.recall.lookup, collection=collection))
        chat = self.models.chat
        setup = Setup(self.settings, self.library(principal, collection), chat.model, chat.note,
                      self.store.runlog.save_run, partial(self.log.session_runs, principal=principal),
                      self.skills(principal=principal), recall, self.models.escalation, self.live)
        return Run(question, setup, session_id=session_id, mode=mode, check=check, record=record, control=control,
                   timeout=timeout, history=history, origin=origin)

    def check_start(self, *, principal: Principal = LOCAL, session_id: str | None = None,
                    collection: str | None = None) -> str | None:
        """Validate a `start` without starting (a server checks before it queues the run): the collection
        the run would be limited to, or the error `start` would raise — a session the principal may not
        continue is refused now (NotFoundError), not mid-run."""
        require(principal, "read")
        check_nul(session_id, "session id")
        collection = scope(principal, collection)
        if session_id:
            self.log.session_runs(session_id, principal=principal)
        return collection

    def ask(self, question: str, *, on_event: Callable[[Event], None] | None = None, **options) -> Answer:
        """Answer a question from the documents, with citations, checked; recorded as a run.
        `start(...).wait()`, its events handed to `on_event` as they happen (options: see `start`)."""
        run = self.start(question, **options)
        for event in run:
            if on_event is not None:
                on_event(event)
        return run.wait()

    def verify(self, text: str, *, question: str | None = None, collection: str | None = None, llm: bool | None = None,
               principal: Principal = LOCAL) -> FactCheck:
        """Fact-check any text against the documents the principal may see (docqa.answer.factcheck): each
        claim supported (with its span), contradicted (with the span that says otherwise) or not found.

        `llm`: None follows the pipeline's rule (the chat model's verdict too when answer.llm_check is on and
        the model is not a small one), True asks the configured chat model whatever its size, False never."""
        require(principal, "read")
        check_nul(text, "text")
        check_nul(question, "question")
        collection = scope(principal, collection)
        from docqa.answer.factcheck import fact_check

        model, notes = self._checking_model(llm)
        result = fact_check(text, self.library(principal, collection), self.settings.answer, question=question,
                            model=model)
        result.notes[:0] = notes
        return result

    def _checking_model(self, llm: bool | None) -> tuple[ChatModel | None, list[str]]:
        """The model whose verdict the fact-check asks for (see `verify`), and what to tell the caller."""
        if llm is False or (llm is None and not self.settings.answer.llm_check):
            return None, []
        chat = self.models.chat
        if chat.model is None:
            return None, [f"no chat model ({chat.reason}): only the deterministic checks ran"] if llm else []
        if llm is None and chat.model.small:  # as the pipeline: a small model's verdict costs a call and adds little
            return None, []
        return chat.model, []

    def skills(self, *, principal: Principal = LOCAL) -> SkillSet:
        """The skills the agent may use: built in, from skills.paths and from the 'skills' folder beside
        the knowledge base file (read afresh each time; `problems` lists the SKILL.md files left out)."""
        require(principal, "read")
        from docqa.skills import load_skills, skill_roots

        return load_skills(skill_roots(self.settings))

    def skill(self, name: str, *, principal: Principal = LOCAL) -> Skill:
        """One skill by name (NotFoundError naming the skills there are)."""
        return self.skills(principal=principal).get(name)

    def library(self, principal: Principal = LOCAL, collection: str | None = None) -> ScopedLibrary:
        """What answering needs from this knowledge base: the principal's collections only (the run's
        collection when one was named)."""
        from docqa.run.library import ScopedLibrary

        return ScopedLibrary(principal, collection, search=self.search, documents=self.documents, browse=self.browse,
                             viewer=self.viewer, fulltext=self.store.fulltext, embedder=self.models.embedder)

    def recheck(self, run_id: str, *, principal: Principal = LOCAL, reanswer: bool = False) -> dict:
        """Re-verify a run's claims against the current text of what they cited (docqa.answer.recheck),
        recorded with the run; `reanswer`: also ask its question again (afresh, same collection) and
        give the new answer beside the old.  Whoever may see the run may recheck it."""
        from docqa.answer.recheck import lookup, recheck
        from docqa.clock import now

        run = self.log.run(run_id, principal=principal)
        checked = {"run_id": run.id, "stale": run.stale, "stale_at": run.stale_at,
                   **recheck(run, lookup(self.store.documents), now())}
        if reanswer:
            answer = self.ask(run.question, principal=principal, collection=run.collection, fresh=True)
            checked["reanswer"] = {"run_id": answer.run_id, "answer": answer.answer, "old_answer": run.answer,
                                   "confidence": answer.confidence}
        self.store.runlog.save_recheck(run.id, checked)
        return checked

    def recheck_stale(self, *, principal: Principal = LOCAL, reanswer: bool = False,
                      limit: int | None = None) -> list[dict]:
        """`recheck` every stale run the principal may see, newest first (at most `limit`)."""
        require(principal, "read")
        runs = [r for r in self.store.runlog.list_runs(stale=True) if principal.can_see(r.collection)][:limit]
        return [self.recheck(r.id, principal=principal, reanswer=reanswer) for r in runs]

    @property
    def recall(self) -> Recall:
        """The lookups of earlier verified answers (docqa.answer.recall), kept for this knowledge base's life."""
        if self._recall is None:
            from docqa.answer.recall import Recall

            self._recall = Recall(self.store, self.settings.answer, self.models.embedder)
        return self._recall
