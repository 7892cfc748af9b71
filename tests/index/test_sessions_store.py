"""Sessions, runs and feedback in a real SQLite knowledge base file."""

from __future__ import annotations

import json
import sqlite3

import pytest

from docqa.errors import NotFoundError
from docqa.index import SQLiteStore
from docqa.index.migrate import migrations
from docqa.types import FAILED, FALLBACK, RUNNING, SUCCESS, Chunk, DocumentRecord, RunRecord, SessionRecord


@pytest.fixture
def store(tmp_path):
    s = SQLiteStore(tmp_path / "kb.db")
    yield s
    s.close()


def _run(run_id: str, session_id: str = "s1", status: str = SUCCESS, created_at: str = "", **extra) -> RunRecord:
    return RunRecord(id=run_id, session_id=session_id, question=f"question {run_id}?", status=status,
                     created_at=created_at, **extra)


def test_run_round_trip_keeps_json_fields(store):
    run = _run(
        "r1", standalone="what is 密钥轮换?", mode="pipeline", answerable=True, confidence="high",
        answer="Rotate them every 90 days [1].",
        result={"answer": "Rotate them every 90 days [1].", "citations": [{"n": 1, "path": "/docs/ops.md"}]},
        trace=[{"stage": "retrieve", "hits": 5}, {"stage": "generate", "model": "m", "messages": [{"role": "user"}]}],
        timings={"retrieve": 0.012, "total": 1.5}, usage={"prompt_tokens": 900, "completion_tokens": 40},
        model="qwen2.5:7b", finished_at="2026-01-31T10:00:01.000+00:00",
    )
    saved = store.save_run(run)
    assert saved.created_at  # filled in by the store
    got = store.get_run("r1")
    assert got == saved
    assert got.result["citations"][0]["path"] == "/docs/ops.md"
    assert got.trace[1]["messages"] == [{"role": "user"}]
    assert got.timings == {"retrieve": 0.012, "total": 1.5} and got.usage["prompt_tokens"] == 900
    assert got.answerable is True and got.standalone == "what is 密钥轮换?" and got.feedback == []
    assert got.to_dict()["result"] == run.result


def test_upsert_updates_a_running_run(store):
    first = store.save_run(_run("r1", status=RUNNING))
    assert first.status == RUNNING and first.answerable is None and first.result is None
    first.status, first.answerable, first.answer, first.result = FALLBACK, False, "not found", {"answer": "not found"}
    first.finished_at = "2026-01-31T10:00:05.000+00:00"
    second = store.save_run(first)
    assert second.status == FALLBACK and second.answerable is False and second.result == {"answer": "not found"}
    assert second.created_at == first.created_at and second.finished_at == first.finished_at
    assert len(store.list_runs()) == 1


def test_created_at_is_kept_on_update(store):
    saved = store.save_run(_run("r1", status=RUNNING, created_at="2026-01-01T00:00:00.000+00:00"))
    saved.created_at = ""  # a caller that forgot it must not move the run in time
    assert store.save_run(saved).created_at == "2026-01-01T00:00:00.000+00:00"


def test_session_is_created_and_bumped_by_runs(store):
    store.save_run(_run("r1", session_id="chat"))
    session = store.get_session("chat")
    assert session.title == "question r1?" and session.created_at == session.updated_at
    store.save_run(_run("r2", session_id="chat"))
    later = store.get_session("chat")
    assert later.created_at == session.created_at and later.updated_at >= session.updated_at
    assert [r.id for r in store.session_runs("chat")] == ["r1", "r2"]


def test_save_session_upserts(store):
    created = store.save_session(SessionRecord(id="s", title="Backups", collection="ops"))
    assert created.created_at and created.updated_at and created.collection == "ops"
    renamed = store.save_session(SessionRecord(id="s", title="Backups and restores", collection="ops"))
    assert renamed.title == "Backups and restores" and renamed.created_at == created.created_at
    assert renamed.updated_at >= created.updated_at


def test_session_runs_oldest_first_and_limited(store):
    for i in range(5):
        store.save_run(_run(f"r{i}", created_at=f"2026-01-0{i + 1}T00:00:00.000+00:00"))
    store.save_run(_run("other", session_id="s2"))
    assert [r.id for r in store.session_runs("s1")] == ["r0", "r1", "r2", "r3", "r4"]
    assert [r.id for r in store.session_runs("s1", limit=2)] == ["r3", "r4"]  # the last two, oldest first


def test_feedback_is_attached_in_order(store):
    store.save_run(_run("r1"))
    up = store.add_feedback("r1", "up")
    down = store.add_feedback("r1", "down", "the retention period is wrong")
    assert up.id < down.id and down.run_id == "r1" and down.created_at
    got = store.get_run("r1")
    assert [(f.rating, f.comment) for f in got.feedback] == [("up", None), ("down", "the retention period is wrong")]
    assert [len(r.feedback) for r in store.list_runs()] == [2]
    assert got.to_dict()["feedback"][1]["rating"] == "down"


