"""Stale marks (run_source_marks) on every backend: the store marks exactly the citations spans.follow says
went — whatever shortcut it takes on the index (SQLite passes over an exact citation of the replaced version
by its offsets) — and a mark goes with its citation; the migrations that moved the marks out of run_sources."""

from __future__ import annotations

import random
import re

import pytest

from docqa.store.spans import follow
from docqa.store.documents import DocumentWrite
from docqa.types import SUCCESS, RunRecord
from store.backends import chunks, kb_url, record
from store.backends import stores  # noqa: F401  (the fixture: a fresh knowledge base per backend)

WORDS = "port pool backup cache token river stone lantern copper meadow signal winter".split()


def _sentence(rng: random.Random) -> str:
    return " ".join(rng.choices(WORDS, k=rng.randint(3, 7))).capitalize() + f" {rng.randint(1, 99)}."


def _paragraphs(rng: random.Random) -> list[str]:
    return [" ".join(_sentence(rng) for _ in range(rng.randint(1, 3))) for _ in range(rng.randint(2, 5))]


def _edit(rng: random.Random, paragraphs: list[str]) -> list[str]:
    """One random edit of a document's paragraphs: a sentence replaced, reworded, inserted, deleted, moved to
    the end or duplicated, a paragraph added at the start or the end, or two far apart edits at once."""
    out = list(paragraphs)
    i = rng.randrange(len(out))
    sentences = out[i].split(". ")
    j = rng.randrange(len(sentences))
    kind = rng.choice(["replace", "reword", "insert", "delete", "move", "duplicate", "prepend", "append", "both"])
    if kind == "replace":
        sentences[j] = _sentence(rng).removesuffix(".") if j < len(sentences) - 1 else _sentence(rng)
    elif kind == "reword":
        sentences[j] = sentences[j].replace(rng.choice(sentences[j].split()), rng.choice(WORDS), 1)
    elif kind == "insert":
        sentences.insert(j, _sentence(rng).removesuffix("."))
    elif kind == "delete" and len(out) > 1:
        del out[i]
        return out
    elif kind == "move":
        moved = out.pop(i)
        return [*out, moved]
    elif kind == "duplicate":
        out.insert(i, out[i])
        return out
    elif kind == "prepend":
        return [_sentence(rng), *out]
    elif kind == "append":
        return [*out, _sentence(rng)]
    elif kind == "both":
        return [_sentence(rng), *out[1:-1], _sentence(rng)] if len(out) > 2 else [_sentence(rng), _sentence(rng)]
    out[i] = ". ".join(sentences)
    return out


def _citations(rng: random.Random, doc_id: str, text: str, chunk_id: str, first: int) -> list[dict]:
    """Every sentence of the text cited at its offsets, some spans of two sentences, and a few quotes
    that are not the text at their offsets (cited with offsets a little off)."""
    spans = [m.span() for m in re.finditer(r"[A-Z][^.\n]*\.?", text)]  # each sentence starts with a capital
    spans += [(spans[k][0], spans[k + 1][1]) for k in range(len(spans) - 1) if rng.random() < 0.3]
    found = [{"start": s, "end": e, "quote": text[s:e]} for s, e in spans]
    found += [{"start": s + 2, "end": e + 2, "quote": text[s:e]} for s, e in rng.sample(spans, min(2, len(spans)))]
    return [{"n": first + k, "chunk_id": chunk_id, "document_id": doc_id, "char_start": c["start"], "char_end": c["end"],
             "quote": c["quote"]} for k, c in enumerate(found)]


