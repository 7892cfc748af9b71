"""Short answers from a small model (docqa.answer.short): one short call for the words that answer the question,
published leading the extractive answer only when they stand in a grounded sentence of the passages.  A real
knowledge base (SQLite, the hash embedder); the scripted chat model of docqa.testing, named like the local 1.5B
model so that it counts as small."""

from __future__ import annotations

import pytest

from docqa.answer import short
from docqa.answer.grounding import Question
from docqa.answer.citer import citation_for, number_by_first_use
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import ScriptedChat

from answer.hits import hit_in, sources  # tests/ is on sys.path (rootdir conftest)

SMALL = "qwen2.5-coder-1.5b"
OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""


@pytest.fixture
def make(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops.md").write_text(OPS, encoding="utf-8")
    opened: list[KnowledgeBase] = []

    def make(model: ScriptedChat, **answer) -> KnowledgeBase:
        answer = {"choose_sentence": False, **answer}  # the short-answer path; the chooser is tests/answer/test_choose.py
        settings = Settings(kb=str(tmp_path / "kb.db"), answer=answer, llm={"provider": "openai", "base_url": "http://127.0.0.1:9/v1"})
        kb = KnowledgeBase(settings, embedder=embedder, chat_model=model)
        if not opened:
            kb.add([tmp_path / "docs"])
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()


@pytest.mark.parametrize("reply, n, words, not_found", [
    ("1 | every 6 hours", 1, "every 6 hours", False),
    ("[2] | `/var/log/unattended-upgrades/`", 2, "/var/log/unattended-upgrades/", False),
    ("Answer: 1 | 35 days [1].", 1, "35 days", False),
    ("3：10.0.2.2。", 3, "10.0.2.2", False),
    ("Source 1 | “prohibit-password”", 1, "prohibit-password", False),
    ("NOT_FOUND", 0, "", True),
    ("The database is backed up every 6 hours [1].", 0, "", False),  # a sentence, not the line asked for
    ("", 0, "", False),
])
def test_the_reply_is_read_as_a_source_and_its_words(reply, n, words, not_found):
    got = short.read(reply)
    assert (got.n, got.words, got.said_not_found) == (n, words, not_found)


def test_the_models_words_lead_the_extractive_answer(make):
    model = ScriptedChat(["1 | every 6 hours"], name=SMALL)
    answer = make(model).ask("How often is the database backed up?")
    assert answer.answerable and answer.mode == "pipeline"
    assert answer.answer.startswith("every 6 hours [1]\n\n")
    assert "The database is backed up every 6 hours to object storage. [1]" in answer.answer
    assert answer.retrieval.acceptance.outcome == "model"
    first = answer.citations[0]
    assert first.quote.strip() == "The database is backed up every 6 hours to object storage."
    assert answer.claims[0].text == "every 6 hours" and answer.claims[0].citations[0] is first
    assert len(model.calls) == 1 and model.calls[0].options["max_tokens"] == short.MAX_TOKENS
    assert "shortest words" in model.calls[0].prompt and "every 6 hours" in model.calls[0].prompt
    assert answer.verification.status == "VERIFIED"


def test_words_not_in_the_passages_are_never_published(make):
    model = ScriptedChat(["1 | every 8 hours"], name=SMALL)
    answer = make(model).ask("How often is the database backed up?")
    assert answer.answerable and "8 hours" not in answer.answer and "every 6 hours" in answer.answer
    assert answer.mode == "extractive" and answer.retrieval.acceptance.outcome == "extractive"
    assert "not in the passages" in answer.retrieval.acceptance.reason
    assert len(model.calls) == 1


@pytest.mark.parametrize("reply, reason", [
    ("NOT_FOUND", "found no answer"),
    ("1 | The database is backed up", "repeat the question"),
    ("I think the database is backed up often.", "could not be read"),
])
def test_otherwise_the_extractive_answer_is_published(make, reply, reason):
    model = ScriptedChat([reply], name=SMALL)
    answer = make(model).ask("How often is the database backed up?")
    assert answer.answerable and answer.mode == "extractive" and "NOT_FOUND" not in answer.answer
    assert "every 6 hours" in answer.answer and reason in answer.retrieval.acceptance.reason
    assert any("short answer was not used" in note for note in answer.notes)


@pytest.mark.parametrize("reply, question, wanted", [
    ("1 | 35 days", "How often is the database backed up?", "a frequency (how often)"),  # the neighbour sentence's value
    ("1 | every 6 hours", "How long are backups kept?", "a duration (how long)"),
])
def test_words_of_another_kind_than_asked_never_lead(make, reply, question, wanted):
    """The words stand in a sentence of the passages (the extractive answer may quote it beside the right one), but
    they are not what the question asks for: the extractive answer is published, with no lead."""
    model = ScriptedChat([reply], name=SMALL)
    answer = make(model).ask(question)
    words = reply.split("| ")[1]
    assert answer.answerable and answer.mode == "extractive" and not answer.answer.startswith(words)
    assert answer.retrieval.acceptance.outcome == "extractive" and wanted in answer.retrieval.acceptance.reason
    assert len(model.calls) == 1


ZH_OPS = "## 备份\n\n数据库每 6 小时备份一次，备份存放在对象存储中。备份保留 35 天。\n"


@pytest.mark.parametrize("reply, question, outcome", [
    ("1 | 35 天", "数据库多久备份一次？", short.EXTRACTIVE),  # the neighbour sentence's value for "how often"
    ("1 | 每 6 小时", "数据库多久备份一次？", short.MODEL),
    ("1 | 每 6 小时", "备份保留多长时间？", short.EXTRACTIVE),
    ("1 | 35 天", "备份保留多长时间？", short.MODEL),
])
def test_chinese_words_of_another_kind_than_asked_never_lead(reply, question, outcome):
    """Both sentences are quoted by the extractive answer (no grounding needed): only the kind decides."""
    pool = sources(hit_in(ZH_OPS, 0, len(ZH_OPS), chunk_id="z"))
    verdict = short.judge(short.read(reply), pool, Question(question, [], {}), [("z", 0, len(ZH_OPS))])
    assert verdict.outcome == outcome
    assert ("what the question asks for" in verdict.reason) is (outcome == short.EXTRACTIVE)


def test_a_misnumbered_source_is_found_by_its_words(make):
    model = ScriptedChat(["2 | 90 days"], name=SMALL)
    answer = make(model).ask("How often are API keys rotated?")
    assert answer.answer.startswith("90 days [1]") and answer.retrieval.acceptance.outcome == "model"
    assert "every 90 days" in answer.citations[0].quote


def test_a_large_model_and_the_setting_off_write_cited_answers(make):
    for model, settings in ((ScriptedChat(["The database is backed up every 6 hours [1].", "VERIFIED"], name="scripted"), {}),
                            (ScriptedChat(["The database is backed up every 6 hours [1]."], name=SMALL), {"short_answers": False})):
        answer = make(model, **settings).ask("How often is the database backed up?")
        assert "cite its source number" in model.calls[0].prompt and "shortest words" not in model.calls[0].prompt
        assert answer.answer.startswith("The database is backed up every 6 hours")


def test_the_words_lead_whatever_number_their_source_has():
    """The sentence that holds the words may be any source of the passages (here the third): the words and the
    quoted sentence both carry the number it gets when the answer is numbered by first use, 1."""
    hits = [hit_in(OPS, OPS.index("## Backups"), OPS.index("## API"), chunk_id="b"),
            hit_in(OPS, 0, OPS.index("## Backups"), chunk_id="t"), hit_in(OPS, OPS.index("## API"), len(OPS), chunk_id="k")]
    pool = sources(*hits)
    found = short.locate(short.Reply(3, "`acmectl keys rotate`".strip("`")), pool)
    assert found is not None and found.words == "acmectl keys rotate"
    other = citation_for(1, hits[0], 0, 20, "en", pool.paths)
    text, claims = short.compose(found, 3, [other], "en", pool.paths)
    text = number_by_first_use(text, claims)
    assert text.startswith("acmectl keys rotate [1]\n\nAPI keys are rotated every 90 days with `acmectl keys rotate`. [1]")
    assert text.endswith("[2]") and [c.citations[0].n for c in claims] == [1, 1, 2]


@pytest.mark.parametrize("words, question, echoed", [
    ("database backed up", "How often is the database backed up?", True),
    ("yes", "Is the database backed up?", True),
    ("every 6 hours", "How often is the database backed up?", False),
    ("~", "备份文件名后面会加什么符号？", False),  # a symbol answers
    ("5", "How many copies are kept?", False),
])
def test_words_that_only_repeat_the_question_answer_nothing(words, question, echoed):
    assert short.echo(words, question) is echoed


@pytest.mark.parametrize("question, steps", [
    ("How do I rotate the API keys?", True),
    ("要把主服务器从 Bullseye 升级到 Bookworm，大致要按什么顺序执行哪些命令？", True),
    ("In what order are the hooks run?", True),
    ("How often are API keys rotated?", False),
    ("Which option must be set in order to keep logs?", False),
])
def test_a_procedure_is_not_asked_for_words(question, steps):
    assert short.asks_for_steps(question) is steps


def test_a_procedure_question_costs_no_model_call(make):
    model = ScriptedChat(["1 | acmectl keys rotate"], name=SMALL)
    answer = make(model).ask("How do I rotate the API keys?")
    assert model.calls == [] and answer.mode == "extractive"


@pytest.mark.slow
def test_a_near_miss_gets_no_second_look_from_a_few_words(make, local_embedder):
    """The passages are on the subject (relevant to the bundled model) but no sentence answers: the written answer's
    second look asks the model; the words-only answer never turns "not found" into an answer, and costs no call."""
    question = "How long are database backups retained in the archive tier?"
    written = ScriptedChat(["Backups are kept for 35 days [1]."] * 4, name=SMALL)
    assert make(written, short_answers=False).ask(question).retrieval.second_look  # the situation: a second look
    model = ScriptedChat(["1 | 35 days"], name=SMALL)
    answer = make(model).ask(question)
    assert not answer.answerable and model.calls == [] and not answer.retrieval.second_look
