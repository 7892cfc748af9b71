"""The answering pipeline end to end with a REAL small model (Qwen2.5-Coder-1.5B on llama.cpp, on
loopback): generate → cite → check, not-found, Chinese, a follow-up.  Skipped with the install
command when the model is not installed (docqa model install).

A 1.5B model is not always right, so the assertions are about what the pipeline guarantees
whatever the model writes: citations are exact spans of the documents, unsupported claims are
marked, a not-found answer says so in the question's language.
"""

from __future__ import annotations

import re

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings

pytestmark = pytest.mark.real_llm
CJK = re.compile(r"[\u4e00-\u9fff]")

OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""
ZH = """# 运维手册

## 告警

磁盘使用率超过 85% 时发送告警，值班人员需在 15 分钟内响应。
"""


@pytest.fixture(scope="module")
def kb(real_llm, tmp_path_factory, local_embedder):
    root = tmp_path_factory.mktemp("real")
    (root / "ops.md").write_text(OPS, encoding="utf-8")
    (root / "运维.md").write_text(ZH, encoding="utf-8")
    settings = Settings(kb=str(root / "kb.db"), answer={"top_k": 3},
                        llm={"provider": "openai", "base_url": real_llm, "model": "qwen2.5-coder-1.5b",
                             "context_window": 4096, "max_tokens": 160, "temperature": 0.0, "timeout": 300})
    with KnowledgeBase(settings, embedder=local_embedder) as kb:
        kb.add([root])
        yield kb


def assert_exact_citations(kb, answer):
    for c in answer.citations:
        assert kb.documents.text(c.document_id)[c.char_start:c.char_end] == c.quote


def test_pipeline_answers_with_exact_citations(kb):
    answer = kb.ask("How long are backups kept?")
    assert answer.status == "SUCCESS" and answer.mode == "pipeline"
    assert answer.answerable and "35" in answer.answer
    assert answer.citations and any("35 days" in c.quote for c in answer.citations)
    assert_exact_citations(kb, answer)
    assert answer.verification.status in ("VERIFIED", "PARTIAL") and answer.verification.checked_claims >= 1
    assert answer.usage["model_calls"] >= 1 and answer.usage["prompt_tokens"] > 0  # a small model: no self-check call
    run = kb.log.run(answer.run_id)
    assert [t["stage"] for t in run.trace if "model_call" in t][:1] == ["generating"]  # a small model: no "checking" call


def test_chinese_question_gets_a_chinese_answer(kb):
    answer = kb.ask("磁盘使用率超过多少时发送告警？")
    assert answer.status == "SUCCESS" and CJK.search(answer.answer)
    if answer.answerable:
        assert "85" in answer.answer and any("85%" in c.quote for c in answer.citations)
        assert_exact_citations(kb, answer)


def test_question_the_documents_do_not_answer(kb):
    answer = kb.ask("What is the office Wi-Fi password?")
    assert answer.status == "SUCCESS"
    assert not answer.answerable and answer.answer.startswith("The documents do not contain an answer")


def test_follow_up_is_condensed(kb):
    first = kb.ask("How often is the database backed up?")
    second = kb.ask("How long are they kept?", session_id=first.session_id)
    query = second.retrieval.query.lower()
    assert "backup" in query or "backed up" in query or "database" in query
    assert second.answerable and "35" in second.answer


@pytest.mark.timeout(900)  # several 1.5B turns on 2 CPU cores; a reply sent back once (skills' nudge) adds one
def test_agent_mode_explores_and_answers(kb):
    """The 1.5B model writes its tool calls as JSON text; the loop reads them, runs the tools and
    the answer goes through the same citer and checker."""
    answer = kb.ask("Compare how long backups are kept with how often API keys are rotated.", mode="agent")
    assert answer.status in ("SUCCESS", "FALLBACK") and answer.mode in ("agent", "pipeline", "extractive")
    tools = [t["name"] for t in kb.log.run(answer.run_id).trace if t.get("stage") == "tool"]
    if tools:  # the calls it wrote as JSON text were read and run
        assert "search_docs" in tools or "grep_docs" in tools or "fetch_doc" in tools
    else:  # it called no tool (the 1.5B does not call them reliably): the agent searched for it itself
        assert answer.retrieval.hits, "an agent that gathered nothing must search before it answers"
    assert_exact_citations(kb, answer)
    if answer.answerable:
        assert answer.citations
