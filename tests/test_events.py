"""The typed events keep the wire shape the SSE stream, the web page and MCP clients read: byte for byte
what the untyped `Event(type, dict)` sent before (the expected strings are that era's output)."""

from __future__ import annotations

import dataclasses
import inspect
import json

import pytest

from docqa import events
from docqa.api.errors import INTERNAL
from docqa.api.sse import _RANK, encode, public_event
from docqa.events import (Accepting, Citations, Content, Done, DraftDelta, DraftRejected, Escalating, Event, Failure,
                          Generating, Metadata, Reviewing, SkillMatched, Status, Steered, Thinking, Thought, ToolCalled,
                          ToolReturned)
from docqa.types import Acceptance, Citation

CITATION = Citation(n=1, chunk_id="c1", document_id="d1", path="ops.md", title="Ops", section="Backups", page=None,
                    line_start=3, line_end=3, char_start=10, char_end=40, quote="Backups are kept for 35 days.",
                    label="[source: ops.md §Backups, L3]")
COST = {"model": "strong-model", "prompt_tokens": 1000, "completion_tokens": 50, "cost": 0.0024}

WIRE = [  # (the typed event, what the stream carried for it before it was typed)
    (Metadata(session_id="s1", run_id="r1"), '{"type": "metadata", "session_id": "s1", "run_id": "r1"}'),
    (Status(phase="routing"), '{"type": "status", "phase": "routing"}'),
    (Generating(), '{"type": "status", "phase": "generating"}'),
    (Generating(retry="language"), '{"type": "status", "phase": "generating", "retry": "language"}'),
    (Thinking(step=2), '{"type": "status", "phase": "thinking", "step": 2}'),
    (Thought(text="Let me search."), '{"type": "status", "phase": "thought", "text": "Let me search."}'),
    (ToolCalled(name="search_docs", arguments='{"query": "备份"}'),
     '{"type": "status", "phase": "tool_call", "name": "search_docs", "arguments": "{\\"query\\": \\"备份\\"}"}'),
    (ToolReturned(name="fetch_doc", size=120, summary="ops.md lines 1-9", error=False),
     '{"type": "status", "phase": "tool_result", "name": "fetch_doc", "size": 120, "summary": "ops.md lines 1-9", '
     '"error": false}'),
    (Steered(text="Look at the policy."), '{"type": "status", "phase": "steered", "text": "Look at the policy."}'),
    (Reviewing(round=1, problems=("a number", "a path")),
     '{"type": "status", "phase": "reviewing", "round": 1, "problems": ["a number", "a path"]}'),
    (SkillMatched(name="compare-versions", reason="the question contains 'what changed'", origin="builtin"),
     '{"type": "status", "phase": "skill", "name": "compare-versions", "reason": "the question contains \'what changed\'", '
     '"origin": "builtin"}'),
    (Escalating(kind="retrieval", reason="the sources lack the terms"),
     '{"type": "status", "phase": "escalating", "kind": "retrieval", "reason": "the sources lack the terms"}'),
    (Escalating(kind="unexplained", cost=COST),
     '{"type": "status", "phase": "escalating", "kind": "unexplained", "model": "strong-model", "prompt_tokens": 1000, '
     '"completion_tokens": 50, "cost": 0.0024}'),
    (Accepting(decision=Acceptance("model", 2, 2, "every claim verified")),
     '{"type": "status", "phase": "accepting", "outcome": "model", "verified": 2, "claims": 2, '
     '"reason": "every claim verified"}'),
    (DraftDelta(delta="Back"), '{"type": "draft", "delta": "Back"}'),
    (DraftDelta(n=2, delta="ups"), '{"type": "draft", "n": 2, "delta": "ups"}'),
    (DraftRejected(n=1, reasons=("number '8' is not in [1]",)),
     '{"type": "draft_rejected", "n": 1, "reasons": ["number \'8\' is not in [1]"]}'),
    (Content(delta="Backups are kept for 35 days [1]."), '{"type": "content", "delta": "Backups are kept for 35 days [1]."}'),
    (Content(delta="35 天。", replace=True), '{"type": "content", "delta": "35 天。", "replace": true}'),
    (Citations(), '{"type": "citations", "citations": []}'),
    (Citations(citations=(CITATION,)), json.dumps({"type": "citations", "citations": [CITATION.to_dict()]}, ensure_ascii=False)),
    (Failure(code="timeout", message="the answer took longer than its time limit (0.3 s)"),
     '{"type": "failure", "code": "timeout", "message": "the answer took longer than its time limit (0.3 s)"}'),
    (Done(status="SUCCESS", run_id="r1"), '{"type": "done", "status": "SUCCESS", "run_id": "r1"}'),
    (Done(status="FAILED"), '{"type": "done", "status": "FAILED"}'),
]


@pytest.mark.parametrize("event,wire", WIRE, ids=[f"{type(e).__name__}-{i}" for i, (e, _) in enumerate(WIRE)])
def test_an_event_goes_on_the_wire_as_before(event: Event, wire: str):
    assert json.dumps(event.to_dict(), ensure_ascii=False) == wire
    sse = encode(event)  # the SSE frame: the type as the event name, the rest as its data
    assert sse.event == event.type and sse.data == json.dumps({k: v for k, v in json.loads(wire).items() if k != "type"},
                                                              ensure_ascii=False)


def test_every_kind_is_covered_and_the_stream_knows_it():
    classes = [c for _, c in inspect.getmembers(events, inspect.isclass) if issubclass(c, Event) and c is not Event]
    assert {c.type for c in classes} == set(_RANK)  # the SSE order knows every kind, and no other
    assert {type(e) for e, _ in WIRE} == set(classes)  # the table above has every class


def test_events_are_frozen_and_keyword_only():
    with pytest.raises(dataclasses.FrozenInstanceError):
        Content(delta="x").delta = "y"  # type: ignore[misc]
    with pytest.raises(TypeError):
        Done("SUCCESS")  # type: ignore[misc]
    assert ToolCalled(name="a", arguments="{}").phase == "tool_call" and isinstance(ToolCalled(name="a", arguments=""), Status)


def test_a_failure_on_the_wire_hides_internal_errors_and_redacts_paths():
    internal = Failure(code="failed", message="internal error (KeyError): 'x'. The run's trace is kept")
    assert public_event(internal)["message"] == INTERNAL
    told = public_event(Failure(code="failed", message="cannot read /srv/kb/secret.md"), lambda m: m.replace("/srv/kb/", ""))
    assert told == {"code": "failed", "message": "cannot read secret.md"}
    assert public_event(Failure(code="failed", message=None)) == {"code": "failed", "message": ""}
