"""The SQLite run log: its tables, migrations from older files, batches and the vector cache."""

from __future__ import annotations

import json
import sqlite3

import numpy as np
import pytest

from docqa.errors import NotFoundError
from docqa.store import ChunkVectors, SQLiteStores
from docqa.store.sqlite.migrate import migrations
from docqa.types import SUCCESS, Chunk, DocumentRecord, RunRecord


@pytest.fixture
def store(tmp_path):
    s = SQLiteStores(tmp_path / "kb.db")
    yield s
    s.close()


def _run(run_id: str, session_id: str = "s1", status: str = SUCCESS, created_at: str = "", **extra) -> RunRecord:
    return RunRecord(id=run_id, session_id=session_id, question=f"question {run_id}?", status=status,
                     created_at=created_at, **extra)


def _record() -> DocumentRecord:
    return DocumentRecord(document_id="d1", path="/a.txt", collection="default", type="text", title="T",
                          keywords=[], summary="", size=1, content_hash="h", chunks=0, status="ok", error=None,
                          indexed_at="now")


def test_delete_session_leaves_no_feedback_rows(store):
    store.runlog.save_run(_run("r1"))
    store.runlog.add_feedback("r1", "down")
    assert store.runlog.delete_session("s1") is True
    assert store.db.conn.execute("SELECT count(*) FROM feedback").fetchone()[0] == 0


def test_schema_has_the_tables_and_reopening_is_idempotent(tmp_path):
    newest = migrations()[-1][0]
    assert newest >= 3
    SQLiteStores(tmp_path / "kb.db").close()
    store = SQLiteStores(tmp_path / "kb.db")
    assert store.schema_version == newest
    tables = {r[0] for r in store.db.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    assert {"sessions", "runs", "feedback"} <= tables
    store.close()
    conn = sqlite3.connect(tmp_path / "kb.db")
    assert [r[0] for r in conn.execute("SELECT number FROM _migrations")] == [n for n, _, _ in migrations()]
    conn.close()


def test_an_index_from_before_sessions_is_migrated(tmp_path):
    """A knowledge base at schema 2, with a document in it, gains the tables and keeps its data."""
    path = tmp_path / "old.db"
    conn = _database_at(path, 2)
    conn.execute("INSERT INTO collections VALUES ('default', datetime('now'))")
    conn.execute("INSERT INTO documents (id, collection, path, type, status, indexed_at) "
                 "VALUES ('d1', 'default', '/a.txt', 'text', 'ok', 'now')")
    conn.commit()
    conn.close()
    with SQLiteStores(path) as store:
        assert store.schema_version >= 3
        assert [d.document_id for d in store.documents.list_documents()] == ["d1"]
        store.runlog.save_run(_run("r1"))
        assert store.runlog.get_run("r1").question == "question r1?"


def test_runs_inside_an_ingest_batch_join_it(store):
    """A run saved during batch() is written with it and does not commit or break the batch."""
    with store.batch(seconds=3600):
        store.documents.replace_document(_record(), "alpha", [Chunk(text="alpha", char_start=0, char_end=5)])
        store.runlog.save_run(_run("r1"))
        assert store.db._batch_started is not None  # still one open transaction
        with pytest.raises(NotFoundError):
            store.runlog.add_feedback("missing", "up")  # checked without an exception inside the transaction
        assert store.db._batch_started is not None
        store.commit_pending()
    assert store.runlog.get_run("r1").status == SUCCESS and len(store.documents.list_documents()) == 1


def test_saving_runs_keeps_the_vector_cache(store):
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    store.documents.replace_document(_record(), "alpha", [Chunk(text="alpha", char_start=0, char_end=5)],
                                     vectors=ChunkVectors("m", ["x"], {"x": vector}))
    assert store.vectors.search_vector(vector, "m", 1)
    cache = store.vectors._cache
    store.runlog.save_run(_run("r1"))
    store.runlog.add_feedback("r1", "up")
    store.vectors.search_vector(vector, "m", 1)
    assert store.vectors._cache is cache  # runs and feedback are not index changes
    store.documents.delete_documents(["d1"])
    assert store.vectors.search_vector(vector, "m", 1) == [] and store.vectors._cache is not cache


@pytest.mark.slow
def test_runs_recorded_before_the_collection_column_take_it_from_their_result(tmp_path):
    path = tmp_path / "old.db"
    conn = _database_at(path, 4)
    conn.execute("INSERT INTO sessions VALUES ('s', '', NULL, '2026-01-01', '2026-01-01')")
    for run_id, result in (("a", {"retrieval": {"collection": "ops"}}), ("b", {"retrieval": {"collection": None}}),
                           ("c", None)):
        conn.execute("INSERT INTO runs (id, session_id, question, status, result, created_at) VALUES (?, 's', 'q', "
                     "'SUCCESS', ?, '2026-01-01')", (run_id, None if result is None else json.dumps(result)))
    conn.commit()
    conn.close()
    with SQLiteStores(path) as store:
        assert {r.id: r.collection for r in store.runlog.session_runs("s")} == {"a": "ops", "b": None, "c": None}
        store.runlog.save_run(_run("d"))
        assert store.runlog.get_run("d").collection is None


def _database_at(path, schema: int) -> sqlite3.Connection:
    """A knowledge base file as docqa left it at schema `schema` (an older version)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE _migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    for number, name, sql in migrations():
        if number <= schema:
            conn.executescript(sql)
            conn.execute("INSERT INTO _migrations VALUES (?, ?, datetime('now'))", (number, name))
    return conn
