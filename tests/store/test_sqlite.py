"""What only the SQLite backend does: its integrity report, migrations, WAL, batches, FTS5 pruning.

The behaviour every backend shares is in contract/; these tests look inside the SQLite file.
"""

from __future__ import annotations

import sqlite3

import pytest

from docqa.errors import ConfigError, SchemaError, StoreError
from docqa.retrieve import parse_query
from docqa.store import SQLiteStores, open_store
from docqa.store.sqlite.migrate import migrations
from store.backends import chunks, record


@pytest.fixture
def store(tmp_path):
    s = SQLiteStores(tmp_path / "kb.db")
    yield s
    s.close()


def test_replace_keeps_no_stale_rows(store):
    text, found = chunks(["the quick brown fox", "jumps over the lazy dog"])
    store.documents.replace_document(record("d1", "/a.txt"), text, found)
    text2, found2 = chunks(["an entirely new sentence"])
    store.documents.replace_document(record("d1", "/a.txt", content_hash="h2"), text2, found2)
    assert store.fulltext.search_text(parse_query("fox"), 10) == []
    assert len(store.fulltext.search_text(parse_query("entirely"), 10)) == 1
    report = store.check()
    assert report == {"integrity": "ok", "fts_integrity": True, "chunks": 1, "fts_rows": 1, "fts_orphans": 0}


def test_delete_removes_every_row(store):
    text, found = chunks(["alpha beta", "gamma delta"])
    store.documents.replace_document(record("d1", "/a.txt"), text, found)
    assert store.documents.delete_documents(["d1", "missing"]) == 1
    assert store.documents.list_documents() == []
    assert store.check()["chunks"] == 0 and store.check()["fts_rows"] == 0


@pytest.mark.slow
def test_open_store_chooses_the_backend_by_url(tmp_path):
    with open_store(f"sqlite:///{tmp_path / 'kb.db'}") as stores:
        assert isinstance(stores, SQLiteStores) and stores.path == str(tmp_path / "kb.db")
    with pytest.raises(StoreError, match="cannot connect to the PostgreSQL knowledge base postgresql://u@127.0.0.1:9/docqa"):
        open_store("postgresql://u:secret@127.0.0.1:9/docqa")  # nothing listens on port 9; the password is not shown
    with pytest.raises(ConfigError, match="unknown knowledge base URL"):
        open_store("mysql://localhost/docqa")


def test_stats(store):
    text, found = chunks(["alpha beta", "gamma delta"])
    store.documents.replace_document(record("d1", "/a.txt"), text, found)
    stats = store.stats()
    assert stats["path"] == store.path and stats["schema_version"] == migrations()[-1][0]
    assert (stats["collections"], stats["documents"], stats["failed"], stats["chunks"]) == (["default"], 1, 0, 2)
    assert stats["by_type"] == {"text": 1} and stats["source_bytes"] == 10 and stats["index_bytes"] > 0
    assert stats["embedder"] is None and stats["vectors"] == 0


def test_migrations_are_numbered_and_recorded(tmp_path):
    numbers = [n for n, _, _ in migrations()]
    assert numbers == sorted(numbers) and numbers[0] == 1
    SQLiteStores(tmp_path / "kb.db").close()
    conn = sqlite3.connect(tmp_path / "kb.db")
    assert [r[0] for r in conn.execute("SELECT number FROM _migrations")] == numbers
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    conn.execute("INSERT INTO _migrations VALUES (9999, 'future', 'now')")
    conn.commit()
    conn.close()
    with pytest.raises(SchemaError, match="newer docqa"):
        SQLiteStores(tmp_path / "kb.db")


def test_not_a_database_is_a_clear_error(tmp_path):
    bad = tmp_path / "kb.db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(SchemaError, match="not a usable docqa knowledge base"):
        open_store(str(bad))


def test_failing_write_in_a_batch_leaves_old_versions(store):
    text, found = chunks(["version one of the heron"])
    store.documents.replace_document(record("d1", "/a.txt"), text, found)
    text2, found2 = chunks(["version two of the heron"])
    bad_text, bad = chunks(["duplicate", "duplicate"])
    bad[1].ordinal = 0  # same chunk id twice: the insert fails half-way through the document
    with pytest.raises(sqlite3.IntegrityError):
        with store.batch():
            store.documents.replace_document(record("d1", "/a.txt", content_hash="h2"), text2, found2)
            store.documents.replace_document(record("d2", "/b.txt"), bad_text, bad)
    assert [d.document_id for d in store.documents.list_documents()] == ["d1"]
    found_ids = [i for i, _ in store.fulltext.search_text(parse_query("heron"), 5)]
    assert store.documents.get_hits(found_ids)[0].text == "version one of the heron"
    assert store.check()["fts_integrity"] is True


def test_batch_commits_every_document_it_finished(tmp_path):
    path = tmp_path / "kb.db"
    store = SQLiteStores(path)
    with store.batch(seconds=0.0):
        for i in range(3):
            text, found = chunks([f"note number {i}"])
            store.documents.replace_document(record(f"d{i}", f"/{i}.txt"), text, found)
            other = sqlite3.connect(path)  # a second reader sees each committed document
            assert other.execute("SELECT count(*) FROM documents").fetchone()[0] == i + 1
            other.close()
    store.close()


def test_common_terms_are_skipped_only_when_rarer_ones_remain(tmp_path):
    store = SQLiteStores(tmp_path / "kb.db", common_term_share=0.5, min_chunks_to_prune=0)
    texts = [f"common filler text number {i}" for i in range(9)] + ["common ocelot sighting"]
    text, found = chunks(texts)
    store.documents.replace_document(record("d1", "/a.txt"), text, found)
    assert store.fulltext._selective_terms(["common", "ocelot"]) == ["ocelot"]
    assert store.fulltext._selective_terms(["common", "filler"]) == ["common", "filler"]  # nothing rare: keep all
    [(best, _)] = store.fulltext.search_text(parse_query("common ocelot"), 1)
    assert store.documents.get_hits([best])[0].text == "common ocelot sighting"
    store.close()