def test_the_store_marks_exactly_what_follow_says_went(stores):
    """Random edits of 12 documents, five rounds, written in groups; a run cites every sentence of each version
    (so later rounds judge citations of earlier versions too).  After each write the marked citations are
    exactly those whose span spans.follow no longer finds, between the old and the new text."""
    rng = random.Random(31)
    docs = {f"d{i}": _paragraphs(rng) for i in range(12)}
    texts: dict[str, str] = {}
    cited: dict[str, tuple[str, str, dict]] = {}  # source key -> (document, the hash it rests on, citation)
    expected: set[str] = set()
    for version in range(1, 6):
        writes = []
        for doc_id, paragraphs in docs.items():
            if version > 1:
                docs[doc_id] = paragraphs = _edit(rng, paragraphs)
            text, found = chunks(paragraphs)
            if text == texts.get(doc_id):
                continue
            digest = f"{doc_id}v{version}"
            old = texts.get(doc_id)
            for key, (d, rested_on, c) in cited.items():
                if d == doc_id and key not in expected and rested_on != digest and old is not None:
                    if follow(old, text, c["char_start"], c["char_end"], c["quote"]) is None:
                        expected.add(key)
            texts[doc_id] = text
            writes.append(DocumentWrite(record(doc_id, f"/docs/{doc_id}.md", content_hash=digest), text, found))
        for group in (writes[: len(writes) // 2], writes[len(writes) // 2 :]):
            stores.documents.replace_documents(group)
        for doc_id, text in texts.items():
            chunk_id = stores.documents.chunk_ids(doc_id)[0]
            run_id = f"{doc_id}-{version}"
            citations = _citations(rng, doc_id, text, chunk_id, 1)
            stores.runlog.save_run(RunRecord(id=run_id, session_id="s1", question=f"{run_id}?", status=SUCCESS,
                                             answer="a", result={"answer": "a", "citations": citations}))
            for c in citations:
                cited[f"{run_id}/{c['n']}"] = (doc_id, stores.documents.document_record(doc_id).content_hash, c)
        marked = {f"{r.id}/{s['n']}" for r in stores.runlog.list_runs() for s in r.sources if s["changed_at"]}
        assert marked == expected, f"round {version}"
    assert 50 < len(expected) < len(cited) - 100  # the rounds marked some citations and kept many


def test_a_mark_goes_with_its_citation(stores):
    text, found = chunks(["The pool holds 20 connections.", "Backups run at 02:00."])
    stores.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h1"), text, found)
    chunk_id = stores.documents.chunk_ids("d1")[0]
    citation = {"n": 1, "chunk_id": chunk_id, "document_id": "d1", "char_start": 0, "char_end": 30,
                "quote": "The pool holds 20 connections."}
    run = RunRecord(id="r1", session_id="s1", question="q?", status=SUCCESS, answer="a",
                    result={"answer": "a", "citations": [citation]})
    stores.runlog.save_run(run)
    text, found = chunks(["The pool holds 25 connections.", "Backups run at 02:00."])
    stores.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h2"), text, found)
    assert stores.runlog.get_run("r1").stale is True
    citation["quote"], citation["chunk_id"] = "The pool holds 25 connections.", stores.documents.chunk_ids("d1")[0]
    stores.runlog.save_run(run)  # saved again, citing the new version: its old citation and mark go
    assert stores.runlog.get_run("r1").stale is False
    assert _count(stores, "run_source_marks") == 0
    text, found = chunks(["The pool holds 30 connections.", "Backups run at 02:00."])
    stores.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h3"), text, found)
    assert _count(stores, "run_source_marks") == 1
    assert stores.runlog.delete_session("s1") is True  # its runs and their citations go, and the marks with them
    assert _count(stores, "run_source_marks") == 0 and _count(stores, "run_sources") == 0


def _count(stores, table: str) -> int:
    conn = getattr(stores.db, "conn", None)
    if conn is not None:  # SQLite
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]
    return stores.db.one(f"SELECT count(*) FROM {table}")


def _rows(stores, sql: str) -> list[tuple]:
    conn = getattr(stores.db, "conn", None)
    if conn is not None:  # SQLite
        return [tuple(row) for row in conn.execute(sql).fetchall()]
    with stores.db.read() as conn:
        return conn.execute(sql).fetchall()


def test_a_new_parse_of_the_same_version_makes_its_citations_inexact(stores):
    """Written again with the same hash but another text (a new parser): the quotes may not be at their
    offsets any more, so no citation of that document is passed over by its offsets."""
    text, found = chunks(["Alpha beta.", "The pool holds 20 connections."])
    stores.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h1"), text, found)
    citation = {"n": 1, "chunk_id": stores.documents.chunk_ids("d1")[1], "document_id": "d1", "char_start": 13,
                "char_end": 43, "quote": "The pool holds 20 connections."}
    stores.runlog.save_run(RunRecord(id="r1", session_id="s1", question="q?", status=SUCCESS, answer="a",
                                     result={"answer": "a", "citations": [citation]}))
    exact = "SELECT exact FROM run_sources WHERE run_id = 'r1'"
    assert _rows(stores, exact) == [(1,)]
    text, found = chunks(["Alpha  beta.", "The pool holds 20 connections."])  # one more space: shifted
    stores.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h1"), text, found)
    assert _rows(stores, exact) == [(0,)] and stores.runlog.get_run("r1").stale is False


@pytest.mark.parametrize("backend", ["sqlite", "postgres"])
def test_the_migration_moves_the_marks_and_finds_the_exact_citations(backend, request, tmp_path):
    from docqa.store import open_store

    url = kb_url(backend, request, tmp_path)
    with open_store(url) as s:
        text, found = chunks(["The database listens on port 5432.", "The pool holds 20 connections."])
        s.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h1"), text, found)
        ids = s.documents.chunk_ids("d1")
        citations = [{"n": 1, "chunk_id": ids[0], "document_id": "d1", "char_start": 0, "char_end": 34,
                      "quote": "The database listens on port 5432."},
                     {"n": 2, "chunk_id": ids[1], "document_id": "d1", "char_start": 36, "char_end": 66,
                      "quote": "The pool holds 20 connections."},
                     {"n": 3, "chunk_id": ids[1], "document_id": "d1", "char_start": 30, "char_end": 60,
                      "quote": "The pool holds 20 connections."}]  # not at its offsets
        s.runlog.save_run(RunRecord(id="r1", session_id="s1", question="q?", status=SUCCESS, answer="a",
                                    result={"answer": "a", "citations": citations}))
    _back_to_marks_in_rows(backend, url, {1: "2026-12-01T00:00:00+00:00"})
    with open_store(url) as s:
        run = s.runlog.get_run("r1")
        assert [src["changed_at"] for src in run.sources] == ["2026-12-01T00:00:00+00:00", None, None]
        assert run.stale_at == "2026-12-01T00:00:00+00:00"
        assert _rows(s, "SELECT n, exact FROM run_sources ORDER BY n") == [(1, 1), (2, 1), (3, 0)]
        text, found = chunks(["The database listens on port 5432.", "The pool holds 25 connections."])
        s.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h2"), text, found)
        changed = [src["changed_at"] for src in s.runlog.get_run("r1").sources]
        assert changed[0] == "2026-12-01T00:00:00+00:00" and changed[1] and changed[2]


def test_postgres_schema_13_keeps_the_marks_and_a_trigger_removes_those_of_citations_that_go(request, tmp_path):
    """Schema 13 drops the marks' foreign key (its check locked every marked citation's row): the marks of a
    schema 12 knowledge base stay, and those of citations that go still go with them (the trigger)."""
    from docqa.store import open_store

    url = kb_url("postgres", request, tmp_path)
    with open_store(url) as s:
        text, found = chunks(["The database listens on port 5432.", "The pool holds 20 connections."])
        s.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h1"), text, found)
        ids = s.documents.chunk_ids("d1")
        for run_id, n in (("r1", 0), ("r2", 1), ("r3", 1)):
            start = 0 if n == 0 else 36
            citation = {"n": 1, "chunk_id": ids[n], "document_id": "d1", "char_start": start,
                        "char_end": start + len(found[n].text), "quote": found[n].text}
            s.runlog.save_run(RunRecord(id=run_id, session_id=run_id, question="q?", status=SUCCESS, answer="a",
                                        result={"answer": "a", "citations": [citation]}))
        text, found = chunks(["The database listens on port 5432.", "The pool holds 25 connections."])
        s.documents.replace_document(record("d1", "/docs/d1.md", content_hash="h2"), text, found)
        stale_at = s.runlog.get_run("r2").stale_at
        assert stale_at and {r.id for r in s.runlog.list_runs(stale=True)} == {"r2", "r3"}
    _back_to_schema_12(url)
    assert _foreign_keys(url) == 1
    with open_store(url) as s:
        assert s.schema_version == 13 and _foreign_keys(url) == 0
        assert {r.id for r in s.runlog.list_runs(stale=True)} == {"r2", "r3"} and s.runlog.get_run("r2").stale_at == stale_at
        assert _count(s, "run_source_marks") == 2
        assert s.runlog.delete_session("r2") is True  # its run's citation goes, and the mark with it
        assert _count(s, "run_source_marks") == 1 and s.runlog.get_run("r3").stale is True
        citation = {"n": 1, "chunk_id": s.documents.chunk_ids("d1")[1], "document_id": "d1", "char_start": 36,
                    "char_end": 66, "quote": "The pool holds 25 connections."}
        s.runlog.save_run(RunRecord(id="r3", session_id="r3", question="q?", status=SUCCESS, answer="a",
                                    result={"answer": "a", "citations": [citation]}))  # saved again: a new citation
        assert _count(s, "run_source_marks") == 0 and s.runlog.get_run("r3").stale is False
        assert s.runlog.get_run("r1").stale is False


def _back_to_schema_12(url: str) -> None:
    """A PostgreSQL knowledge base as schema 12 left it: the marks' foreign key, no trigger."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TRIGGER run_sources_unmark ON run_sources")
        conn.execute("DROP FUNCTION run_sources_unmark()")
        conn.execute("ALTER TABLE run_source_marks ADD CONSTRAINT run_source_marks_source_id_fkey FOREIGN KEY (source_id)"
                     " REFERENCES run_sources(id) ON DELETE CASCADE")
        conn.execute("DELETE FROM _migrations WHERE number = 13")


def _foreign_keys(url: str) -> int:
    import psycopg

    with psycopg.connect(url) as conn:
        return conn.execute("SELECT count(*) FROM pg_constraint WHERE conrelid = 'run_source_marks'::regclass"
                            " AND contype = 'f'").fetchone()[0]


def _back_to_marks_in_rows(backend: str, url: str, marks: dict[int, str]) -> None:
    """The knowledge base as the docqa before run_source_marks left it: the marks (source number -> when) in
    run_sources.changed_at, no marks table (SQLite: no id, no exactness)."""
    if backend == "sqlite":
        import sqlite3

        conn = sqlite3.connect(url)
        conn.executescript("""
            CREATE TABLE old_sources (run_id TEXT NOT NULL REFERENCES runs(id) ON DELETE CASCADE, n INTEGER NOT NULL,
                document_id TEXT NOT NULL, content_hash TEXT NOT NULL, chunk_id TEXT NOT NULL, char_start INTEGER NOT NULL,
                char_end INTEGER NOT NULL, quote TEXT NOT NULL, changed_at TEXT);
            INSERT INTO old_sources SELECT run_id, n, document_id, content_hash, chunk_id, char_start, char_end, quote, NULL
                FROM run_sources ORDER BY id;
            DROP TABLE run_source_marks; DROP TABLE run_sources; ALTER TABLE old_sources RENAME TO run_sources;
            CREATE INDEX run_sources_run ON run_sources(run_id);
            DELETE FROM _migrations WHERE number = 9;""")
        conn.executemany("UPDATE run_sources SET changed_at = ? WHERE n = ?", [(t, n) for n, t in marks.items()])
        conn.commit()
        conn.close()
        return
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("ALTER TABLE run_sources ADD COLUMN changed_at TEXT")
        conn.execute("DROP TABLE run_source_marks")
        for n, t in marks.items():
            conn.execute("UPDATE run_sources SET changed_at = %s WHERE n = %s", (t, n))
        conn.execute("CREATE INDEX run_sources_document_open ON run_sources(document_id) WHERE changed_at IS NULL")
        conn.execute("DROP INDEX run_sources_document")
        conn.execute("ALTER INDEX run_sources_document_open RENAME TO run_sources_document")
        conn.execute("DELETE FROM _migrations WHERE number IN (11, 13)")
