"""The typed results: `Answer`'s keyword-only fields and `Retrieval`, whose `to_dict()` is the record the run
log, REST, MCP and the trust harness read (the keys a dict carried before it was typed)."""

from __future__ import annotations

import json

import pytest

from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import HashEmbedder
from docqa.types import FAILED, Acceptance, Answer, Retrieval


def test_answer_fields_after_the_question_are_keyword_only():
    with pytest.raises(TypeError):
        Answer("q", "", False, "pipeline")
    failed = Answer("q", answer="", answerable=False, mode="pipeline", status=FAILED, error="no index")
    assert failed.to_dict()["retrieval"] == {} and failed.retrieval.query is None


def test_a_retrieval_record_keeps_the_keys_that_were_set():
    retrieval = Retrieval(query="How long are backups kept?", mode="hybrid", low_relevance=False, threshold=0.5,
                          collection=None, hits=[{"n": 1, "path": "ops.md"}], dropped=[], second_look=False,
                          acceptance=Acceptance("model", 1, 1, "the checks verified 1 of its 1 claims"))
    assert retrieval.to_dict() == {
        "query": "How long are backups kept?", "mode": "hybrid", "low_relevance": False, "threshold": 0.5,
        "collection": None, "hits": [{"n": 1, "path": "ops.md"}], "dropped": [], "second_look": False,
        "acceptance": {"outcome": "model", "verified": 1, "claims": 1, "reason": "the checks verified 1 of its 1 claims"}}
    assert Retrieval(documents=3).to_dict() == {"query": None, "documents": 3}  # a catalog answer


def test_a_stored_record_reads_back_and_unknown_keys_are_left_out():
    stored = {"query": "q", "mode": "agent", "collection": "ops", "hits": [], "dropped": [], "low_relevance": False,
              "acceptance": {"outcome": "not_found", "verified": 0, "claims": 0, "reason": "r"},
              "escalation": {"kind": "retrieval", "action": "keyword search"}, "from_a_later_version": 1}
    retrieval = Retrieval.from_dict(json.loads(json.dumps(stored)))
    assert retrieval.acceptance == Acceptance("not_found", 0, 0, "r") and retrieval.escalation == stored["escalation"]
    assert retrieval.to_dict() == {k: v for k, v in stored.items() if k != "from_a_later_version"}
    assert Retrieval.from_dict(None) == Retrieval()


def test_the_run_record_holds_the_answers_retrieval(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text("# Operations\n\nDatabase backups are kept for 30 days.\n", encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"})
    with KnowledgeBase(settings, embedder=HashEmbedder(), create=True) as kb:
        kb.add([docs])
        answer = kb.ask("How long are database backups kept?")
        stored = kb.log.run(answer.run_id).result["retrieval"]
    assert stored == answer.retrieval.to_dict() and Retrieval.from_dict(stored) == answer.retrieval
    assert stored["query"] == "How long are database backups kept?" and stored["hits"][0]["path"].endswith("ops.md")
    assert {"mode", "low_relevance", "threshold", "collection", "dropped", "evidence"} <= set(stored)
