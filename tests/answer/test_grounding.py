"""Grounding (docqa.answer.grounding): a claim's cited place must answer the question — its facts in
the row or record of what the question names, next to the question's rarest word — and the second
look (answer.second_look): over relevant passages the extractive answerer cannot quote, the model's
answer is published only when every claim is grounded.  Real knowledge bases (the hash embedder),
the scripted chat model of docqa.testing."""

from __future__ import annotations

import json

import pytest

from docqa.answer.accept import EXTRACTIVE, MODEL, NOT_FOUND, decide, names_all
from docqa.answer.grounding import Question, problem
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import ScriptedChat
from docqa.text.segment import query_terms
from docqa.types import Hit


RECORDS = [{"sku": "GRD-8842", "name": "Garden Trowel", "price": 12.5, "in_stock": True},
           {"sku": "GRD-1290", "name": "Watering Can", "price": 18.0, "in_stock": False},
           {"sku": "GRD-3317", "name": "Pruning Shears", "price": 24.99, "in_stock": True}]
TABLE = """Stanley Cups
Team | Location | Stanley Cups
Blues | STL | 1
Flyers | PHI | 2
Maple Leafs | TOR | 13
"""
MEMO = """May 5, 2023
To Whom it May Concern:
There were 20,000 bottles of water, 10,000 blankets, and 200 laptops delivered on January 23,
2023. A total of 3 trucks were used for 15 hours.
Best Regards,
Mallori
"""


def hit(text: str, title: str = "doc") -> Hit:
    return Hit("c1", "d1", f"/docs/{title}", "", title, "", None, None, 1, 1, 0, len(text), 1.0, text)


def grounding(claim: str, question: str, text: str, weights: dict | None = None):
    return problem(claim, Question(question, query_terms(question), weights or {}), hit(text), 0, len(text))


@pytest.mark.parametrize("claim, ok", [
    ("The price of the Pruning Shears is 24.99 [1].", True),
    ("The price of the Pruning Shears is 12.5 [1].", False),  # the Garden Trowel's record
    ("The price of the Pruning Shears is 99 [1].", False),  # nowhere
])
def test_a_value_must_come_from_the_record_of_what_the_question_names(claim, ok):
    result = grounding(claim, "What is the price of the Pruning Shears?", json.dumps(RECORDS, indent=2))
    assert (result.problem is None) is ok
    if not ok and "12.5" in claim:
        assert "another row or record" in result.problem


@pytest.mark.parametrize("claim, ok", [
    ("The Maple Leafs have won 13 Stanley Cups [1].", True),
    ("The Maple Leafs have won 2 Stanley Cups [1].", False),  # the Flyers' row
    ("The Maple Leafs of TOR have won 13 Stanley Cups [1].", True),
    ("The Maple Leafs of PHI have won 13 Stanley Cups [1].", False),  # PHI is the Flyers' row
])
def test_a_value_must_come_from_the_table_row_of_what_the_question_names(claim, ok):
    result = grounding(claim, "How many Stanley Cups have the Maple Leafs won?", TABLE)
    assert (result.problem is None) is ok


def test_a_true_fact_beside_the_question_is_not_grounded():
    question = "How many trucks were used for the delivery, and for how long?"
    assert grounding("A total of 3 trucks were used for 15 hours [1].", question, MEMO).problem is None
    result = grounding("The memo is dated May 5, 2023 [1].", question, MEMO, {"trucks": 5.0, "delivery": 1.0})
    assert result.problem is not None and "trucks" in result.problem


def test_a_name_the_passage_never_mentions_is_not_grounded():
    result = grounding("The price is 24.99 [1].", "What is the price of the Hedge Clippers?",
                       json.dumps(RECORDS, indent=2))
    assert result.problem is not None and "Hedge" in result.problem


def test_a_passage_that_says_the_opposite_is_not_grounded():
    text = "Backups are kept for 35 days.\nLogs are kept for 7 days."
    assert grounding("Backups are kept for 35 days [1].", "Which files are not kept for 35 days?", text).problem


# -- the second look, end to end ------------------------------------------------------------------
@pytest.fixture
def kb_factory(tmp_path, embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "garden-records.json").write_text(json.dumps(RECORDS, indent=2), encoding="utf-8")
    (docs / "stanley-cups.csv").write_text("Team,Location,Stanley Cups\nBlues,STL,1\nFlyers,PHI,2\nMaple Leafs,TOR,13\n",
                                           encoding="utf-8")
    (docs / "ops.md").write_text("# Operations\n\n## Backups\n\nBackups are kept for 35 days.\n", encoding="utf-8")
    opened = []

    def make(model: ScriptedChat, **answer) -> KnowledgeBase:
        settings = Settings(kb=str(tmp_path / "kb.db"), answer={"review_rounds": 0, **answer},
                            llm={"provider": "openai", "base_url": "http://127.0.0.1:9/v1", "timeout": 3, "max_retries": 0})
        kb = KnowledgeBase(settings, embedder=embedder, chat_model=model)
        if not opened:
            kb.add([docs])
        opened.append(kb)
        return kb

    yield make
    for kb in opened:
        kb.close()


