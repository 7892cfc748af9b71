"""The acceptance rule (docqa.answer.accept): a model answer is published only when the checks
verify enough of it, in the question's language; else the extractive answer over the same passages,
or not found.  A real knowledge base (SQLite; the hash embedder unless a test needs the bundled model) and
the scripted chat model of docqa.testing."""

from __future__ import annotations

import pytest

from docqa.answer.accept import EXTRACTIVE, MODEL, NOT_FOUND, decide, quotation_note, wrong_language
from docqa.events import Accepting
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import ScriptedChat
from docqa.types import Claim


OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""
ZH = """# 运维手册

## 备份

数据库每 6 小时备份一次，备份保留 35 天。

## 告警

磁盘使用率超过 85% 时发送告警。
"""


@pytest.fixture
def kb_factory(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops.md").write_text(OPS, encoding="utf-8")
    (tmp_path / "docs" / "运维.md").write_text(ZH, encoding="utf-8")
    opened = []

    def make(model: ScriptedChat | None = None, name: str = "scripted", **answer) -> KnowledgeBase:
        settings = Settings(kb=str(tmp_path / "kb.db"), answer={"review_rounds": 0, **answer},
                            llm={"provider": "openai" if model else "none", "base_url": "http://127.0.0.1:9/v1" if model else "",
                                 "timeout": 3, "max_retries": 0})
        if model is not None:
            model.name = name  # the name tells the model's size (docqa.llm.capability)
        kb = KnowledgeBase(settings, embedder=embedder, chat_model=model)
        if not opened:
            kb.add([tmp_path / "docs"])
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()


def ask(kb, question, **kw):
    events = []
    answer = kb.ask(question, on_event=events.append, **kw)
    return answer, events


def accepting(kb, answer) -> dict:
    return next(t for t in kb.log.run(answer.run_id).trace if t.get("stage") == "accepting")


def test_a_verified_answer_is_published(kb_factory):
    with ScriptedChat([{"text": "Backups are kept for 35 days [1]."}, {"text": "VERIFIED"}]) as server:
        kb = kb_factory(server)
        answer, events = ask(kb, "How long are backups kept?")
    assert answer.mode == "pipeline" and answer.answer == "Backups are kept for 35 days [1]."
    assert answer.retrieval.acceptance.to_dict() == {"outcome": MODEL, "verified": 1, "claims": 1,
                                              "reason": "the checks verified 1 of its 1 claims"}
    assert any(isinstance(e, Accepting) for e in events)


def test_a_minority_verified_answer_falls_back_to_the_extractive_answer(kb_factory):
    made_up = ("Backups are kept for 35 days [1]. Backups are encrypted with AES-512 [1]. "
               "Backups are copied to 4 regions [1].")
    with ScriptedChat([{"text": made_up}]) as server:
        kb = kb_factory(server)
        answer, _ = ask(kb, "How long are backups kept?")
        calls = len(server.requests)
    assert calls == 1  # the facts fail, so the model's own check is not asked
    assert answer.mode == "extractive" and answer.answerable and "35 days" in answer.answer
    assert "AES" not in answer.answer and "regions" not in answer.answer and "[unverified]" not in answer.answer
    assert answer.retrieval.acceptance.outcome == EXTRACTIVE
    assert any("not published" in n and "1 of its 3 claims" in n for n in answer.notes)
    record = accepting(kb, answer)
    assert record["attempt"] == made_up and record["before"].count("[unverified]") == 2


def test_an_invented_answer_over_weak_evidence_is_not_found(kb_factory):
    with ScriptedChat([{"text": "Lima is the capital of Peru [1]."}]) as server:
        kb = kb_factory(server)
        answer, _ = ask(kb, "What is the capital of Peru?")
    assert not answer.answerable and "Lima" not in answer.answer
    assert answer.answer.startswith("The documents do not contain an answer")
    assert answer.retrieval.acceptance.outcome == NOT_FOUND


def test_the_model_saying_not_found_does_not_hide_good_evidence(kb_factory):
    with ScriptedChat([{"text": "NOT_FOUND"}]) as server:
        answer, _ = ask(kb_factory(server), "How long are backups kept?")
    assert answer.answerable and answer.mode == "extractive" and "35 days" in answer.answer


def test_chatter_questions_and_lone_markers_are_never_published(kb_factory):
    text = ("I'll try a shorter pattern. How long are backups kept? Backups are kept for 35 days [1]. [2]\n"
            "The query \"retention\" did not match any lines.")
    with ScriptedChat([{"text": text}, {"text": "VERIFIED"}]) as server:
        kb = kb_factory(server)
        answer, _ = ask(kb, "How long are backups kept?")
    assert answer.mode == "pipeline" and answer.answer == "Backups are kept for 35 days [1]."
    assert len(accepting(kb, answer)["dropped_sentences"]) == 3


def test_an_answer_in_the_wrong_language_is_asked_again_once(kb_factory):
    with ScriptedChat([{"text": "Backups are kept for 35 days [1]."}, {"text": "备份保留 35 天 [1]。"},
                         {"text": "VERIFIED"}]) as server:
        answer, _ = ask(kb_factory(server), "备份保留多久？")
        retry = server.requests[1]["messages"][-1]["content"]
    assert "not in Simplified Chinese" in retry
    assert answer.mode == "pipeline" and answer.answer.startswith("备份保留 35 天") and answer.language == "zh"


def test_a_value_answers_a_question_in_any_language(kb_factory):
    with ScriptedChat([{"text": "35 days [1]"}, {"text": "VERIFIED"}]) as server:
        answer, _ = ask(kb_factory(server), "备份保留多久？")
        prompts = [r["messages"][-1]["content"] for r in server.requests]
    assert not any("not in Simplified Chinese" in p for p in prompts)  # not asked again for Chinese
    assert answer.mode == "pipeline" and answer.answer.startswith("35 days [1]")
    assert wrong_language("Backups are kept for 35 days.", "zh") and not wrong_language("/var/log/unattended-upgrades/", "zh")


def test_still_the_wrong_language_falls_back_to_the_extractive_answer(kb_factory):
    with ScriptedChat([{"text": "Backups are kept for 35 days [1]."}] * 2) as server:
        answer, _ = ask(kb_factory(server), "备份保留多久？")
        calls = len(server.requests)
    assert calls == 2 and answer.mode == "extractive" and "35" in answer.answer
    assert answer.retrieval.acceptance.reason == "the model did not answer in zh"


def test_a_chinese_answer_from_an_english_passage_is_verified_across_languages(kb_factory, local_embedder):
    with ScriptedChat([{"text": "API 密钥每 90 天轮换一次 [1]。"}, {"text": "VERIFIED"}]) as server:
        kb = kb_factory(server)
        answer, _ = ask(kb, "API 密钥多久轮换一次？")
    assert answer.mode == "pipeline" and answer.answer.startswith("API 密钥每 90 天轮换一次"), answer.notes
    assert answer.citations and answer.citations[0].path.endswith("ops.md") and "90 days" in answer.citations[0].quote


def test_without_a_model_a_quotation_in_the_other_language_says_so(kb_factory, local_embedder):
    answer, _ = ask(kb_factory(), "API 密钥多久轮换一次？")
    assert answer.answerable and "90 days" in answer.answer
    assert answer.answer.splitlines()[-1] == quotation_note("zh", "API keys are rotated")


def test_the_rule_itself():
    ok, bad = Claim("a", 0, 1, supported=True), Claim("b", 0, 1, supported=False)
    rule = dict(said_not_found=False, weak_evidence=False, text="Backups are kept.", language="en", min_share=0.5)
    assert decide([ok, bad], **rule).outcome == MODEL
    assert decide([ok, bad, bad], **rule).outcome == EXTRACTIVE
    assert decide([], **rule).outcome == EXTRACTIVE
    assert decide([ok], **{**rule, "weak_evidence": True}).outcome == NOT_FOUND
    assert decide([ok], **{**rule, "text": "备份保留三十五天。"}).outcome == EXTRACTIVE
    assert decide([bad], **{**rule, "min_share": 0}).outcome == MODEL
    assert quotation_note("en", "Backups are kept.") is None and quotation_note("en", "备份保留三十五天。")


def test_a_true_fact_beside_the_question_is_not_an_answer(kb_factory):
    # "every 6 hours" is in the documents, but the passage that answers "how long are backups kept?" is another
    with ScriptedChat([{"text": "The database is backed up every 6 hours [1]."}]) as server:
        answer, _ = ask(kb_factory(server), "How long are backups kept?")
    assert answer.mode == "extractive" and "35 days" in answer.answer
    assert answer.retrieval.acceptance.verified == 0
