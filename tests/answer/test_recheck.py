"""Recheck verdicts, table-driven: a claim's cited span found again in its document's new text —
unchanged or moved (supported), edited but still holding (changed, with the word diff), edited to say
otherwise (contradicted, by the pipeline's own checker), or removed (gone)."""

from __future__ import annotations

import pytest

from docqa.answer.recheck import Current, best_passage, recheck, render_diff, word_diff
from docqa.types import SUCCESS, RunRecord

OLD = "# Database\n\nThe database listens on port 5432 by default. Backups run every night at 02:00.\n"
SPAN = "The database listens on port 5432 by default."
QUESTION = "Which port does the database listen on?"


def _run(*claims: tuple[str, list[int]], sources: list[dict] | None = None) -> RunRecord:
    start = OLD.index(SPAN)
    return RunRecord(id="r1", session_id="s1", question=QUESTION, status=SUCCESS, answer=f"{SPAN} [1]",
                     result={"answer": f"{SPAN} [1]", "citations": [{"n": 1, "path": "/docs/db.md"}],
                             "claims": [{"text": t, "sources": n} for t, n in claims]},
                     sources=sources if sources is not None else [
                         {"n": 1, "document_id": "d1", "content_hash": "h1", "chunk_id": "c1", "char_start": start,
                          "char_end": start + len(SPAN), "quote": SPAN, "changed_at": "2026-12-06T00:00:00+00:00"}])


def _lookup(text: str | None):
    return lambda doc_id: None if text is None else Current("h2", text, "/docs/db.md")


CASES = [
    ("unchanged", OLD.replace("02:00", "03:00"), "supported", "unchanged"),
    ("moved", "# Database\n\nBackups run every night at 02:00.\n\n## Port\n\n" + SPAN + "\n", "supported", "moved"),
    ("reworded", OLD.replace(SPAN, "By default the database listens on port 5432."), "changed", None),
    ("value changed", OLD.replace("5432", "6543"), "contradicted", None),
    ("negated", OLD.replace(SPAN, "The database does not listen on port 5432 by default."), "contradicted", None),
    ("span deleted", OLD.replace(SPAN + " ", ""), "gone", "the cited passage was removed"),
    ("document removed", None, "gone", "the document was removed"),
]


@pytest.mark.parametrize(("new", "verdict", "why"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_claim_verdicts(new, verdict, why):
    result = recheck(_run((SPAN, [1])), _lookup(new), "2026-12-07T00:00:00.000+00:00")
    (claim,) = result["claims"]
    (source,) = claim["sources"]
    assert claim["verdict"] == verdict == result["verdict"] and source["verdict"] == verdict
    assert result["counts"][verdict] == 1 and result["checked_at"].startswith("2026-12-07")
    if why is not None:
        assert source["why"] == why
    if verdict in ("changed", "contradicted"):
        assert source["old"] == SPAN and source["new"] != SPAN and source["new"] in new
        assert "".join(r["text"] for r in source["diff"] if r["op"] != "insert") == SPAN
        assert "".join(r["text"] for r in source["diff"] if r["op"] != "delete") == source["new"]
    if verdict == "supported":
        where = source["location"]
        assert new[where["char_start"]:where["char_end"]] == SPAN
        assert where["line_start"] == new[:where["char_start"]].count("\n") + 1


def test_a_contradiction_names_what_the_new_text_says_otherwise():
    result = recheck(_run((SPAN, [1])), _lookup(OLD.replace("5432", "6543")), "now")
    assert "5432" in result["claims"][0]["sources"][0]["why"]
    assert render_diff(result["claims"][0]["sources"][0]["diff"]) == "The database listens on port [-5432-] {+6543+} by default."


def test_one_source_that_still_holds_the_claim_is_enough_and_the_answer_takes_its_worst_claim():
    start = OLD.index(SPAN)
    kept = {"n": 2, "document_id": "d2", "content_hash": "h1", "chunk_id": "c2", "char_start": start,
            "char_end": start + len(SPAN), "quote": SPAN, "changed_at": None}
    gone = {**kept, "n": 1, "document_id": "d1"}
    texts = {"d1": None, "d2": OLD}
    run = _run((SPAN, [1, 2]), ("Backups run every night at 02:00.", [1]), sources=[gone, kept])
    result = recheck(run, lambda doc_id: None if texts[doc_id] is None else Current("h1", texts[doc_id], "/x.md"), "now")
    assert [c["verdict"] for c in result["claims"]] == ["supported", "gone"] and result["verdict"] == "gone"


def test_an_answer_without_claims_is_checked_as_one_claim():
    run = _run()
    run.result["claims"] = []
    result = recheck(run, _lookup(OLD.replace("5432", "6543")), "now")
    assert [c["verdict"] for c in result["claims"]] == ["contradicted"]


def test_best_passage_and_word_diff():
    text = "Alpha one two. The pool holds 20 connections. Gamma three four."
    start, end = best_passage(text, "The pool holds 25 connections.")
    assert text[start:end] == "The pool holds 20 connections."
    assert best_passage(text, "Completely unrelated words about invoices and tax.") is None
    assert word_diff("a b c", "a x c") == [{"op": "equal", "text": "a"}, {"op": "delete", "text": " b"},
                                           {"op": "insert", "text": " x"}, {"op": "equal", "text": " c"}]
