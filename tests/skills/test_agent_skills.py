"""Skills in an agent run, with the scripted chat model (docqa.testing) and a real knowledge base:
level 1 (every skill's name and description) in the system prompt, level 2 (the procedure) only
after use_skill or a matching question, level 3 (resources) on read_skill_resource; each skill
loaded recorded in the trace with why, and shown in the events and the answer."""

from __future__ import annotations

import pytest

from docqa.events import SkillMatched, ToolReturned
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import ScriptedChat


OPS = """# Operations

## Rotating API keys

1. Run `acmectl keys rotate` on the admin host.
2. Restart the API service.
3. Check that the old key is refused.
"""
OPS_V2 = OPS.replace("Restart the API service.", "Reload the API service.")
PROCEDURE_BODY = "search_docs for the task in the question's own words"  # a line of write-procedure's Workflow
COMPARE_BODY = "Find both versions"  # a line of compare-versions' Workflow
OWN = """---
name: incident-report
description: Write an incident report from the postmortems.
triggers: [postmortem]
---
## Workflow
Read every postmortem with fetch_doc.
## Required evidence
The postmortem [n].
## Stop conditions
All read.
## Report rules
Timeline first.
"""


def call(tool: str, **arguments) -> dict:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


@pytest.fixture
def make(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops-v1.md").write_text(OPS, encoding="utf-8")
    (tmp_path / "docs" / "ops-v2.md").write_text(OPS_V2, encoding="utf-8")
    made = []

    def factory(server: ScriptedChat, **skills) -> KnowledgeBase:
        # these tests pin how skills are disclosed and recorded; whether an answer is published or quoted
        # (the acceptance rule, answer.accept_share) is tested in tests/answer/test_accept.py
        settings = Settings(kb=str(tmp_path / "kb.db"), agent={"check": False}, skills=skills, answer={"accept_share": 0},
                            llm={"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "timeout": 3})
        kb = KnowledgeBase(settings, embedder=embedder,
                           chat_model=server)
        if not made:
            kb.add([tmp_path / "docs"])
        made.append(kb)
        return kb

    yield factory
    for kb in made:
        kb.close()


def ask(kb: KnowledgeBase, question: str):
    events = []
    answer = kb.ask(question, mode="agent", on_event=events.append)
    return answer, events, kb.log.run(answer.run_id).trace


def system_prompt(request: dict) -> str:
    return request["messages"][0]["content"]


def test_index_only_until_the_agent_calls_use_skill_then_it_follows_it(make):
    with ScriptedChat([call("use_skill", name="write-procedure"), call("search_docs", query="rotate API keys"),
                         call("read_skill_resource", name="write-procedure", path="templates/procedure.md"),
                         call("answer", text="Run `acmectl keys rotate` on the admin host [1].")]) as server:
        answer, events, trace = ask(make(server), "How are the API keys rotated?")
        requests = server.requests
    first = system_prompt(requests[0])
    # level 1: every built-in skill's name and description; no procedure yet
    for name in ("compare-versions", "summarise-collection", "find-mentions", "answer-from-table", "write-procedure"):
        assert f"- {name}: " in first
    assert PROCEDURE_BODY not in str(requests[0]["messages"]) and "## Workflow" not in first
    assert [t["function"]["name"] for t in requests[0]["tools"]][-2:] == ["use_skill", "read_skill_resource"]
    # level 2 after use_skill: the procedure comes back as the tool's result
    loaded = [m["content"] for m in requests[1]["messages"] if m["role"] == "tool"][0]
    assert loaded.startswith("# Skill: write-procedure") and PROCEDURE_BODY in loaded
    assert "Resources (read_skill_resource" in loaded and "templates/procedure.md" in loaded
    # level 3: the template, in numbered lines
    template = [m["content"] for m in requests[3]["messages"] if m["role"] == "tool"][-1]
    assert "write-procedure/templates/procedure.md: lines 1–" in template and "Before you start:" in template
    assert answer.status == "SUCCESS" and answer.citations
    assert answer.retrieval.skills == [{"name": "write-procedure", "reason": "the agent called use_skill",
                                           "origin": "builtin"}]
    skill_entries = [t for t in trace if t.get("stage") in ("skill", "skill_resource")]
    assert skill_entries == [{"stage": "skill", "name": "write-procedure", "reason": "the agent called use_skill",
                              "origin": "builtin"},
                             {"stage": "skill_resource", "name": "write-procedure", "path": "templates/procedure.md"}]
    assert [t["name"] for t in trace if t.get("stage") == "tool"] == ["use_skill", "search_docs", "read_skill_resource",
                                                                      "answer"]
    results = [e for e in events if isinstance(e, ToolReturned)]
    assert results[0].summary == "loaded skill write-procedure"


def test_a_matching_question_loads_the_procedure_before_the_first_step(make):
    with ScriptedChat([call("list_docs", grep="ops"),
                         call("answer", text="Step 2 changed from restart to reload.")]) as server:
        answer, events, trace = ask(make(server), "What changed between ops-v1 and ops-v2?")
        first = system_prompt(server.requests[0])
    assert COMPARE_BODY in first and "(skill compare-versions, loaded because the question contains its trigger" in first
    assert "## Workflow" not in first and "Workflow:" in first  # instructions, not a document to copy
    assert PROCEDURE_BODY not in first  # only the matching skill's procedure
    matched = [e for e in events if isinstance(e, SkillMatched)]
    assert [m.name for m in matched] == ["compare-versions"] and "'what changed'" in matched[0].reason
    entry = next(t for t in trace if t.get("stage") == "skill")
    assert entry["name"] == "compare-versions" and entry["reason"] == matched[0].reason
    assert [s["name"] for s in answer.retrieval.skills] == ["compare-versions"]
    assert trace.index(entry) < next(i for i, t in enumerate(trace) if t.get("model_call"))  # before the model ran


def test_a_reply_that_copies_the_procedure_is_not_the_answer(make):
    copied = ("Workflow:\n1. Find both versions: call list_docs with grep on the document's name (or search_docs with "
              "its subject).\n2. Read each version with fetch_doc (page with offset and limit when it is long).")
    with ScriptedChat([{"text": copied}, call("list_docs", grep="ops"),
                         call("answer", text="Step 2 changed from restart to reload.")]) as server:
        answer, _, trace = ask(make(server), "What changed between ops-v1 and ops-v2?")
        nudge = server.requests[1]["messages"][-1]["content"]
    assert nudge.startswith("That repeats your instructions") and len(server.requests) == 3
    assert [t["name"] for t in trace if t.get("stage") == "tool"] == ["list_docs", "answer"]
    assert "Find both versions" not in answer.answer


def test_a_report_written_before_reading_anything_is_sent_back_once(make):
    report = "- Changed: step 2 [1]"
    with ScriptedChat([{"text": report}, call("list_docs", grep="ops"),
                         call("answer", text="Step 2 changed from restart to reload.")]) as server:
        _, _, trace = ask(make(server), "What changed between ops-v1 and ops-v2?")
        nudge = server.requests[1]["messages"][-1]["content"]
    assert nudge.startswith("You have read nothing from the documents yet") and len(server.requests) == 3
    with ScriptedChat([{"text": report}, {"text": report}]) as server:  # told once: the second is its answer
        answer, _, _ = ask(make(server), "What changed between ops-v1 and ops-v2?")
        assert len(server.requests) == 2


def test_bad_skill_calls_are_results_for_the_model_not_failures(make):
    with ScriptedChat([call("use_skill", name="no-such-skill"),
                         call("read_skill_resource", name="write-procedure", path="../../../docs/ops-v1.md"),
                         call("answer", text="Run `acmectl keys rotate` [1].")]) as server:
        answer, _, trace = ask(make(server), "How are the API keys rotated?")
        replies = [m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert "no skill named 'no-such-skill'" in replies[0] and "write-procedure" in replies[0]
    assert "is not a path inside skill 'write-procedure'" in replies[1] and "acmectl" not in replies[1]
    assert [t["error"] for t in trace if t.get("stage") == "tool"][:2] == [True, True]
    assert answer.retrieval.skills == [] and not any(t.get("stage") == "skill_resource" for t in trace)


def test_the_knowledge_base_own_skills_and_switching_skills_off(make, tmp_path):
    folder = tmp_path / "skills" / "incident-report"
    folder.mkdir(parents=True)
    (folder / "SKILL.md").write_text(OWN, encoding="utf-8")
    with ScriptedChat([call("answer", text="No postmortems [1].")]) as server:
        ask(make(server, auto=False), "Summarise the postmortem")
        prompt = system_prompt(server.requests[0])
    assert "- incident-report: Write an incident report" in prompt and "Timeline first" not in prompt  # auto off
    with ScriptedChat([call("answer", text="No postmortems.")]) as server:
        _, _, trace = ask(make(server), "Write up the postmortem")
        prompt = system_prompt(server.requests[0])
    assert "Timeline first" in prompt and next(t for t in trace if t.get("stage") == "skill")["origin"] == "knowledge base"
    with ScriptedChat([call("answer", text="No postmortems.")]) as server:
        answer, _, trace = ask(make(server, enabled=False), "Write up the postmortem")
        request = server.requests[0]
    assert "Skills" not in system_prompt(request) and "use_skill" not in [t["function"]["name"] for t in request["tools"]]
    assert "skills" not in answer.retrieval.to_dict() and not any(t.get("stage") == "skill" for t in trace)
