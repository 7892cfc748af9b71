"""A question's life (docqa.run), driven the way a Python caller drives it: iterate the run for its
events, steer, follow up or cancel it through the handle.  A real knowledge base and the scripted
OpenAI-compatible server on loopback standing in for the model."""

from __future__ import annotations

import threading

import pytest

from docqa.events import Done, Metadata
from docqa.kb import KnowledgeBase
from docqa.llm import OpenAICompatModel
from docqa.settings import Settings

from llm.scripted_server import ScriptedServer  # tests/ is on sys.path (rootdir conftest)

OPS = """# Operations

## Backups

The database is backed up every 6 hours to object storage.
Backups are kept for 35 days.

## API keys

API keys are rotated every 90 days with `acmectl keys rotate`.
"""
BACKUPS = "Backups are kept for 35 days [1]."


@pytest.fixture
def make(tmp_path, embedder):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "ops.md").write_text(OPS, encoding="utf-8")
    opened = []

    def factory(server: ScriptedServer) -> KnowledgeBase:
        settings = Settings(kb=str(tmp_path / "kb.db"), agent={"check": False},
                            llm={"provider": "openai", "base_url": server.base_url, "timeout": 3, "max_retries": 0})
        kb = KnowledgeBase(settings, embedder=embedder,
                           chat_model=OpenAICompatModel(server.base_url, "scripted", timeout=3, max_retries=0))
        if not opened:
            kb.add([tmp_path / "docs"])
        opened.append(kb)
        return kb

    yield factory
    for kb in opened:
        kb.close()


def kinds(events) -> list[str]:
    """Event types with runs of the same type collapsed: metadata, status, content, …"""
    out: list[str] = []
    for event in events:
        if not out or out[-1] != event.type:
            out.append(event.type)
    return out


@pytest.mark.slow
def test_a_python_caller_iterates_the_run(make):
    with ScriptedServer([{"text": BACKUPS}, {"text": "VERIFIED"}]) as server:
        kb = make(server)
        run = kb.start("How long are backups kept?")
        events = list(run)
    assert kinds(events) == ["metadata", "status", "draft", "status", "content", "citations", "done"]
    phases = [e.phase for e in events if e.type == "status"]
    assert phases == ["routing", "retrieving", "generating", "citing", "checking", "accepting"]
    deltas = [e.delta for e in events if e.type == "draft"]
    assert len(deltas) > 1 and "".join(deltas) == BACKUPS  # the draft streamed as the model wrote it
    assert [e.delta for e in events if e.type == "content"] == [BACKUPS]  # then, checked, the answer
    answer = run.answer
    assert answer.status == "SUCCESS" and run.answers == [answer] and run.wait() is answer
    assert events[0] == Metadata(session_id=answer.session_id, run_id=answer.run_id)
    assert events[-1] == Done(status="SUCCESS", run_id=answer.run_id)
    record = kb.log.run(answer.run_id)
    assert record.status == "SUCCESS" and record.answer == answer.answer and record.finished_at
    assert [t["stage"] for t in record.trace if "model_call" not in t][:2] == ["routing", "retrieving"]


@pytest.mark.slow
def test_the_run_is_recorded_running_while_it_works(make):
    with ScriptedServer([{"text": BACKUPS}, {"text": "VERIFIED"}]) as server:
        kb = make(server)
        with kb.start("How long are backups kept?") as run:
            first = next(run)
            assert first.type == "metadata" and kb.log.run(first.run_id).status == "RUNNING"
            run.wait()
    assert kb.log.run(first.run_id).status == "SUCCESS"


@pytest.mark.slow
def test_closing_the_iterator_early_records_cancelled(make):
    with ScriptedServer([{"text": BACKUPS * 6, "chunk_delay": 0.01}, {"text": "VERIFIED"}]) as server:
        kb = make(server)
        run = kb.start("How long are backups kept?")
        events = []
        for event in run:
            events.append(event)
            if event.type == "draft":
                break
        run.close()
        calls = len(server.requests)
    assert calls == 1 and "done" not in [e.type for e in events]
    assert run.answer.status == "CANCELLED"
    record = kb.log.run(events[0].run_id)
    assert record.status == "CANCELLED" and record.finished_at