def test_unknown_ids_are_not_found_errors_naming_the_log(store):
    with pytest.raises(NotFoundError, match="docqa log"):
        store.get_run("nope")
    with pytest.raises(NotFoundError, match="docqa log"):
        store.add_feedback("nope", "up")
    with pytest.raises(NotFoundError, match="no session"):
        store.get_session("nope")
    with pytest.raises(ValueError, match="up' or 'down"):
        store.add_feedback("nope", "meh")
    with pytest.raises(ValueError, match="status"):
        store.save_run(_run("r1", status="DONE"))


def test_delete_session_cascades_to_runs_and_feedback(store):
    store.save_run(_run("r1"))
    store.save_run(_run("r2", session_id="keep"))
    store.add_feedback("r1", "down")
    assert store.delete_session("s1") is True and store.delete_session("s1") is False
    assert [r.id for r in store.list_runs()] == ["r2"]
    assert store.conn.execute("SELECT count(*) FROM feedback").fetchone()[0] == 0
    with pytest.raises(NotFoundError):
        store.get_run("r1")


def test_list_runs_filters(store):
    days = {"a": "2026-01-01T09:00:00.000+00:00", "b": "2026-01-02T09:00:00.000+00:00",
            "c": "2026-01-03T09:00:00.000+00:00", "d": "2026-01-03T18:00:00.000+00:00"}
    statuses = {"a": SUCCESS, "b": FAILED, "c": FALLBACK, "d": SUCCESS}
    for run_id, created in days.items():
        store.save_run(_run(run_id, session_id="x" if run_id == "d" else "s1", status=statuses[run_id], created_at=created))
    ids = lambda **kw: [r.id for r in store.list_runs(**kw)]  # noqa: E731
    assert ids() == ["d", "c", "b", "a"]  # newest first
    assert ids(since="2026-01-02") == ["d", "c", "b"]
    assert ids(since="2026-01-02", until="2026-01-03") == ["b"]
    assert ids(statuses=[SUCCESS, FAILED]) == ["d", "b", "a"]
    assert ids(statuses=[]) == []
    assert ids(session_id="s1", limit=2) == ["c", "b"]
    assert ids(limit=1) == ["d"]


def test_schema_has_the_tables_and_reopening_is_idempotent(tmp_path):
    newest = migrations()[-1][0]
    assert newest >= 3
    SQLiteStore(tmp_path / "kb.db").close()
    store = SQLiteStore(tmp_path / "kb.db")
    assert store.schema_version == newest
    tables = {r[0] for r in store.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
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
    with SQLiteStore(path) as store:
        assert store.schema_version >= 3
        assert [d.document_id for d in store.list_documents()] == ["d1"]
        store.save_run(_run("r1"))
        assert store.get_run("r1").question == "question r1?"


def test_runs_inside_an_ingest_batch_join_it(store):
    """A run saved during batch() is written with it and does not commit or break the batch."""
    record = DocumentRecord(document_id="d1", path="/a.txt", collection="default", type="text", title="T",
                            keywords=[], summary="", size=1, content_hash="h", chunks=0, status="ok", error=None,
                            indexed_at="now")
    with store.batch(seconds=3600):
        store.replace_document(record, "alpha", [Chunk(text="alpha", char_start=0, char_end=5)])
        store.save_run(_run("r1"))
        assert store._batch_started is not None  # still one open transaction
        with pytest.raises(NotFoundError):
            store.add_feedback("missing", "up")  # checked without an exception inside the transaction
        assert store._batch_started is not None
        store.commit_pending()
    assert store.get_run("r1").status == SUCCESS and len(store.list_documents()) == 1


def test_saving_runs_keeps_the_vector_cache(store):
    import numpy as np

    from docqa.index import ChunkVectors

    record = DocumentRecord(document_id="d1", path="/a.txt", collection="default", type="text", title="T",
                            keywords=[], summary="", size=1, content_hash="h", chunks=0, status="ok", error=None,
                            indexed_at="now")
    vector = np.ones(8, dtype=np.float32) / np.sqrt(8)
    store.replace_document(record, "alpha", [Chunk(text="alpha", char_start=0, char_end=5)],
                           vectors=ChunkVectors("m", ["x"], {"x": vector}))
    assert store.search_vector(vector, "m", 1)
    cache = store._vectors
    store.save_run(_run("r1"))
    store.add_feedback("r1", "up")
    store.search_vector(vector, "m", 1)
    assert store._vectors is cache  # runs and feedback are not index changes
    store.delete_documents(["d1"])
    assert store.search_vector(vector, "m", 1) == [] and store._vectors is not cache


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
    with SQLiteStore(path) as store:
        assert {r.id: r.collection for r in store.session_runs("s")} == {"a": "ops", "b": None, "c": None}
        store.save_run(_run("d"))
        assert store.get_run("d").collection is None


def _database_at(path, schema: int) -> sqlite3.Connection:
    """A knowledge base file as docqa left it at schema `schema` (an older version)."""
    conn = sqlite3.connect(path)
    conn.execute("CREATE TABLE _migrations (number INTEGER PRIMARY KEY, name TEXT, applied_at TEXT)")
    for number, name, sql in migrations():
        if number <= schema:
            conn.executescript(sql)
            conn.execute("INSERT INTO _migrations VALUES (?, ?, datetime('now'))", (number, name))
    return conn
