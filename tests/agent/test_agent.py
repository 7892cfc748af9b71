"""Agent mode with the scripted chat model (docqa.testing) and a real knowledge base: the model
decides which tools to call; the loop runs them within budgets."""

from __future__ import annotations

import json

import pytest

from docqa.events import Content, Done, DraftDelta, DraftRejected, Reviewing, ToolCalled, ToolReturned
from docqa.kb import KnowledgeBase
from docqa.run.life import choose_mode
from docqa.settings import Settings
from docqa.testing import ScriptedChat


OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""
POLICY = """# Security policy

Passwords must be at least 14 characters long.
"""


def call(name: str, **arguments) -> dict:
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


def answer(text: str) -> dict:
    return call("answer", text=text)


@pytest.fixture
def make(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops.md").write_text(OPS, encoding="utf-8")
    (tmp_path / "docs" / "policy.md").write_text(POLICY, encoding="utf-8")
    made = []

    def factory(model: ScriptedChat, **agent) -> KnowledgeBase:
        settings = Settings(kb=str(tmp_path / "kb.db"), agent={"check": False, **agent},
                            llm={"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "max_retries": 0, "timeout": 3})
        kb = KnowledgeBase(settings, embedder=embedder, chat_model=model)
        if not made:
            kb.add([tmp_path / "docs"])
        made.append(kb)
        return kb

    yield factory
    for kb in made:
        kb.close()


def doc_id(kb: KnowledgeBase, name: str) -> str:
    return next(r.document_id for r in kb.documents.list() if r.path.endswith(name))


def run(kb, question="How long are backups kept?", **kw):
    events = []
    result = kb.ask(question, mode="agent", on_event=events.append, **kw)
    return result, events


def test_search_fetch_answer(make):
    server = ScriptedChat([call("search_docs", query="backup retention")])
    with server:
        kb = make(server)
        server.replies += [call("fetch_doc", doc_id=doc_id(kb, "ops.md"), offset=3, limit=4),
                          answer("Backups are kept for 35 days [2].")]
        result, events = run(kb)
        requests = server.requests
    assert result.status == "SUCCESS" and result.mode == "agent" and result.answerable
    assert len(requests) == 3 and [t["function"]["name"] for t in requests[0]["tools"]] == [
        "search_docs", "list_docs", "fetch_doc", "grep_docs", "answer", "use_skill", "read_skill_resource"]
    # the tool results went back in the OpenAI shape
    tool_messages = [m for m in requests[2]["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 2 and "Backups are kept for 35 days." in tool_messages[1]["content"]
    assert "   5| Backups are kept for 35 days." in tool_messages[1]["content"] or "5|" in tool_messages[1]["content"]
    citation = result.citations[0]
    assert citation.quote == "Backups are kept for 35 days."
    assert kb.documents.text(citation.document_id)[citation.char_start:citation.char_end] == citation.quote
    phases = [(e.phase, e.name) for e in events if isinstance(e, (ToolCalled, ToolReturned))]
    assert ("tool_call", "search_docs") in phases and ("tool_result", "fetch_doc") in phases
    tool_result = next(e for e in events if isinstance(e, ToolReturned))
    assert tool_result.size > 0 and "hits" in tool_result.summary
    assert [e.type for e in events][-2:] == ["citations", "done"]
    audit = kb.log.run(result.run_id)
    assert [t["name"] for t in audit.trace if t.get("stage") == "tool"] == ["search_docs", "fetch_doc", "answer"]


def test_step_budget_falls_back_to_the_pipelines_answer_over_the_evidence(make):
    with ScriptedChat([call("search_docs", query="backups"), call("search_docs", query="retention"),
                         {"text": "Backups are kept for 35 days [1]."}]) as server:
        result, events = run(make(server, max_steps=2))
        final_request = server.requests[2]
    assert result.status == "FALLBACK" and "35 days" in result.answer and result.citations
    assert "tools" not in final_request  # the pipeline's own prompt over the gathered passages, not the agent's chat
    assert final_request["messages"][0]["content"].startswith("You answer questions using ONLY the numbered sources")
    assert "35 days" in final_request["messages"][-1]["content"]
    assert any("budget ran out (2 steps)" in n for n in result.notes)
    assert isinstance(events[-1], Done) and events[-1].status == "FALLBACK"


def test_token_budget_answers_from_evidence_without_another_call(make):
    with ScriptedChat([{**call("search_docs", query="how long are backups kept"), "usage": (5000, 20)}]) as server:
        result, _ = run(make(server, max_tokens=1000))
        calls = len(server.requests)
    assert calls == 1 and result.status == "FALLBACK" and result.mode == "extractive"
    assert "35 days" in result.answer and any("budget ran out (1000 tokens)" in n for n in result.notes)


def test_repeated_call_is_flagged_then_stopped(make):
    same = call("search_docs", query="backups")
    with ScriptedChat([same, same, same, {"text": "Backups are kept for 35 days [1]."}]) as server:
        result, _ = run(make(server))
        second_round = server.requests[2]["messages"]
    assert "already called search_docs with exactly these arguments" in second_round[-1]["content"]
    assert len(server.requests) == 4 and result.status == "FALLBACK" and "repeated call" in result.notes[0]


def test_a_failing_tool_becomes_an_error_result(make):
    with ScriptedChat([call("fetch_doc", doc_id="no-such-doc"), call("grep_docs", pattern="(unclosed"),
                         call("search_docs", query="backups"), answer("Backups are kept for 35 days [1].")]) as server:
        result, _ = run(make(server))
        tool_messages = [m["content"] for m in server.requests[3]["messages"] if m["role"] == "tool"]
    assert tool_messages[0].startswith("error:") and "no-such-doc" in tool_messages[0]
    assert tool_messages[1].startswith("error:")
    assert result.status == "SUCCESS" and "35 days" in result.answer


def test_unknown_tool_and_bad_arguments_are_reported_to_the_model(make):
    with ScriptedChat([call("delete_everything"), {"tool_calls": [{"name": "search_docs", "arguments": "{not json"}]},
                         answer("The documents do not say.")]) as server:
        run(make(server))
        tool_messages = [m["content"] for m in server.requests[2]["messages"] if m["role"] == "tool"]
    assert "there is no tool 'delete_everything'" in tool_messages[0]
    assert "not valid JSON" in tool_messages[1]


def test_steering_joins_after_the_tool_round(make):
    with ScriptedChat([call("search_docs", query="backups"), answer("Passwords must be at least 14 characters [2].")]) as server:
        kb = make(server)
        server.replies[1:1] = [call("search_docs", query="password length")]
        run = kb.start("What are the rules?", mode="agent")
        for event in run:
            if isinstance(event, ToolReturned) and not run.answers:
                run.steer("Look at the security policy instead.")
        result = run.answer
        second = server.requests[1]["messages"]
    assert second[-1]["role"] == "user" and "Look at the security policy instead." in second[-1]["content"]
    assert result.status == "SUCCESS"


def test_follow_up_runs_after_the_answer(make):
    with ScriptedChat([call("search_docs", query="backups"), answer("Backups are kept for 35 days [1]."),
                         call("search_docs", query="api keys"), answer("API keys are rotated every 90 days [1].")]) as server:
        kb = make(server)
        run, queued = kb.start("How long are backups kept?", mode="agent"), []
        for event in run:
            if isinstance(event, ToolCalled) and not queued:
                queued.append(run.follow_up("And how often are API keys rotated?"))
        first = run.answer
    assert queued == [True]
    assert "35 days" in first.answer and len(run.answers) == 2
    second = run.answers[1]
    assert "90 days" in second.answer and second.session_id == first.session_id
    assert [r.question for r in kb.log.session_runs(first.session_id)] == [
        "How long are backups kept?", "And how often are API keys rotated?"]


def test_cancelled_run_makes_no_further_model_calls(make):
    with ScriptedChat([call("search_docs", query="backups"), answer("never")]) as server:
        kb = make(server)
        run = kb.start("How long are backups kept?", mode="agent")
        for event in run:
            if isinstance(event, ToolCalled):
                run.cancel()
        result = run.answer
        calls = len(server.requests)
    assert result.status == "CANCELLED" and calls == 1


def test_tool_calls_written_as_text_by_small_models(make):
    text_call = {"text": 'I will search.\n```json\n{"name": "search_docs", "arguments": {"query": "backups kept"}}\n```'}
    tagged = {"text": '<tool_call>{"name": "answer", "arguments": {"text": "Backups are kept for 35 days [1]."}}</tool_call>'}
    with ScriptedChat([text_call, tagged]) as server:
        result, _ = run(make(server))
        second = server.requests[1]["messages"]
    assert second[-1]["role"] == "user" and second[-1]["content"].startswith("Result of search_docs:")
    assert result.status == "SUCCESS" and result.citations[0].quote == "Backups are kept for 35 days."


def test_a_tool_call_cut_off_by_the_token_limit_is_not_run(make):
    with ScriptedChat([{**call("search_docs", query="backups"), "finish_reason": "length"},
                         answer("The documents do not say.")]) as server:
        _, events = run(make(server))
        second = server.requests[1]["messages"]
    assert "cut off by the token limit" in second[-1]["content"]
    assert not any(e.name == "search_docs" for e in events if isinstance(e, (ToolCalled, ToolReturned)))


def test_a_rejected_answer_is_reviewed_with_the_tools_then_verified(make):
    """The final answer goes through the pipeline's checker; a rejection goes back to the agent with
    its reasons, the agent looks again with its tools and answers again; then the model verifies it."""
    with ScriptedChat([call("search_docs", query="backups"),
                         answer("Backups are kept for 35 days [1]. Backups are copied to 3 regions [1]."),
                         call("grep_docs", pattern="regions|copied"),
                         answer("Backups are kept for 35 days [1]."),
                         {"text": "VERIFIED"}]) as server:
        result, events = run(make(server, check=True))
        requests = server.requests
    assert result.status == "SUCCESS" and result.answer == "Backups are kept for 35 days [1]."
    assert result.verification.status == "VERIFIED" and result.verification.rounds == 1
    review = next(m["content"] for m in requests[2]["messages"] if m["role"] == "user" and "fact-check" in m["content"])
    assert "3" in review and "regions" in review  # the reason reached the agent, which then used a tool
    assert len(requests) == 5 and "strict fact-checker" in requests[4]["messages"][-1]["content"]
    reviewing = [e for e in events if isinstance(e, Reviewing)]
    assert len(reviewing) == 1 and reviewing[0].round == 1
    replaced = [e for e in events if isinstance(e, Content) and e.replace]
    assert replaced and replaced[-1].delta == result.answer
    assert [e.type for e in events][-2:] == ["citations", "done"]
    # each answer the agent gave was a draft; the first was rejected; only the checked one is content
    drafts = [e for e in events if isinstance(e, DraftDelta)]
    assert [d.n for d in drafts] == [1, 2] and "3 regions" in drafts[0].delta
    assert [e.n for e in events if isinstance(e, DraftRejected)] == [1]
    assert [e.delta for e in events if isinstance(e, Content)] == [result.answer]


def test_an_agent_answering_not_found_gets_the_not_found_answer_and_no_token(make):
    with ScriptedChat([call("search_docs", query="backup policy approval"), answer("NOT_FOUND")]) as server:
        result, events = run(make(server, check=True), "Who approves the backup policy?")
    assert not result.answerable and result.answer.startswith("The documents do not contain an answer")
    assert "NOT_FOUND" not in str([e.delta for e in events if isinstance(e, (DraftDelta, Content))])


def test_two_rejections_publish_the_best_answer_without_its_rejected_claim(make):
    bad = "Backups are kept for 35 days [1]. Backups are copied to {n} regions [1]."
    with ScriptedChat([call("search_docs", query="backups"), answer(bad.format(n=3)), answer(bad.format(n=4)),
                         answer(bad.format(n=5))]) as server:
        result, _ = run(make(server, check=True))
        calls = len(server.requests)
    assert calls == 4  # no fourth answer: answer.review_rounds is 2
    assert result.verification.status == "PARTIAL" and result.verification.rounds == 2
    assert result.answer.startswith("Backups are kept for 35 days") and "regions" not in result.answer
    assert result.verification.rejected_claims[0]["claim"] == "Backups are copied to 5 regions."  # the last of equals


def test_review_rounds_stay_within_the_step_budget(make):
    bad = "Backups are copied to 3 regions [1]."
    with ScriptedChat([call("search_docs", query="backups"), answer(bad), answer(bad + " ")]) as server:
        result, _ = run(make(server, check=True, max_steps=3))
        calls = len(server.requests)
    assert calls == 3 and any("budget ran out during review" in n for n in result.notes)
    assert result.mode == "extractive" and "regions" not in result.answer  # nothing verified: quoted instead


@pytest.mark.parametrize("question,mode", [
    ("Compare the backup and key rotation policies across all documents", "agent"),
    ("列出所有文档中提到的期限", "agent"),
    ("How long are backups kept?", "pipeline"),
    ("What documents do you have?", "pipeline"),  # the catalog answers that
])
def test_auto_mode_rule(make, question, mode):
    with ScriptedChat([]) as server:
        assert choose_mode(question, "auto", make(server).models.chat.model) == mode


def test_tool_arguments_are_json_in_the_trace(make):
    with ScriptedChat([call("search_docs", query="备份"), answer("Backups are kept for 35 days [1].")]) as server:
        result, _ = run(make(server))
    audit = kb_trace = make(server).log.run(result.run_id).trace
    tool = next(t for t in kb_trace if t.get("stage") == "tool")
    assert json.loads(tool["arguments"]) == {"query": "备份"}
    del audit


def test_an_agent_that_finds_nothing_says_so_and_is_not_answerable(make):
    with ScriptedChat([call("search_docs", query="backup policy approval"),
                         answer("The documents do not mention who approves the backup policy.")]) as server:
        result, events = run(make(server, check=True), "Who approves the backup policy?")
        calls = len(server.requests)
    assert not result.answerable and result.answer.startswith("The documents do not contain an answer")
    assert calls == 2 and [e.type for e in events][-2:] == ["citations", "done"]
