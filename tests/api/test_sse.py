"""The answer's event stream: protocol order (enforced by a state machine), keep-alive comments,
cancel on disconnect (the model stops being called), steering and follow-ups of a live run; in
process and against a real uvicorn on loopback."""

from __future__ import annotations

import threading

import httpx
import pytest
from fastapi.testclient import TestClient

from docqa.api.sse import EventOrder, OrderError, StreamState

from api.conftest import ANSWER, sse_events, wait_for
from llm.scripted_server import ScriptedServer

BOTH_BACKENDS = True  # the tests that make an app run on SQLite and PostgreSQL (api/conftest.py)

ORDER = ["metadata", "status", "content", "citations", "failure", "done"]
SSE = {"accept": "text/event-stream"}


# -- the state machine -------------------------------------------------------------------------
@pytest.mark.parametrize("events", [
    ["metadata", "status", "status", "content", "status", "content", "citations", "done"],
    ["metadata", "status", "content", "citations", "failure", "done"],  # the model failed, the answer fell back
    ["metadata", "status", "failure", "done"],  # the run failed
    ["metadata", "done"],
    ["metadata", "content", "citations", "done", "metadata", "status", "content", "citations", "done"],  # a follow-up
    ["metadata", "status", "draft", "draft", "status", "draft_rejected", "draft", "content", "citations", "done"],
])
def test_order_accepts_the_protocol(events):
    order = EventOrder()
    for kind in events:
        order.accept(kind)
    assert order.state is StreamState.TERMINAL


@pytest.mark.parametrize("events,bad", [
    (["status"], "status before metadata"),
    (["content"], "content before metadata"),
    (["metadata", "metadata"], "metadata after metadata"),
    (["metadata", "citations", "content"], "content after citations"),
    (["metadata", "citations", "status"], "status after citations"),
    (["metadata", "citations", "citations"], "citations after citations"),
    (["metadata", "failure", "citations"], "citations after failure"),
    (["metadata", "failure", "failure"], "failure after failure"),
    (["metadata", "done", "content"], "content after done"),
    (["metadata", "done", "done"], "done after done"),
    (["metadata", "thinking"], "unknown event type"),
])
def test_order_rejects_events_out_of_order(events, bad):
    order = EventOrder()
    for kind in events[:-1]:
        order.accept(kind)
    state = order.state
    with pytest.raises(OrderError, match=bad):
        order.accept(events[-1])
    assert order.state is state  # a rejected event changes nothing
    assert not order.allows(events[-1])


def test_nothing_is_accepted_after_a_disconnect():
    order = EventOrder()
    order.accept("metadata")
    order.disconnect()
    assert order.state is StreamState.DISCONNECTED
    for kind in ORDER:
        assert not order.allows(kind)


def assert_protocol(kinds: list[str]) -> None:
    order = EventOrder()
    for kind in kinds:
        order.accept(kind)
    assert order.state is StreamState.TERMINAL and kinds[-1] == "done"


