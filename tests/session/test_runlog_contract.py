"""The RunLog contract: sessions, runs and feedback, on every backend (tests/store/backends.py)."""

from __future__ import annotations

import pytest

from docqa.errors import NotFoundError
from docqa.store.runlog import RunLog
from docqa.types import FAILED, FALLBACK, RUNNING, SUCCESS, RunRecord, SessionRecord
from store.backends import stores  # noqa: F401  (the fixture: a fresh knowledge base per backend)


def _run(run_id: str, session_id: str = "s1", status: str = SUCCESS, created_at: str = "", **extra) -> RunRecord:
    return RunRecord(id=run_id, session_id=session_id, question=f"question {run_id}?", status=status,
                     created_at=created_at, **extra)


def test_run_round_trip_keeps_json_fields(stores):
    run = _run(
        "r1", standalone="what is 密钥轮换?", mode="pipeline", answerable=True, confidence="high",
        answer="Rotate them every 90 days [1].",
        result={"answer": "Rotate them every 90 days [1].", "citations": [{"n": 1, "path": "/docs/ops.md"}]},
        trace=[{"stage": "retrieve", "hits": 5}, {"stage": "generate", "model": "m", "messages": [{"role": "user"}]}],
        timings={"retrieve": 0.012, "total": 1.5}, usage={"prompt_tokens": 900, "completion_tokens": 40},
        model="qwen2.5:7b", finished_at="2026-01-31T10:00:01.000+00:00",
    )
    saved = stores.runlog.save_run(run)
    assert saved.created_at  # filled in by the store
    got = stores.runlog.get_run("r1")
    assert got == saved
    assert got.result["citations"][0]["path"] == "/docs/ops.md"
    assert got.trace[1]["messages"] == [{"role": "user"}]
    assert got.timings == {"retrieve": 0.012, "total": 1.5} and got.usage["prompt_tokens"] == 900
    assert got.answerable is True and got.standalone == "what is 密钥轮换?" and got.feedback == []
    assert got.to_dict()["result"] == run.result


def test_upsert_updates_a_running_run(stores):
    first = stores.runlog.save_run(_run("r1", status=RUNNING))
    assert first.status == RUNNING and first.answerable is None and first.result is None
    first.status, first.answerable, first.answer, first.result = FALLBACK, False, "not found", {"answer": "not found"}
    first.finished_at = "2026-01-31T10:00:05.000+00:00"
    second = stores.runlog.save_run(first)
    assert second.status == FALLBACK and second.answerable is False and second.result == {"answer": "not found"}
    assert second.created_at == first.created_at and second.finished_at == first.finished_at
    assert len(stores.runlog.list_runs()) == 1


def test_created_at_is_kept_on_update(stores):
    saved = stores.runlog.save_run(_run("r1", status=RUNNING, created_at="2026-01-01T00:00:00.000+00:00"))
    saved.created_at = ""  # a caller that forgot it must not move the run in time
    assert stores.runlog.save_run(saved).created_at == "2026-01-01T00:00:00.000+00:00"


def test_session_is_created_and_bumped_by_runs(stores):
    stores.runlog.save_run(_run("r1", session_id="chat"))
    session = stores.runlog.get_session("chat")
    assert session.title == "question r1?" and session.created_at == session.updated_at
    stores.runlog.save_run(_run("r2", session_id="chat"))
    later = stores.runlog.get_session("chat")
    assert later.created_at == session.created_at and later.updated_at >= session.updated_at
    assert [r.id for r in stores.runlog.session_runs("chat")] == ["r1", "r2"]


def test_save_session_upserts(stores):
    created = stores.runlog.save_session(SessionRecord(id="s", title="Backups", collection="ops"))
    assert created.created_at and created.updated_at and created.collection == "ops"
    renamed = stores.runlog.save_session(SessionRecord(id="s", title="Backups and restores", collection="ops"))
    assert renamed.title == "Backups and restores" and renamed.created_at == created.created_at
    assert renamed.updated_at >= created.updated_at


def test_session_runs_oldest_first_and_limited(stores):
    for i in range(5):
        stores.runlog.save_run(_run(f"r{i}", created_at=f"2026-01-0{i + 1}T00:00:00.000+00:00"))
    stores.runlog.save_run(_run("other", session_id="s2"))
    assert [r.id for r in stores.runlog.session_runs("s1")] == ["r0", "r1", "r2", "r3", "r4"]
    assert [r.id for r in stores.runlog.session_runs("s1", limit=2)] == ["r3", "r4"]  # the last two, oldest first


def test_feedback_is_attached_in_order(stores):
    stores.runlog.save_run(_run("r1"))
    up = stores.runlog.add_feedback("r1", "up")
    down = stores.runlog.add_feedback("r1", "down", "the retention period is wrong")
    assert up.id < down.id and down.run_id == "r1" and down.created_at
    got = stores.runlog.get_run("r1")
    assert [(f.rating, f.comment) for f in got.feedback] == [("up", None), ("down", "the retention period is wrong")]
    assert [len(r.feedback) for r in stores.runlog.list_runs()] == [2]
    assert got.to_dict()["feedback"][1]["rating"] == "down"


