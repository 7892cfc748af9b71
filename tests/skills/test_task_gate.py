"""The acceptance rule and task questions a skill fits ("Summarise the documents", "What changed
between v1 and v2?"): no single evidence sentence answers those, so the evidence gate does not
answer them "not found" (docqa.answer.accept.gated); their claims are still judged one by one.
The scripted chat model (docqa.testing), real knowledge base, the acceptance rule on (its default)."""

from __future__ import annotations

import pytest

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
TASK = "Summarise the documents in the folder."
FAIR = "Both documents explain how to rotate API keys with `acmectl keys rotate` on the admin host [1]."
MADE_UP = ("Both documents explain how to rotate API keys with `acmectl keys rotate` on the admin host [1]. "
           "Keys are rotated every 7 days by a cron job [1]. The rotation is audited by the security team in 2024 [1].")


def call(tool: str, **arguments) -> dict:
    return {"tool_calls": [{"name": tool, "arguments": arguments}]}


@pytest.fixture
def make(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops-v1.md").write_text(OPS, encoding="utf-8")
    (tmp_path / "docs" / "ops-v2.md").write_text(OPS_V2, encoding="utf-8")
    made = []

    def factory(server: ScriptedChat, skills: bool = True) -> KnowledgeBase:
        settings = Settings(kb=str(tmp_path / "kb.db"), agent={"check": True}, skills={"enabled": skills},
                            answer={"review_rounds": 0},
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


def script(text: str) -> list[dict]:
    return [call("search_docs", query="rotate API keys"), call("answer", text=text), {"text": "VERIFIED"}]


def test_a_task_a_skill_fits_is_not_answered_not_found_by_the_evidence_gate(make):
    with ScriptedChat(script(FAIR)) as server:
        answer = make(server).ask(TASK, mode="agent")
    assert [s["name"] for s in answer.retrieval.skills][0] == "summarise-collection"
    assert answer.retrieval.acceptance.outcome == "model", answer.retrieval.acceptance
    assert answer.answerable and "acmectl keys rotate" in answer.answer and answer.citations


def test_without_skills_the_same_question_is_gated(make):
    with ScriptedChat(script(FAIR)) as server:
        answer = make(server, skills=False).ask(TASK, mode="agent")
    assert answer.retrieval.acceptance.outcome == "not_found"  # one evidence sentence must answer it
    assert not answer.answerable


def test_a_task_answer_is_still_judged_claim_by_claim(make):
    with ScriptedChat(script(MADE_UP)) as server:
        answer = make(server).ask(TASK, mode="agent")
    acceptance = answer.retrieval.acceptance
    assert acceptance.outcome != "model" and acceptance.verified == 1 and acceptance.claims == 3
    assert "7 days" not in answer.answer and "2024" not in answer.answer