@pytest.mark.slow
def test_cancel_from_another_thread_stops_before_the_next_model_call(make):
    with ScriptedServer([{"text": BACKUPS * 6, "chunk_delay": 0.02}, {"text": "VERIFIED"}]) as server:
        kb = make(server)
        run = kb.start("How long are backups kept?")
        timer = threading.Timer(0.2, run.cancel)
        timer.start()
        events = list(run)
        timer.join()
        calls = len(server.requests)
    assert calls == 1 and run.answer.status == "CANCELLED" and events[-1].type != "done"
    assert kb.log.run(run.answer.run_id).status == "CANCELLED"


@pytest.mark.slow
def test_a_time_limit_ends_the_run_failed_recorded_and_sent_alike(make):
    """The one deadline: the run stops at its time limit and ends FAILED — the record, the answer and the
    events (failure {code: timeout}, then done FAILED) say the same."""
    with ScriptedServer([{"text": BACKUPS * 40, "chunk_delay": 0.05}, {"text": "VERIFIED"}]) as server:
        kb = make(server)
        run = kb.start("How long are backups kept?", timeout=0.3)
        events = list(run)
        calls = len(server.requests)
    answer, record = run.answer, kb.log.run(run.answer.run_id)
    failure, done = events[-2], events[-1]
    assert calls == 1 and answer.status == record.status == done.status == "FAILED"
    assert failure.type == "failure" and failure.code == "timeout"
    assert failure.message == answer.error == record.error and "time limit (0.3 s)" in record.error
    assert any(t["stage"] == "time_limit" for t in record.trace)


@pytest.mark.slow
def test_a_follow_up_is_answered_after_the_run_in_the_same_stream_and_session(make):
    script = [{"text": BACKUPS}, {"text": "How often are API keys rotated?"},  # the follow-up, made standalone
              {"text": "API keys are rotated every 90 days [1]."}]
    with ScriptedServer(script) as server:
        kb = make(server)
        run = kb.start("How long are backups kept?", check=False)
        events, accepted = [], []
        for event in run:
            events.append(event)
            if event.type == "content" and not accepted:
                accepted.append(run.follow_up("And how often are API keys rotated?"))
    assert accepted == [True] and not run.follow_up("too late")
    types = [e.type for e in events]
    done = types.index("done")
    assert types.count("metadata") == 2 and types[done + 1] == "metadata" and types[-1] == "done"
    first, second = run.answers
    assert run.answer is first and "35 days" in first.answer and "90 days" in second.answer
    assert second.session_id == first.session_id and events[done + 1].run_id == second.run_id
    assert second.retrieval.query == "How often are API keys rotated?"  # understood from the previous turn
    assert [r.question for r in kb.log.session_runs(first.session_id)] == [
        "How long are backups kept?", "And how often are API keys rotated?"]


@pytest.mark.slow
def test_steering_reaches_the_agent(make):
    call = {"tool_calls": [{"name": "search_docs", "arguments": {"query": "backups"}}]}
    answer = {"tool_calls": [{"name": "answer", "arguments": {"text": BACKUPS}}]}
    with ScriptedServer([call, answer]) as server:
        kb = make(server)
        run = kb.start("What are the rules?", mode="agent")
        steered = []
        for event in run:
            if event.type == "status" and event.phase == "tool_call":
                run.steer("Only the backup section, please.")
            if event.type == "status" and event.phase == "steered":
                steered.append(event.text)
        second = server.requests[1]["messages"]
    assert steered == ["Only the backup section, please."]
    assert second[-1]["role"] == "user" and "Only the backup section, please." in second[-1]["content"]
    assert run.answer.status == "SUCCESS" and run.answer.mode == "agent"


def test_the_question_is_routed_once(make):
    with ScriptedServer([]) as server:
        kb = make(server)
        run = kb.start("What documents do you have?")
        events = list(run)
    assert [e.phase for e in events if e.type == "status"] == ["routing", "answering"]
    assert run.answer.mode == "catalog" and server.requests == []
    routing = [t for t in kb.log.run(run.answer.run_id).trace if t["stage"] == "routing"]
    assert len(routing) == 1 and routing[0]["route"] == "catalog"


