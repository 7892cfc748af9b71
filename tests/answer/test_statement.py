"""What an answer may say: the sentence rule over real reader output (Markdown, reStructuredText,
HTML ingested through the KnowledgeBase), source numbering by first use, and one confidence."""

from __future__ import annotations

import json
import re

import pytest

from docqa.answer.answerability import decision
from docqa.answer.confidence import confidence
from docqa.answer.statement import is_statement, quotable_spans
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from docqa.testing import ScriptedChat


FAQ_MD = """# Operations FAQ

## How long are backups kept?

Backups are kept for 35 days.

## How long are logs kept?

Logs are kept for 14 days in the archive bucket.

## Where do the settings live?

- Settings file
- Options

| Setting | Default |
|---|---|
| cache.dir | ~/.cache/acme |

The settings live in `/etc/acme/acme.toml` on every server.
"""
CACHE_RST = """=========
acme-cache
=========

Description
===========

.. acme-command-options:: cache

:param dir: the cache directory
:type dir: str

.. note::

   The cache is stored in the user's cache directory by default.

Example::

    acme cache dir --verbose

acme keeps its cache in the user's cache directory, which is ``~/.cache/acme`` on Linux.
"""
GUIDE_HTML = """<html><head><title>Backup guide</title></head><body>
<nav><a href="/">Home</a> | <a href="/docs">Docs</a> | <a href="/faq">FAQ</a></nav>
<main><h1>Backup guide</h1>
<h2>Retention</h2><p>Snapshots are retained for 90 days on cold storage.</p>
<h2>Schedule</h2><p>How often are snapshots made?</p><p>Snapshots are made every six hours by the scheduler.</p>
<table><tr><th>Kind</th><th>Period</th></tr><tr><td>full snapshot</td><td>weekly</td></tr></table></main>
<footer>Copyright 2024 Acme. All rights reserved.</footer></body></html>
"""
HEADINGS = {"Operations FAQ", "How long are backups kept?", "How long are logs kept?", "Where do the settings live?",
            "acme-cache", "Description", "Backup guide", "Retention", "Schedule"}
MARKUP = re.compile(r"^\s*([=\-~])\1{2,}\s*$|\.\.\s|::|^\s*:\w+[^:]*:\s|\||^#", re.M)


@pytest.fixture
def kb(tmp_path, embedder):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "faq.md").write_text(FAQ_MD, encoding="utf-8")
    (docs / "cache.rst").write_text(CACHE_RST, encoding="utf-8")
    (docs / "guide.html").write_text(GUIDE_HTML, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "none"})
    with KnowledgeBase(settings, embedder=embedder) as kb:
        kb.add([docs])
        yield kb


def junk(sentence: str) -> bool:
    text = sentence.strip()
    return text in HEADINGS or text.endswith("?") or MARKUP.search(text) is not None


def test_only_statements_are_quotable_in_real_reader_output(kb):
    quotable = []
    for record in kb.documents.list():
        for hit in kb.documents.chunks(record.document_id):
            spans = quotable_spans(hit.text, hit.section, code=hit.type == "code")
            quotable += [hit.text[s:e] for s, e in spans]
    assert quotable, "the documents hold statements"
    assert [s for s in quotable if junk(s)] == []
    for expected in ("Backups are kept for 35 days.", "Snapshots are made every six hours by the scheduler.",
                     "The cache is stored in the user's cache directory by default.",
                     "The settings live in `/etc/acme/acme.toml` on every server."):
        assert expected in quotable
    assert not any("Copyright" in s or "Home" in s or "--verbose" in s for s in quotable)


@pytest.mark.parametrize("question, expected", [
    ("How long are backups kept?", "Backups are kept for 35 days."),
    ("How often are snapshots made?", "Snapshots are made every six hours by the scheduler."),
    ("Where is the acme cache?", "acme keeps its cache in the user's cache directory"),
    ("Where do the settings live?", "The settings live in `/etc/acme/acme.toml` on every server."),
])
def test_extractive_answers_quote_statements_not_headings_questions_or_markup(kb, question, expected):
    answer = kb.ask(question)
    assert answer.answerable and answer.mode == "extractive"
    assert expected in answer.answer
    for claim in answer.claims:
        assert not junk(claim.text), claim.text
    assert "?" not in answer.answer and "===" not in answer.answer and ":param" not in answer.answer


