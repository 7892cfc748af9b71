"""The bounded worker pool (a full queue is 503 with Retry-After at once), request timeouts, and
concurrent reads beside the one writer (SQLite WAL) without errors."""

from __future__ import annotations

import asyncio
import time

import httpx
import pytest
from fastapi.testclient import TestClient

from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from api.conftest import ANSWER, job_done, sse_events
from api.test_errors import assert_error
from llm.scripted_server import ScriptedServer

BOTH_BACKENDS = True  # the tests that make an app run on SQLite and PostgreSQL (api/conftest.py)

SLOW = {"text": ANSWER, "delay": 2.0}


async def _burst(url: str, n: int) -> list[tuple[int, float, dict]]:
    async with httpx.AsyncClient(base_url=url, timeout=30) as c:
        async def one(i: int):
            started = time.monotonic()
            r = await c.post("/api/v1/ask", json={"question": f"How long are backups kept? ({i})", "check": False})
            return r.status_code, time.monotonic() - started, dict(r.headers) | {"body": r.json()}

        return await asyncio.gather(*(one(i) for i in range(n)))


@pytest.mark.slow
def test_a_burst_gets_503_at_once(make_app, live):
    with ScriptedServer([SLOW] * 4) as server:
        # accept_share 0: every request reaches the model (the acceptance rule's evidence gate would answer some
        # of these "not found" without a model call, and this test counts the calls)
        url = live(make_app(server, workers=1, queue_size=1, retry_after=7, answer={"accept_share": 0})).url
        results = asyncio.run(_burst(url, 8))
        metrics = httpx.get(f"{url}/metrics").text
    statuses = sorted(s for s, _, _ in results)
    assert statuses == [200, 200] + [503] * 6  # one answering, one queued, the rest refused
    for status, _, headers in results:
        if status == 503:
            assert headers["retry-after"] == "7" and headers["body"]["error"]["code"] == "busy"
    # at once: every refusal came back while the answer was still being written (not a fixed time: a busy
    # machine stretches both)
    assert max(t for s, t, _ in results if s == 503) < min(t for s, t, _ in results if s == 200)
    assert len(server.requests) == 2  # refused requests never reached the model
    assert 'route="/api/v1/ask",status="503"} 6.0' in metrics


@pytest.mark.slow
def test_request_timeout_ends_the_run_failed_even_in_a_stalled_model_call(make_app):
    """The model stalls for 3 s before its first byte: the run's time limit (api.request_timeout) ends the
    model call and the run then, FAILED — the 504, the stream's failure and the record say the same."""
    with ScriptedServer([{"text": ANSWER, "delay": 3}] * 2) as server:
        with TestClient(make_app(server, request_timeout=0.5)) as c:
            started = time.monotonic()
            error = assert_error(c.post("/api/v1/ask", json={"question": "How long are backups kept?"}), 504, "timeout")
            assert time.monotonic() - started < 2.5 and "time limit (0.5 s)" in error["message"]
            with c.stream("POST", "/api/v1/ask", json={"question": "How often is the database backed up?"}, headers={"accept": "text/event-stream"}) as r:
                events = sse_events(r.iter_lines())
            record = c.get(f"/api/v1/runs/{events[0][1]['run_id']}").json()
    failure, done = events[-2], events[-1]
    assert failure == ("failure", {"code": "timeout", "message": error["message"]}) and done[1]["status"] == "FAILED"
    assert record["status"] == "FAILED" and record["error"] == error["message"]


@pytest.mark.slow
def test_reads_run_beside_writes(make_app, live, docs, embedder):
    """Searches and answers from 4 workers while the writer ingests and removes: no errors, no locks."""
    for i in range(30):
        (docs / f"note{i}.md").write_text(f"# Note {i}\n\nService {i} keeps its logs for {i + 1} days.\n", encoding="utf-8")
    url = live(make_app(embedder=embedder, workers=4, queue_size=64)).url

    async def load() -> list[int]:
        async with httpx.AsyncClient(base_url=url, timeout=60) as c:
            async def reader(i: int) -> list[int]:
                out = []
                for j in range(6):
                    if j % 2:
                        r = await c.post("/api/v1/ask", json={"question": f"How long does service {i} keep logs?"})
                    else:
                        r = await c.post("/api/v1/search", json={"query": f"service {i} logs"})
                    out.append(r.status_code)
                return out

            async def writer() -> list[int]:
                r = await c.post("/api/v1/documents:ingest", json={"paths": [str(docs)], "collection": "notes"})
                out = [r.status_code]
                while (job := (await c.get(r.headers["location"])).json())["status"] in ("queued", "running"):
                    await asyncio.sleep(0.05)
                out.append(200 if job["status"] == "succeeded" else 500)
                out.append((await c.delete("/api/v1/collections/notes")).status_code)
                return out

            results = await asyncio.gather(writer(), *(reader(i) for i in range(8)))
            return [s for group in results for s in group]

    statuses = asyncio.run(load())
    assert set(statuses) <= {200, 202}, statuses
    with httpx.Client(base_url=url) as c:
        assert "notes" not in [x["name"] for x in c.get("/api/v1/collections").json()["collections"]]
        runs = c.get("/metrics").text
    assert 'docqa_runs_total{status="SUCCESS"} 24.0' in runs
    assert 'docqa_jobs_total{kind="ingest",status="succeeded"} 1.0' in runs


def test_reindex_job(make_app, embedder):
    with TestClient(make_app()) as c:  # indexed without vectors
        r = c.post("/api/v1/reindex")
        assert r.status_code == 202 and job_done(c, r)["result"]["embedder"] is None


@pytest.mark.slow
def test_a_caller_over_its_rate_limit_gets_429_others_do_not(make_app, live):
    url = live(make_app(rate_limit=30, rate_burst=3)).url  # a request every 2 s, 3 at once
    with KnowledgeBase(Settings(kb=make_app.kb_path, embed={"provider": "none"}, llm={"provider": "none"})) as kb:
        _, first = kb.keys.create("reader")
        _, second = kb.keys.create("reader")

    def search(key: str) -> httpx.Response:
        return httpx.post(f"{url}/api/v1/search", json={"query": "backups"}, headers={"Authorization": f"Bearer {key}"})

    statuses = [search(first).status_code for _ in range(4)]
    assert statuses == [200, 200, 200, 429]
    refused = search(first)
    error = assert_error(refused, 429, "too_many_requests")
    assert "api.rate_limit" in error["message"] and 1 <= int(refused.headers["retry-after"]) <= 2
    assert search(second).status_code == 200  # another key has its own budget
    metrics = [httpx.get(f"{url}/metrics", headers={"X-API-Key": first}).status_code for _ in range(5)]
    assert metrics == [200] * 5 and httpx.get(f"{url}/healthz").status_code == 200  # never paced
    time.sleep(int(refused.headers["retry-after"]))
    assert search(first).status_code == 200  # paced, not banned
    assert 'route="/api/v1/search",status="429"} 2.0' in httpx.get(f"{url}/metrics", headers={"X-API-Key": second}).text
