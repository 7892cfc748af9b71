"""Escalation after every review round is rejected (docqa.answer.escalate), end to end: a real
knowledge base and the scripted OpenAI-compatible server.  One test per diagnosis and action, each
asserting what was done, the trace entry, the run record and `docqa log --attention`; and that a run
acts once."""

from __future__ import annotations

import os
import re

import pytest

from docqa.access import Principal
from docqa.events import Escalating
from docqa.kb import KnowledgeBase
from docqa.llm import OpenAICompatModel
from docqa.settings import Settings

from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""
VAULT = """# Archive

Offsite backup copies are held in the Glacier vault for 400 days.
"""
QUESTION = "How long are backups kept?"


@pytest.fixture
def make_kb(tmp_path, embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text(OPS, encoding="utf-8")
    (docs / "vault.md").write_text(VAULT, encoding="utf-8")
    opened = []

    def make(server: ScriptedServer, llm: dict | None = None, search: dict | None = None, **answer) -> KnowledgeBase:
        settings = Settings(kb=str(tmp_path / "kb.db"), answer=answer, search=search or {},
                            llm={"provider": "openai", "base_url": server.base_url, "timeout": 3, "max_retries": 0,
                                 **(llm or {})})
        kb = KnowledgeBase(settings, embedder=embedder,
                           chat_model=OpenAICompatModel(server.base_url, "scripted", timeout=3, max_retries=0))
        if not opened:
            kb.add([docs])
        opened.append(kb)
        return kb

    make.docs = docs
    yield make
    for kb in opened:
        kb.close()


def ask(kb, question=QUESTION, **kw):
    events = []
    answer = kb.ask(question, on_event=events.append, **kw)
    return answer, events


def escalations(kb, answer) -> list[dict]:
    return [e for e in kb.log.run(answer.run_id).trace if e.get("stage") == "escalating"]


def attention_reason(kb, answer) -> str:
    rows = [r for r in kb.log.qa_log(attention=True) if r["run_id"] == answer.run_id]
    assert rows and "escalated" in rows[0]["attention"]
    return rows[0]["reason"]


def source_with(body: dict, text: str) -> int:
    """The number of the source in the request's prompt that holds `text`."""
    prompt = body["messages"][-1]["content"]
    for m in re.finditer(r'<source id="(\d+)"[^>]*>(.*?)</source>', prompt, re.S):
        if text in m.group(2):
            return int(m.group(1))
    raise AssertionError(f"no source holds {text!r}")


def test_retrieval_that_missed_the_facts_retries_with_a_keyword_search(make_kb, local_embedder):
    wrong = {"text": "Offsite backup copies are held in the Glacier vault for 400 days [1]."}
    retry = lambda body: {"text": f"Offsite backup copies are held in the Glacier vault for 400 days [{source_with(body, 'Glacier')}]."}  # noqa: E731
    with ScriptedServer([wrong, wrong, wrong, retry, {"text": "VERIFIED"}]) as server:
        kb = make_kb(server, search={"relevance_threshold": 1.0}, top_k=1)
        answer, events = ask(kb)
        calls = len(server.requests)
    assert calls == 5  # three rejected rounds, one retry and the model's check of it: acted once
    [entry] = escalations(kb, answer)
    assert entry["kind"] == "retrieval" and entry["action"].startswith("retry over a keyword (BM25) search, top 2")
    assert "glacier" in entry["keyword_query"] and "backups" in entry["keyword_query"]
    assert entry["evidence"]["missing_share"] >= 0.5 and entry["evidence"]["low_relevance"]
    assert not entry["retry_rejected"] and entry["retry_published_from"] == "retry"
    assert any(e.get("stage") == "retrieving" and e.get("mode") == "bm25" for e in kb.log.run(answer.run_id).trace)
    assert any(isinstance(e, Escalating) and e.kind == "retrieval" for e in events)
    assert "400 days" in answer.answer and any(c.path.endswith("vault.md") for c in answer.citations)
    assert answer.retrieval.escalation["kind"] == "retrieval"
    assert "escalated: retrieval" in attention_reason(kb, answer)


@pytest.mark.slow
def test_a_cited_file_changed_on_disk_is_reingested_and_the_question_retried(make_kb):
    stale = {"text": "The database is backed up every 4 hours [1]."}
    with ScriptedServer([stale, stale, stale, stale, {"text": "VERIFIED"}]) as server:
        kb = make_kb(server)
        ops = make_kb.docs / "ops.md"
        ops.write_text(OPS.replace("every 6 hours", "every 4 hours, then compressed,"), encoding="utf-8")
        answer, _ = ask(kb, "How often is the database backed up?")
        calls = len(server.requests)
    assert calls == 5
    [entry] = escalations(kb, answer)
    assert entry["kind"] == "changed_files" and entry["evidence"]["changed"][0]["path"] == str(ops)
    assert "size" in entry["evidence"]["changed"][0]["why"]
    assert entry["action"] == "re-ingested 1 file(s) and retried" and entry["reingested"]["updated"] == [str(ops)]
    assert not entry["retry_rejected"]
    assert "every 4 hours" in kb.documents.text(kb.documents.get(ops).document_id)  # the index now says what the file says
    assert answer.verification.status == "VERIFIED" and "4 hours" in answer.answer
    assert "changed_files" in attention_reason(kb, answer)


@pytest.mark.slow
def test_a_reader_cannot_trigger_a_reingest(make_kb):
    stale = {"text": "The database is backed up every 4 hours [1]."}
    with ScriptedServer([stale, stale, stale]) as server:
        kb = make_kb(server)
        ops = make_kb.docs / "ops.md"
        ops.write_text(OPS.replace("every 6 hours", "every 4 hours, then compressed,"), encoding="utf-8")
        answer, _ = ask(kb, "How often is the database backed up?", principal=Principal("reader"))
        calls = len(server.requests)
    assert calls == 3
    [entry] = escalations(kb, answer)
    assert entry["kind"] == "changed_files" and "re-ingest refused" in entry["refused"]
    assert entry["action"] == "none (no llm.escalation_model)"
    assert "every 6 hours" in kb.documents.text(kb.documents.get(ops).document_id)  # left as indexed


@pytest.mark.slow
def test_a_file_that_cannot_be_read_now_is_not_taken_for_deleted(make_kb):
    wrong = {"text": "The database is backed up every 8 hours [1]."}
    with ScriptedServer([wrong, wrong, wrong]) as server:
        kb = make_kb(server)
        ops = make_kb.docs / "ops.md"
        doc_id = kb.documents.get(ops).document_id
        os.rename(ops, make_kb.docs / "elsewhere.txt")
        answer, _ = ask(kb, "How often is the database backed up?")
        calls = len(server.requests)
    assert calls == 3
    [entry] = escalations(kb, answer)
    assert entry["kind"] != "changed_files"
    assert [u["path"] for u in entry["evidence"]["unreadable"]] == [str(ops)]
    assert kb.documents.text(doc_id)  # still indexed


def test_answers_without_markers_are_retried_with_the_stricter_prompt(make_kb, local_embedder):
    loose = {"text": "Backups last roughly one month, usually."}
    with ScriptedServer([loose, loose, loose, {"text": "Backups are kept for 35 days [1]."}, {"text": "VERIFIED"}]) as server:
        kb = make_kb(server)
        answer, _ = ask(kb)
        strict = server.requests[3]["messages"]
        calls = len(server.requests)
    assert calls == 5
    [entry] = escalations(kb, answer)
    assert entry["kind"] == "format" and entry["evidence"]["rounds_without_markers"] == 3
    assert entry["action"] == "retry with the stricter prompt"
    assert "End EVERY sentence with the number of its source" in strict[0]["content"]
    assert "were rejected: no answer cited its sources" in strict[0]["content"]
    assert not entry["retry_rejected"]
    assert answer.verification.status == "VERIFIED" and "35 days [1]" in answer.answer
    assert answer.retrieval.acceptance.outcome == "model"
    assert "format" in attention_reason(kb, answer)


@pytest.mark.slow
def test_an_unexplained_rejection_asks_the_escalation_model_once_with_its_cost(make_kb):
    wrong = {"text": "The database is backed up every 8 hours [1]."}
    with ScriptedServer([wrong, wrong, wrong, {"text": "VERIFIED"}]) as server, \
            ScriptedServer([{"text": "The database is backed up every 6 hours [1].", "usage": (1000, 50)}]) as strong:
        kb = make_kb(server, llm={"escalation_model": "strong-model", "escalation_base_url": strong.base_url,
                                  "escalation_prompt_price": 2.0, "escalation_completion_price": 8.0})
        answer, events = ask(kb, "How often is the database backed up?")
        calls, strong_calls = len(server.requests), len(strong.requests)
        asked = strong.requests[0]
    assert (calls, strong_calls) == (4, 1)  # the chat model checks the escalation model's answer
    assert asked["model"] == "strong-model" and "every 6 hours" in asked["messages"][-1]["content"]
    [entry] = escalations(kb, answer)
    assert entry["kind"] == "unexplained" and entry["action"] == "asked the escalation model strong-model"
    assert entry["cost"] == {"model": "strong-model", "prompt_tokens": 1000, "completion_tokens": 50, "cost": 0.0024}
    assert answer.usage["cost"] == pytest.approx(0.0024)  # the chat model's own prices are 0
    costs = [e.cost for e in events if isinstance(e, Escalating) and e.cost]
    assert costs and costs[0]["cost"] == 0.0024
    assert answer.verification.status == "VERIFIED" and "6 hours" in answer.answer
    assert answer.retrieval.escalation["cost"]["cost"] == 0.0024


@pytest.mark.slow
def test_still_rejected_without_an_escalation_model_publishes_as_before(make_kb):
    wrong = {"text": "The database is backed up every 8 hours [1]."}
    with ScriptedServer([wrong, wrong, wrong]) as server:
        kb = make_kb(server)
        answer, _ = ask(kb, "How often is the database backed up?")
        calls = len(server.requests)
    assert calls == 3  # nothing more asked
    [entry] = escalations(kb, answer)
    assert entry["kind"] == "unexplained" and entry["action"] == "none (no llm.escalation_model)"
    assert answer.retrieval.acceptance.outcome == "extractive"  # the acceptance rule, as without escalation
    assert "every 6 hours" in answer.answer and "8 hours" not in answer.answer
    assert "unexplained" in attention_reason(kb, answer)
    with ScriptedServer([wrong, wrong, wrong]) as server:  # answer.escalate off: no diagnosis at all
        kb = make_kb(server, escalate=False)
        answer, _ = ask(kb, "How often is the database backed up?")
    assert not escalations(kb, answer) and "escalation" not in answer.retrieval.to_dict()


def test_a_run_acts_once(make_kb, local_embedder):
    loose = {"text": "Backups last roughly one month, usually."}
    with ScriptedServer([loose, loose, loose, loose, loose]) as server, ScriptedServer([]) as strong:
        kb = make_kb(server, llm={"escalation_model": "strong-model", "escalation_base_url": strong.base_url})
        answer, _ = ask(kb)
        calls, strong_calls = len(server.requests), len(strong.requests)
    assert (calls, strong_calls) == (4, 0)  # the stricter prompt once; no second action, no escalation model
    [entry] = escalations(kb, answer)
    assert entry["kind"] == "format" and entry["retry_rejected"]
    assert entry["outcome"].startswith("still rejected")


@pytest.mark.slow
def test_an_answer_the_rule_would_publish_is_not_escalated(make_kb):
    half = "Backups are kept for 35 days [1]. Backups are stored in 3 regions [1]."
    with ScriptedServer([{"text": half}] * 3) as server:
        kb = make_kb(server)
        answer, _ = ask(kb)
        calls = len(server.requests)
    assert calls == 3 and not escalations(kb, answer)