@pytest.mark.parametrize("sentence, states", [
    ("Backups are kept for 35 days.", True),
    ("备份保留 35 天。", True),
    ("The documents do not mention a release date.", True),
    ("How long are logs kept?", False),
    ("日志保留多久？", False),
    ("", False),
    ("  . ", False),
    ("I'll try a shorter or looser pattern.", False),
    ('The query "backup window" did not match any lines in the documents.', False),
    ("Let me use the search_docs function to look again.", False),
    ("让我再搜索一次。", False),
    ("The mailing list is [1].", False),
    ("Saying that a problem is not in P does not imply that most of them are.", True),
    ("[2]", False),
    ("Backups are made every six hours by the scheduler.", True),
])
def test_is_statement(sentence, states):
    assert is_statement(sentence) is states


def test_extractive_sources_are_numbered_by_first_use(kb):
    for question in ("How long are backups and logs kept?", "Where is the acme cache and what is its default?",
                     "How long are snapshots retained and how often are they made?"):
        answer = kb.ask(question)
        assert_numbered(answer)


def assert_numbered(answer):
    shown = [int(n) for n in re.findall(r"\[(\d+)\]", answer.answer)]
    first_use = list(dict.fromkeys(shown))
    assert first_use == list(range(1, len(first_use) + 1)), answer.answer
    assert {c.n for c in answer.citations} == set(first_use)
    chunk_of: dict[int, str] = {}
    for c in answer.citations:  # one number per source, one source per number
        assert chunk_of.setdefault(c.n, c.chunk_id) == c.chunk_id
    assert len(set(chunk_of.values())) == len(chunk_of)
    for claim in answer.claims:
        assert all(c.n in claim.sources for c in claim.citations)


def scripted_kb(tmp_path, embedder, server):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "faq.md").write_text(FAQ_MD, encoding="utf-8")
    (docs / "guide.html").write_text(GUIDE_HTML, encoding="utf-8")
    settings = Settings(kb=str(tmp_path / "kb.db"), llm={"provider": "openai", "base_url": "http://127.0.0.1:9/v1",
                                                          "timeout": 3, "max_retries": 0})
    model = server
    kb = KnowledgeBase(settings, embedder=embedder, chat_model=model)
    kb.add([docs])
    return kb


def test_pipeline_numbers_sources_by_first_use_and_drops_what_states_nothing(tmp_path, embedder):
    facts = {"35 days": "Backups are kept for 35 days", "14 days": "Logs are kept for 14 days in the archive bucket"}
    with ScriptedChat([]) as server:
        kb = scripted_kb(tmp_path, embedder, server)
        try:
            prompt_sources = [h.text for h in kb.search("How long are backups and logs kept?", 8)]
            n = {key: 1 + next(i for i, t in enumerate(prompt_sources) if key in t) for key in facts}
            # the model cites the higher-numbered source first, repeats a marker alone, asks a question and chatters
            first, second = sorted(facts, key=lambda k: -n[k])
            assert n[first] > 1
            reply = (f"How long are backups kept? {facts[first]} [{n[first]}]. {facts[second]} [{n[second]}]. "
                     f"[{n[second]}] I'll try a shorter pattern next.")
            server.replies += [{"text": reply}, {"text": "VERIFIED"}]
            answer = kb.ask("How long are backups and logs kept?", mode="pipeline")
        finally:
            kb.close()
    assert answer.mode == "pipeline" and answer.verification.status == "VERIFIED"
    assert answer.answer == f"{facts[first]} [1]. {facts[second]} [2]."
    assert [c.quote for c in answer.citations] == [f"{facts[first]}.", f"{facts[second]}."]
    assert [c.n for c in answer.citations] == [1, 2] and [c.sources for c in answer.claims] == [[1], [2]]
    assert_numbered(answer)


