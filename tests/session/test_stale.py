"""What an answer rested on, and stale answers: the run's sources are recorded with it, and replacing
or removing a cited document marks the citations whose span changed, in the document's transaction —
on every backend (tests/store/backends.py), with the migration that fills in earlier runs."""

from __future__ import annotations

import pytest

from docqa.store.sources import UNKNOWN
from docqa.types import SUCCESS, RunRecord
from store.backends import chunks, kb_url, record
from store.backends import stores  # noqa: F401  (the fixture: a fresh knowledge base per backend)

PARAGRAPHS = ["The database listens on port 5432.", "Backups run every night at 02:00.", "The pool holds 20 connections."]


def _write(stores, paragraphs: list[str], digest: str, doc_id: str = "d1") -> None:
    text, found = chunks(paragraphs)
    stores.documents.replace_document(record(doc_id, f"/docs/{doc_id}.md", content_hash=digest), text, found)


def _cite(stores, run_id: str, ordinal: int, doc_id: str = "d1", created_at: str = "") -> RunRecord:
    """A published run citing the chunk `ordinal` of `doc_id` (its exact span)."""
    hit = stores.documents.get_hits([stores.documents.chunk_ids(doc_id)[ordinal]])[0]
    citation = {"n": 1, "chunk_id": hit.chunk_id, "document_id": doc_id, "path": hit.path, "char_start": hit.char_start,
                "char_end": hit.char_end, "quote": hit.text}
    run = RunRecord(id=run_id, session_id="s1", question=f"question {run_id}?", status=SUCCESS, answer=hit.text + " [1]",
                    result={"answer": hit.text + " [1]", "citations": [citation],
                            "claims": [{"text": hit.text, "sources": [1]}]}, created_at=created_at)
    return stores.runlog.save_run(run)


def test_a_run_records_the_version_it_rested_on(stores):
    _write(stores, PARAGRAPHS, "h1")
    run = _cite(stores, "r1", 0)
    (source,) = run.sources
    assert source["document_id"] == "d1" and source["content_hash"] == "h1" and source["changed_at"] is None
    assert source["quote"] == PARAGRAPHS[0] and (source["char_start"], source["char_end"]) == (0, len(PARAGRAPHS[0]))
    assert source["chunk_id"] == run.result["citations"][0]["chunk_id"]
    assert run.stale is False and run.to_dict()["stale"] is False and run.to_dict()["sources"] == [source]


def test_editing_the_cited_span_marks_the_run_stale_and_an_edit_elsewhere_does_not(stores):
    _write(stores, PARAGRAPHS, "h1")
    _cite(stores, "port", 0)
    _cite(stores, "pool", 2)
    _write(stores, [PARAGRAPHS[0], PARAGRAPHS[1], "The pool holds 25 connections."], "h2")
    port, pool = stores.runlog.get_run("port"), stores.runlog.get_run("pool")
    assert port.stale is False and port.sources[0]["content_hash"] == "h1"  # its span is unchanged: not stale
    assert pool.stale is True and pool.stale_at and pool.sources[0]["changed_at"] == pool.stale_at
    assert pool.sources[0]["content_hash"] == "h1"  # the version it was answered from
    assert [r.id for r in stores.runlog.list_runs(stale=True)] == ["pool"]
    assert [r.id for r in stores.runlog.list_runs(stale=False)] == ["port"]
    _write(stores, [PARAGRAPHS[0], PARAGRAPHS[1], "The pool holds 30 connections."], "h3")
    assert stores.runlog.get_run("pool").stale_at == pool.stale_at  # when it first went stale


def test_the_same_text_written_again_marks_nothing(stores):
    _write(stores, PARAGRAPHS, "h1")
    _cite(stores, "r1", 1)
    _write(stores, PARAGRAPHS, "h1")  # a re-index of the same version
    assert stores.runlog.get_run("r1").stale is False


def test_a_moved_span_makes_the_answer_stale(stores):
    _write(stores, PARAGRAPHS, "h1")
    _cite(stores, "r1", 1)
    _write(stores, [PARAGRAPHS[1], PARAGRAPHS[0], PARAGRAPHS[2]], "h2")
    assert stores.runlog.get_run("r1").stale is True


