"""A question's life, from the question to its recorded answer (and the follow-ups queued meanwhile).

`Run` is what `KnowledgeBase.start` hands out: one iterator of typed events plus a handle, like
simonw/llm's `Response`, iterated alike by the CLI, the API's workers, MCP and Python callers:

    run = kb.start("How long are backups kept?")
    for event in run:            # metadata → status… → content… → citations → failure? → done
        ...                      # (then the next answer's metadata, when a follow-up was queued)
    run.answer                   # the first answer; run.answers: all of them

Another thread may `steer`, `follow_up` or `cancel` it meanwhile (or any door, by run id, through
`kb.runs`: it is registered there while it is answered).  Cancelling (or closing the iterator early,
or Ctrl-C inside it) stops it before its next model call and records CANCELLED; a cancelled run
sends no `done`.  Its time limit (`timeout`, the one deadline of every door) stops it the same way
but ends it FAILED: recorded so, and sent as `failure {code: timeout}` then `done FAILED`.  The
question is routed once, here: catalog, pipeline or agent.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Generator, Iterator, Sequence
from dataclasses import dataclass

from docqa.agent import AgentLoop
from docqa.answer.library import Library
from docqa.answer.pipeline import Events, Pipeline
from docqa.answer.recall import replay
from docqa.answer.route import is_catalog_question, wants_exploration
from docqa.clock import now
from docqa.errors import DocqaError, InputError
from docqa.llm.base import ChatModel
from docqa.events import Done, Event, Failure, Metadata, SkillMatched, Status
from docqa.flow.context import Cancelled, RunContext
from docqa.run import owner
from docqa.flow.control import Control
from docqa.run.runs import LiveRuns
from docqa.session import given_turns, previous_turn
from docqa.settings import Settings
from docqa.skills import ActiveSkills, SkillSet
from docqa.types import CANCELLED, FAILED, Answer, RunRecord

MODES = ("pipeline", "agent", "auto")


@dataclass(slots=True)
class Setup:
    """What a run needs from the knowledge base (it builds one per run)."""

    settings: Settings
    library: Library  # scoped to the caller and the run's collection
    model: ChatModel | None  # None: extractive answers
    model_note: str | None  # which model answers (or why none) when it was chosen for the user: said in the notes
    save: Callable[[RunRecord], object]  # the run log: save or update a run
    history: Callable[[str], list[RunRecord]]  # a session's runs, oldest first
    skills: SkillSet | None = None  # what the agent may use (None: no skills)
    recall: Callable[[str], tuple[Answer | None, list[dict]]] | None = None  # an earlier verified answer (docqa.answer.recall)
    escalation_model: ChatModel | None = None  # llm.escalation_model (docqa.answer.escalate)
    live: LiveRuns | None = None  # where the run is found by id while it is answered (docqa.run.runs)


def choose_mode(question: str, mode: str, model: ChatModel | None) -> str:
    """pipeline or agent.  auto: the agent when the model calls tools reliably (docqa.llm.capability:
    not a model under 7B parameters, unless llm.tool_calling says so) and the question asks to
    explore (list, compare, summarise across files), else the pipeline."""
    if mode not in MODES:
        raise InputError(f"unknown mode {mode!r}: use pipeline, agent or auto")
    if mode == "auto":
        explore = wants_exploration(question) and not is_catalog_question(question)
        return "agent" if model is not None and model.reliable_tools and explore else "pipeline"
    return mode


def route(question: str, mode: str, model: ChatModel | None) -> str:
    """The one routing rule: how a question is answered — agent (a mode of agent and a model to run
    it), else catalog (a question about the knowledge base itself), else pipeline."""
    if choose_mode(question, mode, model) == "agent" and model is not None:
        return "agent"
    return "catalog" if is_catalog_question(question) else "pipeline"


class Run:
    """One question being answered (then its follow-ups): iterate it for its events; steer, follow
    up or cancel it from any thread; read its answers when it has ended."""

    def __init__(self, question: str, setup: Setup, *, session_id: str | None = None, mode: str | None = None,
                 check: bool | None = None, record: bool = True, control: Control | None = None,
                 timeout: float | None = None, history: Sequence[tuple[str, str]] = (), origin: str | None = None):
        if not question or not question.strip():
            raise InputError("the question is empty: ask something, e.g. docqa ask \"how are backups made?\"")
        s = setup.settings
        self.mode = mode or s.answer.mode
        choose_mode(question, self.mode, setup.model)  # an unknown mode is refused now, not mid-run
        self.setup, self.question, self.session_id = setup, question, session_id
        self.check = s.answer.check if check is None else check
        self.record, self.timeout, self.origin = record, timeout, origin
        self.given = given_turns(history)  # the conversation a client keeps itself, when there is no session
        self.control = control or Control()
        self.answers: list[Answer] = []
        self._events = self._life()

    # -- the handle ------------------------------------------------------------------------------
    def __iter__(self) -> Iterator[Event]:
        return self

    def __next__(self) -> Event:
        return next(self._events)

    def steer(self, text: str) -> None:
        """Tell the agent something; it joins after the current tool round."""
        self.control.steer(text)

    def follow_up(self, text: str) -> bool:
        """Queue a question, answered after the current one in the same session and event stream;
        False when the run has ended."""
        if not text or not text.strip():
            raise InputError("the follow-up question is empty")
        return self.control.follow_up(text.strip())

    def cancel(self) -> None:
        """Stop before the next model call (from any thread); recorded as CANCELLED."""
        self.control.cancel()

    def close(self) -> None:
        """Stop iterating (from the thread that iterates; `cancel` from any other): a run not
        finished yet is recorded as CANCELLED."""
        self.control.cancel()
        self._events.close()

    @property
    def live(self) -> bool:
        return self.control.live

    @property
    def answer(self) -> Answer | None:
        """The answer to the question asked (None until it has one)."""
        return self.answers[0] if self.answers else None

    def wait(self) -> Answer:
        """Iterate to the end; the first answer."""
        for _ in self:
            pass
        if self.answer is None:  # closed before it began: nothing was asked or recorded
            self.answers.append(_cancelled(self.question))
        return self.answers[0]

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    # -- the life ----------------------------------------------------------------------------------
    def _life(self) -> Generator[Event, None, None]:
        question, session_id = self.question, self.session_id
        try:
            while question is not None:
                answer = yield from self._one(question, session_id)
                session_id = answer.session_id
                question = None if answer.status == CANCELLED else self.control.next_follow_up()
        finally:
            self.control.close()
            if self.setup.live is not None:
                self.setup.live.close(self)

    def _one(self, question: str, session_id: str | None) -> Events:
        """One question: recorded RUNNING at once, answered, recorded finished."""
        s = self.setup.settings
        history = self.setup.history(session_id) if session_id else self.given  # the conversation so far
        run = RunRecord(id=_new_id(), session_id=session_id or _new_id(), question=question.strip(),
                        collection=self.setup.library.collection, created_at=now(), owner=owner.current(),
                        origin=self.origin)
        ctx = RunContext(self.control, s.llm.prompt_price, s.llm.completion_price, self.timeout)
        if self.record:
            self.setup.save(run)
            if self.setup.live is not None:
                self.setup.live.register(run.id, self)
        try:
            yield Metadata(session_id=run.session_id, run_id=run.id)
            previous = previous_turn(history, s.answer.history_chars) if history else None
            answer = yield from self._answer(run, ctx, previous)
        except BaseException:  # closed early, or Ctrl-C: recorded CANCELLED, nothing more is sent
            self._finish(run, _cancelled(run.question), ctx)
            raise
        self._finish(run, answer, ctx)
        if answer.status != CANCELLED:
            if answer.status == FAILED:
                yield Failure(code="timeout" if ctx.timed_out else "failed", message=answer.error)
            yield Done(status=answer.status, run_id=run.id)
        return answer

    def _answer(self, run: RunRecord, ctx: RunContext, previous: dict | None) -> Events:
        try:
            answer = yield from self._route(run.question, ctx, previous)
            answer.timings.update(ctx.timings)
            return answer
        except Cancelled:
            return _timed_out(run.question, ctx.timeout) if ctx.timed_out else _cancelled(run.question)
        except DocqaError as exc:
            ctx.trace.append({"stage": "failed", "error": str(exc)})
            return Answer(run.question, answer="", answerable=False, mode="pipeline", status=FAILED, error=str(exc))
        except Exception as exc:  # never a stack trace to the user; the trace keeps the detail
            ctx.trace.append({"stage": "failed", "error": repr(exc)})
            return Answer(run.question, answer="", answerable=False, mode="pipeline", status=FAILED,
                          error=f"internal error ({type(exc).__name__}): {exc}. The run's trace is kept; see 'docqa log --run {run.id}'")

    def _route(self, question: str, ctx: RunContext, previous: dict | None) -> Events:
        """Route once (catalog, pipeline or agent) and answer that way."""
        setup = self.setup
        with ctx.stage("routing") as entry:
            yield Status(phase="routing")
            mode = choose_mode(question, self.mode, setup.model)
            way = route(question, self.mode, setup.model)
            entry["route"] = "retrieval" if way == "pipeline" else way
        if way == "pipeline" and previous is None and setup.recall is not None:
            recalled = yield from replay(question, ctx, setup.recall)
            if recalled is not None:
                return recalled
        skills = (yield from self._skills(question, ctx)) if way == "agent" else None
        # a task a skill fits is not held to one evidence sentence (answer.accept.gated), and with a procedure
        # loaded, a report before reading anything is not the answer
        used = None if skills is None else (lambda: bool(skills.used))
        pipeline = Pipeline(setup.library, setup.settings, setup.model, model_note=setup.model_note,
                            escalation_model=setup.escalation_model, task=used)
        if way == "agent":
            loop = AgentLoop(setup.library, setup.settings, setup.model, pipeline, tools=skills.tools() if skills else None,
                             guidance=skills.guidance() if skills else "", procedure=used)
            answer = yield from loop.run(question, ctx, previous)
            if skills is not None:
                answer.retrieval.skills = skills.used
            return answer
        answer = yield from (pipeline.catalog(question, ctx) if way == "catalog" else
                             pipeline.run(question, ctx, previous=previous, check=self.check))
        if mode == "agent":
            answer.notes.append("agent mode needs a chat model; the question was answered without one")
        return answer

    def _skills(self, question: str, ctx: RunContext) -> Generator[Event, None, ActiveSkills | None]:
        """The agent's skills for this question, those it matches loaded now (each recorded with why)."""
        if not self.setup.skills:
            return None
        active, s = ActiveSkills(self.setup.skills, ctx.trace), self.setup.settings.skills
        if s.auto and s.max_active:
            try:
                found = active.match(question, self.setup.library.embed, s.similarity, s.max_active)
            except DocqaError as exc:  # no embedder at hand: the triggers still match
                ctx.trace.append({"stage": "skill_matching", "error": str(exc)})
                found = active.match(question, None, s.similarity, s.max_active)
            for m in found:
                yield SkillMatched(name=m.skill.name, reason=m.reason, origin=m.skill.origin)
        return active

    def _finish(self, run: RunRecord, answer: Answer, ctx: RunContext) -> None:
        answer.run_id, answer.session_id = run.id, run.session_id
        answer.timings["total"] = time.perf_counter() - ctx.started
        answer.usage = ctx.usage_dict()
        self.answers.append(answer)
        if not self.record:
            return
        run.standalone = answer.retrieval.query
        run.mode, run.status, run.answerable = answer.mode, answer.status, answer.answerable
        run.confidence, run.answer, run.model, run.error = answer.confidence, answer.answer, answer.model, answer.error
        run.result = answer.to_dict()
        run.trace, run.timings, run.usage = ctx.trace, answer.timings, answer.usage
        run.finished_at = now()
        self.setup.save(run)


def _cancelled(question: str) -> Answer:
    return Answer(question, answer="", answerable=False, mode="pipeline", status=CANCELLED, error="cancelled")


def _timed_out(question: str, limit: float | None) -> Answer:
    return Answer(question, answer="", answerable=False, mode="pipeline", status=FAILED,
                  error=f"the answer took longer than its time limit ({limit or 0:g} s) and was stopped: ask again, "
                        "or a narrower question")


def _new_id() -> str:
    return uuid.uuid4().hex[:16]