@pytest.mark.slow
def test_the_run_answers_within_the_principal_scope(make):
    from docqa.access import Principal
    from docqa.errors import PermissionDeniedError

    search = {"tool_calls": [{"name": "search_docs", "arguments": {"query": "backups", "collection": "secret"}}]}
    answer = {"tool_calls": [{"name": "answer", "arguments": {"text": "The documents do not say."}}]}
    reader = Principal("reader", ("default",), "key-1")
    with ScriptedServer([search, answer]) as server:
        kb = make(server)
        with pytest.raises(PermissionDeniedError):
            kb.start("How long are backups kept?", principal=reader, collection="secret")
        run = kb.start("How long are backups kept?", principal=reader, mode="agent")
        run.wait()
        tool_result = next(m for m in server.requests[1]["messages"] if m["role"] == "tool")["content"]
    assert tool_result.startswith("error:") and "secret" in tool_result  # refused in the core, told to the model
    assert kb.log.run(run.answer.run_id).collection == "default"


# -- kb.runs: steer, follow up or cancel a live run by its id, from any door --------------------------

@pytest.mark.slow
def test_kb_runs_steers_follows_up_and_cancels_by_id_from_another_thread(make):
    from docqa.errors import RunStateError

    script = [{"text": BACKUPS, "chunk_delay": 0.05}, {"text": "How often are API keys rotated?"},
              {"text": "API keys are rotated every 90 days [1].", "chunk_delay": 0.2},
              {"text": "API keys are rotated every 90 days [1]."}]
    with ScriptedServer(script) as server:
        kb = make(server)
        other = make(server)  # another connection (a server's other thread): the same live runs
        run = kb.start("How long are backups kept?", check=False)
        events, acted = [], []
        for event in run:
            events.append(event)
            if event.type == "metadata" and not acted:
                run_id = event.run_id
                acted.append(other.runs.steer(run_id, "be brief"))
                acted.append(other.runs.follow_up(run_id, "And how often are API keys rotated?"))
            elif event.type == "metadata":  # the follow-up's own run: cancelled by its id
                other.runs.cancel(event.run_id)
        with pytest.raises(RunStateError, match="not running"):
            other.runs.cancel(run_id)
    assert [e.status for e in events if e.type == "done"] == ["SUCCESS"]  # the cancelled one sends none
    assert [a.status for a in run.answers] == ["SUCCESS", "CANCELLED"]
    assert kb.log.run(run.answers[1].run_id).status == "CANCELLED"


@pytest.mark.slow
def test_kb_runs_checks_the_caller_as_the_run_log_does(make):
    from docqa.access import Principal
    from docqa.errors import InputError, NotFoundError

    outsider = Principal("reader", ("elsewhere",), "key-2")
    reader = Principal("reader", ("default",), "key-1")
    with ScriptedServer([{"text": BACKUPS, "chunk_delay": 0.05}, {"text": "VERIFIED"}]) as server:
        kb = make(server)
        run = kb.start("How long are backups kept?", principal=reader)
        refused = []
        for event in run:
            if event.type == "metadata":
                run_id = event.run_id
                with pytest.raises(NotFoundError, match=f"no run '{run_id}'"):
                    kb.runs.cancel(run_id, principal=outsider)  # a run it may not see: as for none
                with pytest.raises(InputError, match="empty"):
                    kb.runs.steer(run_id, "   ", principal=reader)
                refused.append(run.live)
        with pytest.raises(NotFoundError):
            kb.runs.cancel("no-such-run", principal=reader)
    assert refused == [True] and run.answer.status == "SUCCESS"


def test_a_run_dropped_unfinished_is_collected_and_recorded_cancelled(make):
    import gc

    with ScriptedServer([]) as server:
        kb = make(server)
        run = kb.start("What documents do you have?")
        run_id = next(run).run_id  # metadata: recorded RUNNING and live
        assert kb.live.get(run_id) is run and kb.log.run(run_id).status == "RUNNING"
        del run  # the caller walks away without closing it
        gc.collect()
    assert kb.live.get(run_id) is None and kb.log.run(run_id).status == "CANCELLED"