def test_removing_a_cited_document_or_its_collection_marks_its_answers(stores):
    _write(stores, PARAGRAPHS, "h1")
    _write(stores, PARAGRAPHS, "h1", doc_id="d2")
    _cite(stores, "one", 0)
    _cite(stores, "two", 0, doc_id="d2")
    assert stores.documents.delete_documents(["d1"]) == 1
    assert stores.runlog.get_run("one").stale is True and stores.runlog.get_run("two").stale is False
    stores.documents.delete_collection("default")
    assert stores.runlog.get_run("two").stale is True


def test_a_renamed_file_keeps_its_answers_fresh(stores):
    _write(stores, PARAGRAPHS, "h1")
    _cite(stores, "r1", 0)
    stores.documents.move_document("d1", "d9", "/docs/renamed.md", 10, 1)
    run = stores.runlog.get_run("r1")
    assert run.stale is False and run.sources[0]["document_id"] == "d9"
    stores.documents.delete_documents(["d9"])
    assert stores.runlog.get_run("r1").stale is True


def test_a_citation_whose_chunk_changed_while_answering_is_unknown_and_stale(stores):
    _write(stores, PARAGRAPHS, "h1")
    hit = stores.documents.get_hits([stores.documents.chunk_ids("d1")[0]])[0]
    _write(stores, ["The database listens on port 6543.", *PARAGRAPHS[1:]], "h2")  # before the run is saved
    citation = {"n": 1, "chunk_id": hit.chunk_id, "document_id": "d1", "char_start": 0, "char_end": len(hit.text),
                "quote": hit.text}
    run = stores.runlog.save_run(RunRecord(id="r1", session_id="s1", question="q?", status=SUCCESS,
                                           result={"answer": "a [1]", "citations": [citation]}))
    assert run.sources[0]["content_hash"] == UNKNOWN and run.stale is True


def test_marking_is_part_of_the_document_transaction(stores):
    _write(stores, PARAGRAPHS, "h1")
    _cite(stores, "r1", 0)
    text, found = chunks(["The database listens on port 6543.", *PARAGRAPHS[1:]])
    found[0].ordinal = found[1].ordinal  # two chunks with one id: the write fails and rolls back whole
    with pytest.raises(Exception):  # noqa: B017  (sqlite3 and psycopg raise their own IntegrityError)
        stores.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h2"), text, found)
    assert stores.runlog.get_run("r1").stale is False
    assert stores.documents.document_record("d1").content_hash == "h1"


def test_a_recheck_is_recorded_with_the_run(stores):
    _write(stores, PARAGRAPHS, "h1")
    _cite(stores, "r1", 0)
    stores.runlog.save_recheck("r1", {"verdict": "supported", "claims": []})
    run = stores.runlog.get_run("r1")
    assert run.recheck == {"verdict": "supported", "claims": []} and run.to_dict()["recheck"]["verdict"] == "supported"
    stores.runlog.save_run(run)  # saving the run again keeps it
    assert stores.runlog.get_run("r1").recheck["verdict"] == "supported"


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_migration_gives_earlier_runs_todays_hash_only_when_unchanged_since(backend, request, tmp_path):
    from docqa.store import open_store

    url = kb_url(backend, request, tmp_path)
    with open_store(url) as s:
        _write(s, PARAGRAPHS, "h1")  # indexed 2026-01-01 (store.backends.record)
        _cite(s, "after", 0, created_at="2026-02-01T00:00:00.000+00:00")
        _cite(s, "before", 1, created_at="2025-12-01T00:00:00.000+00:00")  # the file was re-indexed since
        s.runlog.save_run(RunRecord(id="none", session_id="s1", question="q?", status=SUCCESS, result={"answer": "x"}))
    _undo_schema(backend, url)
    with open_store(url) as s:
        after, before = s.runlog.get_run("after"), s.runlog.get_run("before")
        assert after.sources[0]["content_hash"] == "h1" and before.sources[0]["content_hash"] == UNKNOWN
        assert after.sources[0]["quote"] == PARAGRAPHS[0] and before.sources[0]["char_start"] == len(PARAGRAPHS[0]) + 2
        assert not after.stale and not before.stale and s.runlog.get_run("none").sources == []
        _write(s, [PARAGRAPHS[0], "Backups run every night at 03:00.", PARAGRAPHS[2]], "h2")
        assert s.runlog.get_run("before").stale and not s.runlog.get_run("after").stale


