"""A small model's words for a question the documents did not answer as asked (docqa.answer.requery): after an
abstention, the question translated into the documents' other language, or the terms the documentation would use,
searched once more; the extractive answerer over what they find answers when it does not abstain.  A real knowledge
base (SQLite, the hash embedder) and the scripted OpenAI-compatible server on loopback at the LLM boundary, serving
a model named like the local 1.5B so that it counts as small."""

from __future__ import annotations

import pytest

from docqa.answer import choose, requery
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

SMALL = "qwen2.5-coder-1.5b"
OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.
A restore takes about twenty minutes for a database of 10 GB.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
Old keys stop working one week after the rotation.
"""


@pytest.fixture(autouse=True)
def asked(monkeypatch):
    """On (off as shipped: no dev gain measured with the 1.5B; the behaviour is what is tested here)."""
    monkeypatch.setattr(requery, "ASK", True)


@pytest.fixture
def make(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops.md").write_text(OPS, encoding="utf-8")
    opened: list[KnowledgeBase] = []

    def make(url: str | None) -> KnowledgeBase:
        llm = ({"provider": "openai", "base_url": url, "model": SMALL, "timeout": 120, "max_retries": 0}
               if url else {"provider": "none"})
        kb = KnowledgeBase(Settings(kb=str(tmp_path / "kb.db"), answer={"choose_sentence": True}, llm=llm), embedder=embedder)
        if not opened:
            kb.add([tmp_path / "docs"])
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()


@pytest.mark.parametrize("reply, translated, expected", [
    ("How often is the database backed up?", True, "How often is the database backed up?"),
    ("Query: `acmectl keys rotate`", False, "Q? acmectl keys rotate"),  # a label and the quotes around it go
    ("“du --max-depth 目录层级”\nThis query uses the option names.", False, "Q? du --max-depth 目录层级"),  # the first line
    ("查询：取消 shutdown 命令", False, "Q? 取消 shutdown 命令"),
    ("\n\n  Translation: 数据库多久备份一次？", True, "数据库多久备份一次？"),
    ("Q?", False, None),  # nothing new
    ("", False, None),
    ("`", False, None),
    ("x " * 200, False, None),  # prose, not a query
])
def test_the_reply_is_read_as_a_query(reply, translated, expected):
    assert requery.query("Q?", reply, translated) == expected


@pytest.mark.parametrize("question, hits, expected", [
    ("zh", ["zh", "zh", "en"], "en"),  # a mixed collection: one of the best passages is English
    ("en", ["zh"], "zh"),
    ("zh", ["zh"] * 5, "zh"),  # all in the question's language: the documentation's own terms, in it
    ("en", ["en"] * 5 + ["zh"], "en"),  # only the best five are looked at
    ("en", [], "en"),
])
def test_the_query_is_written_in_the_documents_other_language_when_they_use_it(question, hits, expected):
    assert requery.documents_language(question, hits) == expected
    assert requery.translates(question, expected) is (expected != question)


def test_a_question_in_the_other_language_is_translated_and_answered(make):
    """A Chinese question over an English page: nothing matches its words, the extractive answerer abstains; the
    model translates it, the translation is searched and answered from, and the answer quotes the English page."""
    question = "数据库多久备份一次？"
    assert not make(None).ask(question).answerable
    with ScriptedServer([{"text": "How often is the database backed up?"}, {"text": "1"}]) as server:
        answer = make(server.base_url).ask(question)
    assert answer.answerable and "The database is backed up every 6 hours" in answer.answer
    assert answer.citations and answer.citations[0].quote.startswith("The database is backed up")
    asked = server.requests[0]
    assert asked["temperature"] == 0.0 and asked["max_tokens"] == requery.MAX_TOKENS
    assert "into English" in asked["messages"][0]["content"] and question in asked["messages"][-1]["content"]
    assert "or NONE:" in server.requests[1]["messages"][-1]["content"]  # then the chooser, over the new sentences
    assert any("How often is the database backed up?" in note for note in answer.notes)
    assert answer.language == "zh"


def test_a_paraphrase_is_searched_with_the_documentations_terms(make):
    """The question's words are not the page's ("fresh credentials"): the model's terms are searched with it."""
    question = "Which command gives us fresh credentials?"
    assert not make(None).ask(question).answerable
    with ScriptedServer([{"text": "acmectl keys rotate API keys"}, {"text": "1"}]) as server:
        answer = make(server.base_url).ask(question)
    assert answer.answerable and answer.answer.startswith("API keys are rotated every 90 days with `acmectl keys rotate`.")
    prompt = server.requests[0]["messages"]
    assert "search queries" in prompt[0]["content"] and prompt[-1]["content"].endswith("The query, in English:")


@pytest.mark.parametrize("chosen, answered", [
    ({"text": "1"}, True),  # the chooser backs the best sentence the new search found
    ({"text": "NONE"}, False),  # it backs none: what the model's words found is not published on the evidence alone
    ({"text": "1", "top": {"1": -2.0, "2": -0.2}}, False),  # the best sentence with too small a share of its choice
])
def test_what_the_models_words_find_is_published_only_when_the_model_backs_it(make, chosen, answered):
    question = "数据库多久备份一次？"
    with ScriptedServer([{"text": "How often is the database backed up?"}, chosen]) as server:
        answer = make(server.base_url).ask(question)
    assert answer.answerable is answered and len(server.requests) == 2
    assert answer.retrieval.acceptance.outcome == ("model" if answered else "not_found")
    if answered:
        assert "The database is backed up every 6 hours" in answer.answer and "chose the best-ranked sentence" in answer.retrieval.acceptance.reason


def test_the_abstention_stands_when_the_models_words_find_nothing_better(make, monkeypatch):
    """Terms that find nothing better: the first abstention stands, its evidence is the one recorded, and (under
    the chooser's rescue floor) no other call is made."""
    monkeypatch.setattr(choose, "RESCUE_FLOOR", 1.0)
    question = "Which command gives us fresh credentials?"
    plain = make(None).ask(question)
    with ScriptedServer([{"text": "weather forecast tomorrow"}, {"text": "1"}]) as server:
        answer = make(server.base_url).ask(question)
    assert not answer.answerable and len(server.requests) == 1
    assert answer.retrieval.evidence == plain.retrieval.evidence
    assert not any("searched again" in note for note in answer.notes)


@pytest.mark.parametrize("question, answered", [
    ("How often is the database backed up?", True),
    ("What is the capital of France? Who founded the city of Rome?", False),
    ("What are the steps to migrate the cluster to a new region?", False),  # a procedure: the chooser could not back it
])
def test_no_words_are_asked_for_an_answered_question_or_one_of_several_parts(make, question, answered):
    """An answer the extractive answerer gives: only the chooser is asked; a question of several parts (an
    abstention) is answered part by part (docqa.answer.parts) or not at all, not searched again as a whole; nor is
    a procedure, whose steps the extractive answerer quotes (the chooser is not asked about them)."""
    assert make(None).ask(question).answerable is answered
    with ScriptedServer([{"text": "1"}, {"text": "1"}]) as server:
        make(server.base_url).ask(question)
    assert all("search" not in r["messages"][0]["content"] for r in server.requests)
    assert len(server.requests) == answered


def test_off_nothing_is_asked_after_an_abstention(make, monkeypatch):
    monkeypatch.setattr(requery, "ASK", False)
    monkeypatch.setattr(choose, "RESCUE_FLOOR", 1.0)
    with ScriptedServer([{"text": "How often is the database backed up?"}]) as server:
        answer = make(server.base_url).ask("数据库多久备份一次？")
    assert not answer.answerable and server.requests == []
