"""The Store contract on a real SQLite file: atomic replace, delete, search, escaping, migrations."""

from __future__ import annotations

import sqlite3

import pytest

from docqa.errors import SchemaError
from docqa.index import ChunkFilter, SQLiteStore, open_store
from docqa.index.migrate import migrations
from docqa.retrieve import parse_query
from docqa.types import Chunk, DocumentRecord


def _record(doc_id: str, path: str, collection: str = "default", content_hash: str = "h1", title: str = "T") -> DocumentRecord:
    return DocumentRecord(
        document_id=doc_id, path=path, collection=collection, type="text", title=title, keywords=["alpha"],
        summary="summary", size=10, content_hash=content_hash, chunks=0, status="ok", error=None,
        indexed_at="2026-01-01T00:00:00+00:00",
    )


def _chunks(texts: list[str]) -> tuple[str, list[Chunk]]:
    doc, chunks, pos = "", [], 0
    for i, t in enumerate(texts):
        doc += t + "\n\n"
        chunks.append(Chunk(text=t, char_start=pos, char_end=pos + len(t), ordinal=i, line_start=2 * i + 1, line_end=2 * i + 1))
        pos = len(doc)
    return doc, chunks


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "kb.db")
    yield s
    s.close()


def test_replace_keeps_no_stale_rows(store):
    text, chunks = _chunks(["the quick brown fox", "jumps over the lazy dog"])
    store.replace_document(_record("d1", "/a.txt"), text, chunks)
    text2, chunks2 = _chunks(["an entirely new sentence"])
    store.replace_document(_record("d1", "/a.txt", content_hash="h2"), text2, chunks2)
    assert store.search_text(parse_query("fox"), 10) == []
    assert len(store.search_text(parse_query("entirely"), 10)) == 1
    report = store.check()
    assert report == {"integrity": "ok", "fts_integrity": True, "chunks": 1, "fts_rows": 1, "fts_orphans": 0}


def test_delete_removes_everything(store):
    text, chunks = _chunks(["alpha beta", "gamma delta"])
    store.replace_document(_record("d1", "/a.txt"), text, chunks)
    assert store.delete_documents(["d1", "missing"]) == 1
    assert store.list_documents() == []
    assert store.check()["chunks"] == 0 and store.check()["fts_rows"] == 0


def test_search_is_collection_scoped(store):
    text, chunks = _chunks(["shared word zebra"])
    store.replace_document(_record("d1", "/a.txt", "one"), text, chunks)
    store.replace_document(_record("d2", "/b.txt", "two"), text, chunks[:])
    ids_one = store.search_text(parse_query("zebra"), 10, ChunkFilter(collection="one"))
    assert [store.get_hits([i])[0].collection for i, _ in ids_one] == ["one"]
    assert len(store.search_text(parse_query("zebra"), 10)) == 2


@pytest.mark.parametrize(
    "query",
    ['"', "'", "AND", "OR NOT", "a*", "(unbalanced", "col:value", "^start", "NEAR(a b)", "-minus", "\\", "{x}", "田中 AND", "\x00"],
)
def test_no_query_raises_fts_syntax_errors(store, query):
    text, chunks = _chunks(["some text AND more text with col value and NEAR words"])
    store.replace_document(_record("d1", "/a.txt"), text, chunks)
    store.search_text(parse_query(query), 5)  # must not raise


def test_phrase_match_ranks_first(store):
    text, chunks = _chunks([
        "rotate keys often; the api is stable and the keys are many keys keys",
        "to rotate the api keys run the command",
    ])
    store.replace_document(_record("d1", "/a.txt"), text, chunks)
    best = store.search_text(parse_query("rotate the API keys", phrase_boost=3.0), 2)
    assert store.get_hits([best[0][0]])[0].text.startswith("to rotate")


def test_chinese_is_segmented(store):
    text, chunks = _chunks(["每天凌晨进行一次全量备份，备份保留三十五天。", "监控系统负责告警。"])
    store.replace_document(_record("d1", "/zh.txt"), text, chunks)
    hits = store.search_text(parse_query("备份保留多久"), 5)
    assert hits and store.get_hits([hits[0][0]])[0].text.startswith("每天")