# -- in process --------------------------------------------------------------------------------
@pytest.mark.slow
def test_sse_order_in_process(make_app):
    with ScriptedServer([{"text": ANSWER}, {"text": "VERIFIED"}]) as server:
        with TestClient(make_app(server)) as c:
            with c.stream("POST", "/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE) as r:
                assert r.status_code == 200 and r.headers["content-type"].startswith("text/event-stream")
                events = sse_events(r.iter_lines())
    kinds = [k for k, _ in events]
    assert_protocol(kinds)
    assert kinds[0] == "metadata" and kinds[-2:] == ["citations", "done"]
    assert "".join(d["delta"] for k, d in events if k == "content") == ANSWER
    assert events[-1][1]["status"] == "SUCCESS"
    assert {"routing", "retrieving", "generating", "citing", "checking"} <= {d["phase"] for k, d in events if k == "status"}


@pytest.mark.slow
def test_json_answer_without_the_sse_header(make_app):
    with ScriptedServer([{"text": ANSWER}, {"text": "VERIFIED"}]) as server:
        with TestClient(make_app(server)) as c:
            r = c.post("/api/v1/ask", json={"question": "How long are backups kept?"})
            body = r.json()
            run = c.get(f"/api/v1/runs/{body['run_id']}").json()
    assert r.status_code == 200 and body["status"] == "SUCCESS" and body["answer"] == ANSWER
    assert body["citations"][0]["quote"] == "Backups are kept for 35 days."
    assert run["status"] == "SUCCESS" and run["question"] == "How long are backups kept?" and run["trace"]


@pytest.mark.slow
def test_model_failure_streams_failure_then_fallback(make_app):
    with ScriptedServer([{"status": 500}]) as server:
        with TestClient(make_app(server)) as c:
            with c.stream("POST", "/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE) as r:
                events = sse_events(r.iter_lines())
    kinds = [k for k, _ in events]
    assert_protocol(kinds)
    assert kinds[-3:] == ["citations", "failure", "done"] and events[-1][1]["status"] == "FALLBACK"
    assert "Traceback" not in str(events) and server.base_url not in str(events)


@pytest.mark.slow
def test_keepalive_comments_on_long_pauses(make_app):
    with ScriptedServer([{"text": ANSWER, "delay": 1.2}]) as server:
        with TestClient(make_app(server, keepalive_seconds=0.2)) as c:
            body = {"question": "How long are backups kept?", "check": False}
            with c.stream("POST", "/api/v1/ask", json=body, headers=SSE) as r:
                lines = list(r.iter_lines())
    assert sum(line.startswith(": keep-alive") for line in lines) >= 3
    assert_protocol([k for k, _ in sse_events(lines)])


def test_seed_agent_endpoint_json_and_stream(make_app):
    with TestClient(make_app()) as c:  # no model: agent mode answers extractively, with a note
        r = c.post("/api/v1/agents/default/run", json={"input": "How long are backups kept?"})
        assert r.status_code == 200 and "35 days" in r.json()["output"] and r.json()["output"] == r.json()["answer"]
        with c.stream("POST", "/api/v1/agents/default/run", json={"input": "How long are backups kept?", "stream": True}) as s:
            assert_protocol([k for k, _ in sse_events(s.iter_lines())])
        assert c.post("/api/v1/agents/nope/run", json={"input": "x"}).json()["error"]["code"] == "not_found"


# -- against a real uvicorn ------------------------------------------------------------------
@pytest.mark.slow
def test_sse_order_over_real_http(make_app, live):
    with ScriptedServer([{"text": ANSWER, "chunk_delay": 0.01}, {"text": "VERIFIED"}]) as server:
        url = live(make_app(server)).url
        with httpx.stream("POST", f"{url}/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE,
                          timeout=30) as r:
            assert r.headers["cache-control"] == "no-cache" and r.headers["x-accel-buffering"] == "no"
            events = sse_events(r.iter_lines())
    kinds = [k for k, _ in events]
    assert_protocol(kinds)
    assert kinds.count("draft") == len(ANSWER) // 7 + 1  # the draft streamed as the model wrote it
    assert [d["delta"] for k, d in events if k == "content"] == [ANSWER]  # the checked answer, once
    assert events[-1][1]["status"] == "SUCCESS"


def test_drafts_are_marked_and_a_rejected_one_is_never_the_answer(make_app, live):
    """Issue 28: the model's first draft (a wrong number) streams as `draft`, its rejection is an event, and
    `content` carries only the checked answer."""
    script = [{"text": "Backups are kept for 40 days [1].", "chunk_delay": 0.01}, {"text": ANSWER}, {"text": "VERIFIED"}]
    with ScriptedServer(script) as server:
        url = live(make_app(server)).url
        with httpx.stream("POST", f"{url}/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE,
                          timeout=30) as r:
            events = sse_events(r.iter_lines())
    kinds = [k for k, _ in events]
    assert_protocol(kinds)
    drafts: dict[int, str] = {}
    for kind, data in events:
        if kind == "draft":
            drafts[data["n"]] = drafts.get(data["n"], "") + data["delta"]
    assert drafts == {1: "Backups are kept for 40 days [1].", 2: ANSWER}
    rejected = [d for k, d in events if k == "draft_rejected"]
    assert [d["n"] for d in rejected] == [1] and "40" in rejected[0]["reasons"][0]
    assert [d["delta"] for k, d in events if k == "content"] == [ANSWER] and "40 days" not in str(
        [d for k, d in events if k not in ("draft", "draft_rejected")])
    assert events[-1][1]["status"] == "SUCCESS"


@pytest.mark.parametrize("reply", ["NOT_FOUND", "`NOT_FOUND`.", "The sources do not say who approves it.\nNOT_FOUND"])
def test_a_not_found_reply_streams_the_not_found_answer_and_no_token(make_app, reply):
    with ScriptedServer([{"text": reply}] * 3) as server:
        with TestClient(make_app(server, answer={"accept_share": 0})) as c:
            with c.stream("POST", "/api/v1/ask", json={"question": "Who approves the backup policy?"}, headers=SSE) as r:
                events = sse_events(r.iter_lines())
            body = c.post("/api/v1/ask", json={"question": "Who approves the backup policy?"}).json()
    assert_protocol([k for k, _ in events])
    content = "".join(d["delta"] for k, d in events if k == "content")
    assert content.startswith("The documents do not contain an answer") and events[-1][1]["status"] == "SUCCESS"
    assert "NOT_FOUND" not in str(events).upper().replace(" ", "_")
    assert body["answerable"] is False and "NOT_FOUND" not in body["answer"]


@pytest.mark.slow
def test_client_disconnect_cancels_the_run(make_app, live):
    slow = {"text": "Backups are kept for 35 days [1]. " * 8, "chunk_delay": 0.1}  # ~4 s of streaming
    with ScriptedServer([slow, {"text": "VERIFIED"}]) as server:
        app = make_app(server)
        url = live(app).url
        seen = []
        with httpx.stream("POST", f"{url}/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE,
                          timeout=30) as r:
            for kind, data in _stream(r.iter_lines()):
                seen.append((kind, data))
                if kind == "draft":
                    break  # hang up mid-answer
        run_id = seen[0][1]["run_id"]
        run = wait_for(lambda: (x := httpx.get(f"{url}/api/v1/runs/{run_id}").json())["status"] != "RUNNING" and x)
        calls = len(server.requests)  # the run has ended (recorded last): a fact-check call would have come before
    assert run["status"] == "CANCELLED"
    assert calls == 1  # the answer's call was cut off; the fact-check call never happened
    assert all(d.get("status") != "CANCELLED" for _, d in seen)
    counted = 'docqa_runs_total{status="CANCELLED"} 1.0'  # counted once the worker is done with the run, after the record
    metrics = wait_for(lambda: counted in (text := httpx.get(f"{url}/metrics").text) and text)
    assert "docqa_sse_streams 0.0" in metrics


@pytest.mark.slow
def test_cancel_steer_and_follow_up_a_live_run(make_app, live):
    with ScriptedServer([{"text": ANSWER, "delay": 1.0}, {"text": "API keys are rotated every 90 days [1].", "delay": 0.5},
                         {"text": ANSWER, "delay": 3}]) as server:
        url = live(make_app(server, answer={"check": False})).url
        with httpx.stream("POST", f"{url}/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE,
                          timeout=30) as r:
            lines = r.iter_lines()
            run_id = next(d for k, d in _stream(lines) if k == "metadata")["run_id"]
            steered = httpx.post(f"{url}/api/v1/runs/{run_id}/steer", json={"text": "be brief"})
            queued = httpx.post(f"{url}/api/v1/runs/{run_id}/follow-up", json={"text": "How often are API keys rotated?"})
            rest = sse_events(lines)
        assert steered.status_code == 202 and queued.status_code == 202
        kinds = [k for k, _ in rest]
        assert kinds.count("metadata") == 1 and kinds.count("done") == 2  # the follow-up's answer in the same stream
        second = next(d for k, d in rest if k == "metadata")["run_id"]
        assert second != run_id
        assert httpx.get(f"{url}/api/v1/runs/{second}").json()["question"] == "How often are API keys rotated?"
        late = httpx.post(f"{url}/api/v1/runs/{run_id}/steer", json={"text": "too late"})
        assert late.status_code == 409 and late.json()["error"]["code"] == "not_running"
        assert httpx.post(f"{url}/api/v1/runs/nope/cancel").status_code == 404

        # a JSON client finds its live run through its own session id, and cancels it
        cancelled: dict = {}
        thread = threading.Thread(target=lambda: cancelled.update(r=httpx.post(
            f"{url}/api/v1/ask", json={"question": "How long are backups kept?", "session_id": "s-1"}, timeout=30)))
        thread.start()
        run_id = wait_for(lambda: _running(url, "s-1"))
        assert httpx.post(f"{url}/api/v1/runs/{run_id}/cancel").status_code == 202
        thread.join(10)
    assert cancelled["r"].status_code == 409 and cancelled["r"].json()["error"]["code"] == "cancelled"
    assert httpx.get(f"{url}/api/v1/runs/{run_id}").json()["status"] == "CANCELLED"


@pytest.mark.slow
def test_cancelled_stream_ends_without_done(make_app, live):
    with ScriptedServer([{"text": ANSWER, "delay": 3}]) as server:
        url = live(make_app(server)).url
        with httpx.stream("POST", f"{url}/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE,
                          timeout=30) as r:
            lines = r.iter_lines()
            run_id = next(d for k, d in _stream(lines) if k == "metadata")["run_id"]
            assert httpx.post(f"{url}/api/v1/runs/{run_id}/cancel").status_code == 202
            rest = sse_events(lines)
    assert "done" not in [k for k, _ in rest] and "CANCELLED" not in str(rest)
    assert httpx.get(f"{url}/api/v1/runs/{run_id}").json()["status"] == "CANCELLED"


def _stream(lines):
    """Events one at a time, so a test can act between them."""
    buffer = []
    for line in lines:
        buffer.append(line)
        if not line.strip():
            yield from sse_events(buffer)
            buffer = []


def _running(url: str, session_id: str) -> str | None:
    r = httpx.get(f"{url}/api/v1/sessions/{session_id}")
    runs = r.json()["runs"] if r.status_code == 200 else []
    return next((run["id"] for run in runs if run["status"] == "RUNNING"), None)