def test_a_table_value_the_extractive_answerer_cannot_quote_is_answered_by_the_model(kb_factory):
    with ScriptedChat([{"text": "The Maple Leafs have won 13 Stanley Cups [1]."}, {"text": "VERIFIED"}]) as server:
        kb = kb_factory(server)
        answer = kb.ask("How many Stanley Cups have the Maple Leafs won?")
    assert answer.answerable and answer.mode == "pipeline" and "13" in answer.answer
    assert answer.retrieval.acceptance.outcome == MODEL
    assert any(c.path.endswith("stanley-cups.csv") for c in answer.citations)


def test_a_neighbours_value_is_never_published(kb_factory):
    with ScriptedChat([{"text": "The Maple Leafs have won 2 Stanley Cups [1]."}, {"text": "VERIFIED"}]) as server:
        kb = kb_factory(server)
        answer = kb.ask("How many Stanley Cups have the Maple Leafs won?")
    assert "2 Stanley Cups" not in answer.answer
    assert answer.retrieval.acceptance.outcome != MODEL
    trace = kb.log.run(answer.run_id).trace
    assert any("another row or record" in json.dumps(t) for t in trace)


def test_a_second_look_is_not_given_without_relevant_passages(kb_factory):
    with ScriptedChat([{"text": "The capital of Peru is Lima [1]."}]) as server:
        kb = kb_factory(server)
        answer = kb.ask("What is the capital of Peru?")
        calls = len(server.requests)
    assert not answer.answerable and calls == 0
    assert answer.retrieval.acceptance.outcome == NOT_FOUND


def test_the_second_look_can_be_turned_off(kb_factory):
    with ScriptedChat([{"text": "The Maple Leafs have won 13 Stanley Cups [1]."}, {"text": "VERIFIED"}]) as server:
        kb = kb_factory(server, second_look=False)
        answer = kb.ask("How many Stanley Cups have the Maple Leafs won?")
        calls = len(server.requests)
    # the question the model answers above with a second look: without it, the extractive answerer's
    # abstention stands, and the model is never asked
    assert answer.retrieval.second_look is False and calls == 0
    assert not answer.answerable and answer.retrieval.acceptance.outcome == NOT_FOUND


def test_across_languages_not_found_yields_to_a_quote_that_names_what_was_asked():
    rule = dict(said_not_found=True, weak_evidence=False, text="", language="zh", min_share=0.5, crossing=True)
    question = Question("Pruning Shears 的价格是多少？", query_terms("Pruning Shears 的价格是多少？"), {})
    quote = [("d1", 0, 60, '"name": "Pruning Shears", "price": 24.99')]
    other = [("d1", 0, 60, '"name": "Garden Trowel", "price": 12.5')]
    assert names_all(question, quote) and not names_all(question, other)
    assert decide([], **rule, named=names_all(question, quote)).outcome == EXTRACTIVE
    assert decide([], **rule, named=names_all(question, other)).outcome == NOT_FOUND
    assert not names_all(Question("备份保留多久？", ["备份", "保留"], {}), quote)  # nothing named: the model is believed


OIL = """The 1973 oil crisis began in October 1973. Iran was then the second-largest exporter in OPEC.
Oil prices had been rising for months, and producers talked of using oil as a weapon.
Several years passed before the embargo was discussed again.
On October 6, 1973, Egypt and Syria launched a surprise attack on Israel on Yom Kippur.
This renewal of hostilities released the underlying economic pressure on oil prices.
"""
COVER = """Galaxy Gaming, Inc.
(Exact name of registrant as specified in its charter)
Nevada
Securities registered pursuant to Section 12(b) of the Act:
Title of each class | Trading symbol | Name of exchange on which registered
Common stock | GLXZ | OTCQB marketplace
"""


@pytest.mark.parametrize("claim, question, text, ok", [
    # SQuAD 2.0's swapped entity: the date and the attack are there, but they are Egypt's and Syria's
    ("Iran launched a surprise attack on Israel on Yom Kippur, on October 6, 1973 [1].",
     "What did Iran do on Yom Kippur on October 6, 1973?", OIL, False),
    ("Egypt and Syria launched a surprise attack on Israel on Yom Kippur [1].",
     "What did Egypt and Syria do on Yom Kippur?", OIL, True),
    # a table row's subject stands in the document's title, not in the row: still grounded
    ("The trading symbol of Galaxy Gaming's common stock is GLXZ [1].",
     "What is the trading symbol of Galaxy Gaming's common stock?", COVER, True),
])
def test_in_prose_the_question_names_must_stand_where_the_facts_stand(claim, question, text, ok):
    result = grounding(claim, question, text)
    assert (result.problem is None) is ok, result.problem
    if not ok:
        assert "does not mention Iran" in result.problem