def test_failure_keeps_last_good_version(store):
    text, chunks = _chunks(["good content here"])
    store.replace_document(_record("d1", "/a.txt"), text, chunks)
    failed = _record("d1", "/a.txt")
    failed.status, failed.error = "error", "corrupt: broken"
    store.record_failure(failed)
    [doc] = store.list_documents()
    assert doc.status == "error" and doc.chunks == 1
    assert store.search_text(parse_query("good"), 5)


def test_migrations_are_numbered_and_recorded(tmp_path):
    numbers = [n for n, _, _ in migrations()]
    assert numbers == sorted(numbers) and numbers[0] == 1
    SQLiteStore(tmp_path / "kb.db").close()
    conn = sqlite3.connect(tmp_path / "kb.db")
    assert [r[0] for r in conn.execute("SELECT number FROM _migrations")] == numbers
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.execute("INSERT INTO _migrations VALUES (9999, 'future', 'now')")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaError, match="newer docqa"):
        SQLiteStore(tmp_path / "kb.db")


def test_not_a_database_is_a_clear_error(tmp_path):
    bad = tmp_path / "kb.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SchemaError, match="not a usable docqa knowledge base"):
        open_store(str(bad))


def test_failing_write_in_a_batch_leaves_old_versions(store):
    text, chunks = _chunks(["version one of the heron"])
    store.replace_document(_record("d1", "/a.txt"), text, chunks)
    text2, chunks2 = _chunks(["version two of the heron"])
    bad_text, bad = _chunks(["duplicate", "duplicate"])
    bad[1].ordinal = 0  # same chunk id twice: the insert fails half-way through the document
    with pytest.raises(sqlite3.IntegrityError):
        with store.batch():
            store.replace_document(_record("d1", "/a.txt", content_hash="h2"), text2, chunks2)
            store.replace_document(_record("d2", "/b.txt"), bad_text, bad)
    assert [d.document_id for d in store.list_documents()] == ["d1"]
    assert store.get_hits([i for i, _ in store.search_text(parse_query("heron"), 5)])[0].text == "version one of the heron"
    assert store.check()["fts_integrity"] is True


def test_batch_commits_every_document_it_finished(tmp_path):
    path = tmp_path / "kb.db"
    store = SQLiteStore(path)
    with store.batch(seconds=0.0):
        for i in range(3):
            text, chunks = _chunks([f"note number {i}"])
            store.replace_document(_record(f"d{i}", f"/{i}.txt"), text, chunks)
            other = sqlite3.connect(path)  # a second reader sees each committed document
            assert other.execute("SELECT count(*) FROM documents").fetchone()[0] == i + 1
            other.close()
    store.close()


def test_boosts_do_not_depend_on_top_k(store):
    """Keywords put query words side by side in every chunk; only the text's own match may win."""
    text, chunks = _chunks(["the database runs in one region", "to rotate the api keys run the command"])
    record = _record("d1", "/a.md")
    record.keywords = ["rotate", "api", "keys"]
    store.replace_document(record, text, chunks)
    for k in (1, 2, 10):
        best = store.search_text(parse_query("rotate the API keys"), k)[0][0]
        assert store.get_hits([best])[0].text.startswith("to rotate"), k


def test_common_terms_are_skipped_only_when_rarer_ones_remain(tmp_path):
    store = SQLiteStore(tmp_path / "kb.db", common_term_share=0.5, min_chunks_to_prune=0)
    texts = [f"common filler text number {i}" for i in range(9)] + ["common ocelot sighting"]
    text, chunks = _chunks(texts)
    store.replace_document(_record("d1", "/a.txt"), text, chunks)
    assert store._selective_terms(["common", "ocelot"]) == ["ocelot"]
    assert store._selective_terms(["common", "filler"]) == ["common", "filler"]  # nothing rare: keep all
    [(best, _)] = store.search_text(parse_query("common ocelot"), 1)
    assert store.get_hits([best])[0].text == "common ocelot sighting"
    store.close()
