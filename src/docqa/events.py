"""The typed events of a run's stream, one frozen dataclass per kind, and their one wire shape.

A run (docqa.run) yields them in this order, and every front end renders the same stream::

    Metadata → Status… / DraftDelta… / DraftRejected… / Content… → Citations → Failure? → Done

`Status` says what the run is doing (`phase`); the phases that carry more than their name are its
subclasses (`Generating`, `Thinking`, `ToolCalled`, `Accepting`, ...), so `isinstance(e, Status)`
and `e.phase` hold for all of them.  What the model writes is a `DraftDelta` until checked; only the
published answer is `Content`.

On the wire (SSE, JSON) an event is its `type` (snake_case) and its `payload()`: the fields in
declaration order, an optional field left out while it holds its default.  Front ends read
attributes; only the transports call `payload()` / `to_dict()`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, ClassVar

from docqa.types import Acceptance, Citation

OPTIONAL = {"optional": True}  # a field left off the wire while it holds its default


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """One event of a run's stream: `type` names its kind on the wire."""

    type: ClassVar[str]

    def payload(self) -> dict[str, Any]:
        """The event's data as the wire carries it (its type aside)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if not (f.metadata.get("optional") and value == f.default):
                out[f.name] = list(value) if isinstance(value, tuple) else value
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": self.type, **self.payload()}


@dataclass(frozen=True, slots=True, kw_only=True)
class Metadata(Event):
    """The first event of each answer: the session and the run it is recorded as."""

    type: ClassVar[str] = "metadata"
    session_id: str
    run_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Status(Event):
    """What the run is doing now: routing, retrieving, condensing, citing, checking, recalling, ..."""

    type: ClassVar[str] = "status"
    phase: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Generating(Status):
    """The model writes a draft; `retry` says why it writes another (a rejected or wrong-language one)."""

    phase: str = field(default="generating", init=False)
    retry: str | None = field(default=None, metadata=OPTIONAL)


@dataclass(frozen=True, slots=True, kw_only=True)
class Thinking(Status):
    """The agent's next step (a model call choosing tools)."""

    phase: str = field(default="thinking", init=False)
    step: int


@dataclass(frozen=True, slots=True, kw_only=True)
class Thought(Status):
    """What the agent wrote beside its tool calls (cut to 500 characters)."""

    phase: str = field(default="thought", init=False)
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCalled(Status):
    """The agent calls a tool (`arguments` as the model wrote them, JSON)."""

    phase: str = field(default="tool_call", init=False)
    name: str
    arguments: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolReturned(Status):
    """A tool's result: its size in characters, a short summary, whether it is an error."""

    phase: str = field(default="tool_result", init=False)
    name: str
    size: int
    summary: str
    error: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class Steered(Status):
    """A steering message joined the agent's conversation."""

    phase: str = field(default="steered", init=False)
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Reviewing(Status):
    """The agent rewrites its answer after the checks found `problems` (review round `round`)."""

    phase: str = field(default="reviewing", init=False)
    round: int
    problems: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class SkillMatched(Status):
    """A skill matched the question and was loaded (why, and where the skill comes from)."""

    phase: str = field(default="skill", init=False)
    name: str
    reason: str
    origin: str


@dataclass(frozen=True, slots=True, kw_only=True)
class Escalating(Status):
    """Every draft was rejected: the diagnosis (`kind`, `reason`), or what the escalation model's call cost."""

    phase: str = field(default="escalating", init=False)
    kind: str
    reason: str | None = field(default=None, metadata=OPTIONAL)
    cost: Mapping[str, Any] | None = None  # model, prompt_tokens, completion_tokens, cost: spread on the wire

    def payload(self) -> dict[str, Any]:
        out: dict[str, Any] = {"phase": self.phase, "kind": self.kind}
        if self.reason is not None:
            out["reason"] = self.reason
        return {**out, **(self.cost or {})}


@dataclass(frozen=True, slots=True, kw_only=True)
class Accepting(Status):
    """The acceptance rule's decision (docqa.answer.accept): what is published and why."""

    phase: str = field(default="accepting", init=False)
    decision: Acceptance

    def payload(self) -> dict[str, Any]:
        return {"phase": self.phase, **self.decision.to_dict()}


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftDelta(Event):
    """Text the model writes, not checked yet: a piece of draft `n` (None: a model call's raw stream)."""

    type: ClassVar[str] = "draft"
    n: int | None = field(default=None, metadata=OPTIONAL)
    delta: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DraftRejected(Event):
    """The checks rejected draft `n`; a front end drops its text."""

    type: ClassVar[str] = "draft_rejected"
    n: int
    reasons: tuple[str, ...]


@dataclass(frozen=True, slots=True, kw_only=True)
class Content(Event):
    """The published answer's text; with `replace`, it replaces what was shown before."""

    type: ClassVar[str] = "content"
    delta: str
    replace: bool = field(default=False, metadata=OPTIONAL)


@dataclass(frozen=True, slots=True, kw_only=True)
class Citations(Event):
    """The published answer's citations, once."""

    type: ClassVar[str] = "citations"
    citations: tuple[Citation, ...] = ()

    def payload(self) -> dict[str, Any]:
        return {"citations": [c.to_dict() for c in self.citations]}


@dataclass(frozen=True, slots=True, kw_only=True)
class Failure(Event):
    """The answer failed (or fell back): `code` (timeout, failed, llm_error, internal, ...) and a message."""

    type: ClassVar[str] = "failure"
    code: str
    message: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Done(Event):
    """The answer's last event: SUCCESS, FALLBACK or FAILED (a cancelled run sends none)."""

    type: ClassVar[str] = "done"
    status: str
    run_id: str | None = field(default=None, metadata=OPTIONAL)
