"""Stale answers through the core, on both backends: an add that edits or removes a cited span marks the
answers citing it (and only those), recall never repeats one, recheck records its verdicts with the run,
and a key scoped to one collection rechecks only the runs it may see (the core decides, not a front end)."""

from __future__ import annotations

from pathlib import Path

import pytest

from docqa.access import Principal
from docqa.errors import NotFoundError
from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from store.backends import kb_url

DB = "# Database\n\nThe database listens on port 5432 by default.\n\nBackups run every night at 02:00.\n"
CACHE = "# Cache\n\nThe cache keeps entries for 60 minutes.\n"


@pytest.fixture(params=["sqlite", "postgres"])
def world(request, tmp_path: Path):
    folder = tmp_path / "docs"
    folder.mkdir()
    (folder / "db.md").write_text(DB, encoding="utf-8")
    (folder / "cache.md").write_text(CACHE, encoding="utf-8")
    settings = Settings(kb=kb_url(request.param, request, tmp_path), embed={"provider": "none"},
                        llm={"provider": "none"}, answer={"mode": "pipeline", "recall": True})
    with KnowledgeBase(settings) as kb:
        kb.add([folder], "ops")
        yield kb, folder


def _ask(kb: KnowledgeBase, question: str, **options):
    answer = kb.ask(question, collection="ops", **options)
    assert answer.citations, answer.answer
    return answer


def test_an_edited_span_marks_its_answers_and_recheck_says_how(world):
    kb, folder = world
    port = _ask(kb, "Which port does the database listen on?")
    backups = _ask(kb, "When do backups run?")
    cache = _ask(kb, "How long does the cache keep entries?")
    assert not kb.log.run(port.run_id).stale
    (folder / "db.md").write_text(DB.replace("5432", "6543"), encoding="utf-8")
    kb.add([folder], "ops")
    runs = {r.id: r for r in kb.log.runs()}
    assert runs[port.run_id].stale and not runs[backups.run_id].stale and not runs[cache.run_id].stale
    assert [r.id for r in kb.log.runs(stale=True)] == [port.run_id]
    assert [row["run_id"] for row in kb.log.qa_log(stale=True)] == [port.run_id]
    (row,) = kb.log.qa_log(kinds=["stale"])
    assert row["run_id"] == port.run_id and row["stale"] is True and "a cited source changed on" in row["reason"]

    checked = kb.answers.recheck(port.run_id)
    assert checked["verdict"] == "contradicted" and checked["stale"] is True
    source = checked["claims"][0]["sources"][0]
    assert "5432" in source["old"] and "6543" in source["new"] and {"op": "insert", "text": " 6543"} in source["diff"]
    assert kb.log.run(port.run_id).recheck == checked
    assert kb.log.qa_log(kinds=["stale"])[0]["recheck"] == "contradicted"
    assert [r["run_id"] for r in kb.answers.recheck_stale()] == [port.run_id]


def test_a_removed_document_makes_its_answers_gone(world):
    kb, folder = world
    cache = _ask(kb, "How long does the cache keep entries?")
    (folder / "cache.md").unlink()
    kb.add([folder], "ops")
    assert kb.log.run(cache.run_id).stale
    assert kb.answers.recheck(cache.run_id)["verdict"] == "gone"


def test_recall_never_repeats_a_stale_answer(world):
    kb, folder = world
    first = _ask(kb, "Which port does the database listen on?")
    again = _ask(kb, "Which port does the database listen on?")
    assert again.mode == "recall" and again.retrieval.recalled_from == first.run_id
    (folder / "db.md").write_text(DB.replace("5432 by default", "5432 unless PGPORT is set"), encoding="utf-8")
    kb.add([folder], "ops")
    third = _ask(kb, "Which port does the database listen on?")
    assert third.mode != "recall"
    retired = [r for entry in kb.log.run(third.run_id).trace for r in entry.get("retired") or []]
    assert {r["run_id"] for r in retired} >= {first.run_id} and all(r["reason"].startswith("stale") for r in retired)


def test_a_scoped_reader_rechecks_only_what_it_sees(world):
    kb, folder = world
    port = _ask(kb, "Which port does the database listen on?")
    (folder / "db.md").write_text(DB.replace("5432", "6543"), encoding="utf-8")
    kb.add([folder], "ops")
    other = Principal(role="reader", collections=("finance",))
    with pytest.raises(NotFoundError):
        kb.answers.recheck(port.run_id, principal=other)
    assert kb.answers.recheck_stale(principal=other) == []
    reader = Principal(role="reader", collections=("ops",))
    assert kb.answers.recheck(port.run_id, principal=reader)["verdict"] == "contradicted"