def _undo_schema(backend: str, url: str) -> None:
    """The knowledge base as the docqa before run sources left it (their table, the recheck column)."""
    if backend == "sqlite":
        import sqlite3

        conn = sqlite3.connect(url)
        conn.executescript("DROP TABLE run_source_marks; DROP TABLE run_sources; ALTER TABLE runs DROP COLUMN recheck;"
                           " DELETE FROM _migrations WHERE number IN (8, 9);")
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE run_source_marks")
        conn.execute("DROP TABLE run_sources")
        conn.execute("ALTER TABLE runs DROP COLUMN recheck")
        conn.execute("DELETE FROM _migrations WHERE number IN (9, 11, 12, 13)")


def test_an_edit_above_a_cited_span_carries_it_along_and_keeps_its_answer_fresh(stores):
    _write(stores, PARAGRAPHS, "h1")
    _cite(stores, "pool", 2)
    _write(stores, ["The database listens on port 5432 unless PGPORT says otherwise.", *PARAGRAPHS[1:]], "h2")
    run = stores.runlog.get_run("pool")
    assert run.stale is False and run.sources[0]["content_hash"] == "h1"  # the version it was answered from
    _write(stores, ["The database listens on port 5432 unless PGPORT is set.", *PARAGRAPHS[1:]], "h3")
    assert stores.runlog.get_run("pool").stale is False  # found again by its quote, after the first shift
    _write(stores, ["The database listens on port 5432 unless PGPORT is set.", *PARAGRAPHS[1:2],
                    "The pool holds 25 connections."], "h4")
    assert stores.runlog.get_run("pool").stale is True



def test_spans_are_compared_by_characters_in_texts_beyond_ascii(stores):
    """A text with accented letters and one without compare the same spans (SQLite reads an ASCII text as bytes)."""
    _write(stores, ["Die Datenbank hört auf Port 5432.", *PARAGRAPHS[1:]], "h1")  # "ö" before the cited spans
    _cite(stores, "nightly", 1)
    _cite(stores, "pool", 2)
    _write(stores, ["Die Datenbank hört auf Port 5432 — außer PGPORT ist gesetzt.", *PARAGRAPHS[1:]], "h2")
    assert stores.runlog.list_runs(stale=True) == []  # shifted by more bytes than characters: carried along
    _write(stores, ["Die Datenbank hört auf Port 5432 — außer PGPORT ist gesetzt.", PARAGRAPHS[1],
                    "Der Pool hält 25 Verbindungen."], "h3")
    assert [r.id for r in stores.runlog.list_runs(stale=True)] == ["pool"]
    _write(stores, ["The database listens on port 5432.", PARAGRAPHS[1], "Der Pool hält 25 Verbindungen."], "h4")
    assert [r.id for r in stores.runlog.list_runs(stale=True)] == ["pool"]  # back to ASCII above it: still at its place
    _write(stores, ["The database listens on port 5432.", "Backups run every night at 03:00.",
                    "Der Pool hält 25 Verbindungen."], "h5")
    assert {r.id for r in stores.runlog.list_runs(stale=True)} == {"pool", "nightly"}


def test_a_span_whose_bytes_moved_to_its_offset_is_still_stale(stores):
    """The cited span is now 2 characters earlier, new text on both sides — and exactly at its old offset
    counted in UTF-8 bytes ("Größe: ja" is 9 characters, 11 bytes): a byte-offset comparison would miss it."""
    _write(stores, ["Alpha beta.", "The pool holds 20 connections.", "End."], "h1")
    _cite(stores, "pool", 1)
    _write(stores, ["Größe: ja", "The pool holds 20 connections.", "Finish."], "h2")
    assert [r.id for r in stores.runlog.list_runs(stale=True)] == ["pool"]


def test_writing_no_documents_keeps_the_vector_cache_generation(tmp_path):
    from docqa.store import SQLiteStores
    from docqa.store.sqlite.db import SQLiteDB

    with SQLiteStores(tmp_path / "kb.db") as s:
        _write(s, PARAGRAPHS, "h1")
        before = SQLiteDB.generation(s.db.conn)
        s.documents.replace_documents([])  # an add where every file was unchanged
        assert SQLiteDB.generation(s.db.conn) == before
        _write(s, PARAGRAPHS[:2], "h2")
        assert SQLiteDB.generation(s.db.conn) != before