def test_unknown_ids_are_not_found_errors_naming_the_log(stores):
    with pytest.raises(NotFoundError, match="docqa log"):
        stores.runlog.get_run("nope")
    with pytest.raises(NotFoundError, match="docqa log"):
        stores.runlog.add_feedback("nope", "up")
    with pytest.raises(NotFoundError, match="no session"):
        stores.runlog.get_session("nope")
    with pytest.raises(ValueError, match="up' or 'down"):
        stores.runlog.add_feedback("nope", "meh")
    with pytest.raises(ValueError, match="status"):
        stores.runlog.save_run(_run("r1", status="DONE"))


def test_delete_session_cascades_to_runs_and_feedback(stores):
    stores.runlog.save_run(_run("r1"))
    stores.runlog.save_run(_run("r2", session_id="keep"))
    stores.runlog.add_feedback("r1", "down")
    assert stores.runlog.delete_session("s1") is True and stores.runlog.delete_session("s1") is False
    assert [r.id for r in stores.runlog.list_runs()] == ["r2"]
    with pytest.raises(NotFoundError):
        stores.runlog.get_run("r1")
    with pytest.raises(NotFoundError):
        stores.runlog.add_feedback("r1", "up")  # (that no feedback row is left: test_runlog_sqlite.py)


def test_list_runs_filters(stores):
    days = {"a": "2026-01-01T09:00:00.000+00:00", "b": "2026-01-02T09:00:00.000+00:00",
            "c": "2026-01-03T09:00:00.000+00:00", "d": "2026-01-03T18:00:00.000+00:00"}
    statuses = {"a": SUCCESS, "b": FAILED, "c": FALLBACK, "d": SUCCESS}
    for run_id, created in days.items():
        stores.runlog.save_run(_run(run_id, session_id="x" if run_id == "d" else "s1", status=statuses[run_id], created_at=created))
    ids = lambda **kw: [r.id for r in stores.runlog.list_runs(**kw)]  # noqa: E731
    assert ids() == ["d", "c", "b", "a"]  # newest first
    assert ids(since="2026-01-02") == ["d", "c", "b"]
    assert ids(since="2026-01-02", until="2026-01-03") == ["b"]
    assert ids(statuses=[SUCCESS, FAILED]) == ["d", "b", "a"]
    assert ids(statuses=[]) == []
    assert ids(session_id="s1", limit=2) == ["c", "b"]
    assert ids(limit=1) == ["d"]


def test_sessions_are_listed_most_recently_active_first(stores):
    stamp = "2026-01-0{}T10:00:00.000+00:00"
    stores.runlog.save_run(_run("r1", session_id="old", created_at=stamp.format(1), collection="A"))
    stores.runlog.save_run(_run("r2", session_id="new", created_at=stamp.format(2), collection="A"))
    stores.runlog.save_run(_run("r3", session_id="old", created_at=stamp.format(3), collection="B",
                                finished_at=stamp.format(4)))
    stores.runlog.save_session(SessionRecord("empty"))  # no runs: nothing to open
    listed = stores.runlog.list_sessions()
    assert [s.id for s in listed] == ["old", "new"]
    old = listed[0]
    assert old.first_question == "question r1?" and old.runs == 2 and old.last_activity == stamp.format(4)
    assert old.collection == "B" and sorted(old.collections) == ["A", "B"]
    assert [s.id for s in stores.runlog.list_sessions(limit=1)] == ["old"]
    generic = RunLog.list_sessions(stores.runlog)  # the base's version, from the runs: the same answer
    assert [(s.id, s.runs, s.last_activity, s.collection, sorted(s.collections)) for s in generic] == \
           [(s.id, s.runs, s.last_activity, s.collection, sorted(s.collections)) for s in listed]

def test_owner_round_trips_and_running_runs_are_found(stores):
    stores.runlog.save_run(_run("r1", status=RUNNING, owner="host-a/123/456"))
    stores.runlog.save_run(_run("r2", status=SUCCESS, owner=None))
    (running,) = stores.runlog.list_runs(statuses=[RUNNING])
    assert (running.id, running.owner) == ("r1", "host-a/123/456")
    stores.runlog.save_run(_run("r1", status=FAILED, owner="host-a/123/456", error="the process died"))
    assert stores.runlog.list_runs(statuses=[RUNNING]) == [] and stores.runlog.list_runs(statuses=[]) == []
    assert stores.runlog.get_run("r1").owner == "host-a/123/456"


def test_origin_round_trips_and_a_session_carries_its_first_runs(stores):
    """Where a run was asked (issue 33): the page groups conversations started on the command line apart."""
    stores.runlog.save_run(_run("r1", session_id="s-cli", created_at="2026-01-31T10:00:00.000+00:00", origin="cli"))
    stores.runlog.save_run(_run("r2", session_id="s-cli", created_at="2026-01-31T10:01:00.000+00:00", origin="api"))
    stores.runlog.save_run(_run("r3", session_id="s-old", created_at="2026-01-31T10:02:00.000+00:00"))
    assert [stores.runlog.get_run(r).origin for r in ("r1", "r2", "r3")] == ["cli", "api", None]
    assert {s.id: s.origin for s in stores.runlog.list_sessions()} == {"s-cli": "cli", "s-old": None}
    generic = {s.id: s.origin for s in RunLog.list_sessions(stores.runlog)}  # the base class's way, as a backend may
    assert generic == {"s-cli": "cli", "s-old": None}