_HIGH, _MEDIUM = decision()["bands"]["high"], decision()["bands"]["medium"]  # the fitted bands (answer/decision.json)


@pytest.mark.parametrize("status, kwargs, level, reason", [
    ("VERIFIED", {"top_score": 0.9}, "high", None),
    ("VERIFIED", {"top_score": 0.6}, "medium", "high needs"),
    ("VERIFIED", {"top_score": 0.3}, "medium", "under the relevance threshold"),
    ("PARTIAL", {"top_score": 0.3}, "low", "under the relevance threshold"),
    ("PARTIAL", {"top_score": 0.9}, "medium", "partial"),
    ("UNVERIFIED", {"top_score": 0.9}, "low", "unverified"),
    ("VERIFIED", {"top_score": 0.9, "evidence": _HIGH + 0.05}, "high", None),
    ("VERIFIED", {"top_score": 0.9, "evidence": (_HIGH + _MEDIUM) / 2}, "medium", f"the probability that {decision()['probability_of']} is "),
    ("VERIFIED", {"top_score": 0.9, "evidence": _MEDIUM - 0.05}, "low", "(low: under "),
    ("VERIFIED", {"top_score": 0.3, "evidence": 0.9}, "medium", "under the relevance threshold"),
])
def test_confidence_levels_and_reasons(status, kwargs, level, reason):
    got, reasons = confidence(status, answerable=True, relevance_threshold=0.5, abstain_threshold=0.5, **kwargs)
    assert got == level
    if reason is None:
        assert reasons == []
    else:
        assert any(reason in r for r in reasons)
    if got == "low" and status == "VERIFIED":
        assert reasons  # VERIFIED is never low without a stated reason


@pytest.mark.parametrize("bands", [{"high": 0.7, "medium": 0.55}, {"high": 0.58, "medium": 0.335}])
def test_the_confidence_text_never_contradicts_its_number(bands, tmp_path, monkeypatch):
    """The probability stated lies in the band stated, as both are shown, even a hair under a bound (0.5496 under
    0.55 is not "0.55 (low: under 0.55)") and with a fitted bound of three decimals (0.335)."""
    candidate = tmp_path / "decision.json"
    candidate.write_text(json.dumps({**decision(), "bands": bands}), encoding="utf-8")
    monkeypatch.setenv("DOCQA_DECISION_FILE", str(candidate))
    stated = re.compile(r"is ([0-9.]+) \((low|medium): (?:under ([0-9.]+)|([0-9.]+) to ([0-9.]+))\)$")
    for bound in bands.values():
        for evidence in (bound - 0.0004, bound - 1e-9, bound, bound + 0.0004, bound / 2):
            level, reasons = confidence("VERIFIED", answerable=True, top_score=0.9, relevance_threshold=0.5, evidence=evidence)
            assert level == ("high" if evidence >= bands["high"] else "medium" if evidence >= bands["medium"] else "low")
            if level == "high":
                assert reasons == []
                continue
            m = next(stated.search(r) for r in reasons if stated.search(r))
            shown, band = float(m.group(1)), m.group(2)
            assert band == level
            if band == "low":
                assert shown < float(m.group(3)) and float(m.group(3)) == pytest.approx(bands["medium"])
            else:
                assert float(m.group(4)) <= shown < float(m.group(5))
                assert (float(m.group(4)), float(m.group(5))) == pytest.approx((bands["medium"], bands["high"]))


def test_not_found_has_no_confidence_and_answers_state_theirs(kb):
    missing = kb.ask("What is the airspeed velocity of an unladen swallow?")
    assert not missing.answerable and missing.confidence is None and missing.confidence_reasons == []
    assert missing.to_dict()["confidence"] is None
    found = kb.ask("How long are backups kept?")
    assert found.answerable and found.confidence in ("high", "medium", "low")
    assert bool(found.confidence_reasons) == (found.confidence != "high"), found.confidence_reasons  # below high: why
    assert found.to_dict()["confidence"] == found.confidence
