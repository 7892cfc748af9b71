"""Follow-ups that hold with no model: the condensed question keeps the previous turn's subject."""

from __future__ import annotations

import pytest

from docqa.answer.route import condense_heuristic, condensed_reply, previous_subject
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## Logs

Logs are kept for 14 days in the archive bucket.
"""


@pytest.mark.parametrize("question, answer, subject", [
    ("How long are backups kept?", "", "backups"),
    ("How often is the database backed up?", "", "the database"),
    ("How often does the scheduler run?", "", "the scheduler"),
    ("Where is the cache stored?", "", "the cache"),
    ("What is the default cache directory?", "", "the default cache directory"),
    ("黑尾前肛鳗分布在什么地区？", "黑尾前肛鳗分布于西太平洋区。", "黑尾前肛鳗"),
    ("Who invented it?", "", None),
])
def test_previous_subject(question, answer, subject):
    assert previous_subject(question, answer) == subject


@pytest.mark.parametrize("follow, previous, standalone", [
    ("and how often are they made?", "How long are backups kept?", "and how often are backups made?"),
    ("what about logs?", "How long are backups kept?", "How long are logs kept?"),
    ("它们多久做一次？", "备份保留多久？", "备份多久做一次？"),
    ("那日志呢？", "备份保留多久？", "日志保留多久？"),
])
def test_condensed_follow_up_keeps_the_subject(follow, previous, standalone):
    assert condense_heuristic(follow, {"question": previous, "answer_summary": ""}) == standalone


def test_a_follow_up_with_a_pronoun_is_answered_without_a_model(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops.md").write_text(OPS, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"})
    with KnowledgeBase(settings, embedder=embedder) as kb:
        kb.add([tmp_path / "docs"])
        first = kb.ask("How long are backups kept?")
        second = kb.ask("and how often are they backed up?", session_id=first.session_id)
        logs = kb.ask("what about logs?", session_id=second.session_id)
        standalone = kb.ask("How often are backups backed up?")
    assert "35 days" in first.answer
    assert second.retrieval.query == "and how often are backups backed up?"
    assert second.answerable and "every 6 hours" in second.answer
    assert second.answer == standalone.answer  # the follow-up holds: as good as the standalone question
    assert logs.retrieval.query == "and how often are logs backed up?"


def test_a_conversation_the_caller_keeps_is_condensed_as_a_session_is(tmp_path, embedder):
    """An OpenAI-compatible client sends the conversation with each question instead of a session id."""
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops.md").write_text(OPS, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"})
    with KnowledgeBase(settings, embedder=embedder) as kb:
        kb.add([tmp_path / "docs"])
        first = kb.ask("How long are backups kept?")
        in_session = kb.ask("and how often are they backed up?", session_id=first.session_id)
        given = kb.ask("and how often are they backed up?", history=[("How long are backups kept?", first.answer)])
        alone = kb.ask("and how often are they backed up?")
    assert given.retrieval.query == in_session.retrieval.query == "and how often are backups backed up?"
    assert given.answer == in_session.answer and given.session_id != first.session_id  # a new session: nothing kept
    assert alone.retrieval.query == "and how often are they backed up?"  # without the history: no subject


@pytest.mark.parametrize("reply, follow, previous, used", [
    ("How often are backups made?", "and how often are they made?", "How long are backups kept?", True),
    ("Who had it tried to defeat?", "Who had it tried to defeat?", "Why did Toghun Temur dismiss Toghtogha?", False),
    ('When was the Latin version of the word "it" first recorded?', "When was the Latin version of the word it first recorded?",
     "What is the original meaning of the word Norman?", False),
    ("暴鲤龙的属性是什么？", "它的属性是什么？", "暴鲤龙是根据什么设计的？", True),
    ("它的属性是什么？", "它的属性是什么？", "暴鲤龙是根据什么设计的？", False),
    ("How long are logs kept?", "what about logs?", "How long are backups kept?", True),
    ("How long are the backups kept?", "How long are they kept?", "How often is the database backed up?", True),
    ("How long are the snapshots kept?", "How long are they kept?", "How often is the database backed up?", True),
    ("What type of it machine are BQP and QMA examples of?", "BQP and QMA are examples of what type of it machine?",
     "What are three examples of complexity classes associated with probabilistic Turing machines?", False),
    ("What is the capital of France?", "What is the capital of France?", "How long are backups kept?", True),  # no reference
    ("", "and how often are they made?", "How long are backups kept?", False),
    ("x" * 400, "and how often?", "How long are backups kept?", False),
])
def test_a_model_condensed_question_is_used_only_when_it_resolves_the_reference(reply, follow, previous, used):
    standalone = condensed_reply(reply, follow, {"question": previous, "answer_summary": ""})
    assert (standalone is not None) == used
    if used:
        assert standalone == reply
