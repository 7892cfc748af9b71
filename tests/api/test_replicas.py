"""Several `docqa serve` replicas on one PostgreSQL database behave as one service.

Two real `docqa serve` processes (uvicorn on loopback) on one embedded PostgreSQL database, the
scripted OpenAI-compatible server as the model: a run started on A is read, steered, followed up
and cancelled through B; a job and a run whose replica is killed are marked failed by the other;
a job started on A is followed through B; and a lost database gives 503 with Retry-After (on
/readyz and on a request) until it is back, then everything works again without a restart.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from api.conftest import ANSWER, OPS, free_port, sse_events, wait_for
from llm.scripted_server import ScriptedServer

SSE = {"accept": "text/event-stream"}
SRC = Path(__file__).resolve().parents[2] / "src"


class Replica:
    """`docqa --kb URL serve` in its own process."""

    def __init__(self, url: str, model: str, roots: Path, log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {**os.environ, "PYTHONPATH": str(SRC), "DOCQA_KB": url, "DOCQA_EMBED__PROVIDER": "none",
               "DOCQA_LLM__PROVIDER": "openai", "DOCQA_LLM__BASE_URL": model, "DOCQA_LLM__MODEL": "scripted",
               "DOCQA_LLM__MAX_RETRIES": "0", "DOCQA_ANSWER__MODE": "pipeline", "DOCQA_ANSWER__CHECK": "false",
               "DOCQA_API__HEARTBEAT": "0.5", "DOCQA_API__INGEST_ROOTS": json.dumps([str(roots)]),
               "DOCQA_API__UPLOAD_DIR": str(log.parent / f"up-{self.port}"), "DOCQA_INGEST__WORKERS": "1"}
        self.log = log.open("w")
        self.process = subprocess.Popen([sys.executable, "-m", "docqa", "serve", "--port", str(self.port)],
                                        env=env, stdout=self.log, stderr=subprocess.STDOUT)

    def ready(self, timeout: float = 90) -> Replica:
        def up():
            assert self.process.poll() is None, f"the replica exited: {Path(self.log.name).read_text()[-2000:]}"
            try:
                return httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200
            except httpx.HTTPError:
                return False
        wait_for(up, timeout=timeout, step=0.2)
        return self

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
            try:
                self.process.wait(20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.log.close()


@pytest.fixture
def cluster(postgres_server, tmp_path):
    """cluster(script) -> (A, B, scripted server, docs folder): two replicas on one fresh database."""
    started, servers = [], []
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "ops.md").write_text(OPS, encoding="utf-8")
    url = postgres_server.new_database()
    subprocess.run([sys.executable, "-m", "docqa", "--kb", url, "add", str(docs)], check=True, capture_output=True,
                   env={**os.environ, "PYTHONPATH": str(SRC), "DOCQA_EMBED__PROVIDER": "none"})

    def start(script: list[dict]):
        server = ScriptedServer(script).__enter__()
        servers.append(server)
        a, b = (Replica(url, server.base_url, tmp_path, tmp_path / f"replica-{n}.log") for n in "ab")
        started.extend((a, b))
        return a.ready(), b.ready(), server, docs

    start.url = url
    yield start
    for replica in started:
        replica.stop()
    for server in servers:
        server.__exit__(None, None, None)


def _children(pid: int) -> list[int]:
    """The processes whose parent is `pid` (Linux /proc)."""
    found = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[-1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            found.append(int(stat.parent.name))
    return found


def _metadata(lines) -> dict:
    """The first answer's metadata.  Keep `lines` referenced while the stream must stay open: a line
    iterator dropped unfinished closes the connection (httpcore closes it when the generator is
    closed), which the server takes as the client hanging up — it cancels the run (CANCELLED)."""
    buffer = []
    for line in lines:
        buffer.append(line)
        if not line.strip():
            found = [d for k, d in sse_events(buffer) if k == "metadata"]
            if found:
                return found[0]
            buffer = []
    raise AssertionError("the stream ended before its metadata")


def test_a_run_on_a_is_read_steered_followed_up_and_cancelled_through_b(cluster):
    slow = {"text": "Backups are kept for 35 days [1]. " * 30, "chunk_delay": 0.2}  # ~30 s of streaming
    a, b, model, _ = cluster([{"text": ANSWER, "delay": 8.0}, {"text": "API keys are rotated every 90 days [1].", "delay": 0.5},
                              slow, slow])
    with httpx.stream("POST", f"{a.url}/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE,
                      timeout=60) as r:
        lines = r.iter_lines()
        run_id = _metadata(lines)["run_id"]
        seen = httpx.get(f"{b.url}/api/v1/runs/{run_id}").json()  # read through B while A answers
        assert seen["status"] == "RUNNING" and seen["question"] == "How long are backups kept?"
        steered = httpx.post(f"{b.url}/api/v1/runs/{run_id}/steer", json={"text": "be brief"})
        queued = httpx.post(f"{b.url}/api/v1/runs/{run_id}/follow-up", json={"text": "How often are API keys rotated?"})
        assert (steered.status_code, queued.status_code) == (202, 202), (steered.text, queued.text)
        rest = sse_events(lines)
    kinds = [k for k, _ in rest]
    assert kinds.count("done") == 2  # the follow-up sent to B was answered in A's stream
    second = next(d for k, d in rest if k == "metadata")["run_id"]
    assert httpx.get(f"{b.url}/api/v1/runs/{second}").json()["question"] == "How often are API keys rotated?"
    late = httpx.post(f"{b.url}/api/v1/runs/{run_id}/cancel")
    assert late.status_code == 409 and late.json()["error"]["code"] == "not_running"

    # a third run, slow, started on A and cancelled through B: A stops it and records CANCELLED
    with httpx.stream("POST", f"{a.url}/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE,
                      timeout=60) as r:
        lines = r.iter_lines()
        run_id = _metadata(lines)["run_id"]
        started = time.monotonic()
        assert httpx.post(f"{b.url}/api/v1/runs/{run_id}/cancel").status_code == 202
        rest = sse_events(lines)
    assert time.monotonic() - started < 20  # not the model's 30 s of streaming: the run stopped
    assert "done" not in [k for k, _ in rest]
    assert wait_for(lambda: httpx.get(f"{b.url}/api/v1/runs/{run_id}").json()["status"] == "CANCELLED")
    assert httpx.post(f"{b.url}/api/v1/runs/nope/cancel").status_code == 404

    # a fourth, cancelled from the command line: `docqa run cancel` relays through the database as B does
    env = {**os.environ, "PYTHONPATH": str(SRC), "DOCQA_EMBED__PROVIDER": "none"}
    command = [sys.executable, "-m", "docqa", "--kb", cluster.url, "run", "cancel"]
    with httpx.stream("POST", f"{a.url}/api/v1/ask", json={"question": "How long are backups kept?"}, headers=SSE,
                      timeout=60) as r:
        lines = r.iter_lines()
        run_id = _metadata(lines)["run_id"]
        cancelled = subprocess.run([*command, run_id, "--json"], env=env, capture_output=True, text=True, timeout=120)
        rest = sse_events(lines)
    assert cancelled.returncode == 0 and json.loads(cancelled.stdout) == {"run_id": run_id, "accepted": "cancel"}
    assert "done" not in [k for k, _ in rest]
    assert wait_for(lambda: httpx.get(f"{b.url}/api/v1/runs/{run_id}").json()["status"] == "CANCELLED")
    again = subprocess.run([*command, run_id], env=env, capture_output=True, text=True, timeout=120)
    assert again.returncode == 1 and "is not running (status CANCELLED)" in again.stderr


NOTES = 1500  # files of the job killed on A: seconds of parsing and writing with one parser process


@contextlib.contextmanager
def _writers_lock(url: str):
    """Hold the document writers' lock (store/postgres/db.py WRITE_LOCK) until the block ends: a
    writer's next document write waits for it.  Yields the number of documents committed when taken."""
    import psycopg

    from docqa.store.postgres.db import WRITE_LOCK

    with psycopg.connect(url) as conn:  # one transaction: the lock is released by its rollback
        conn.execute("SET lock_timeout = '60s'")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
        yield conn.execute("SELECT count(*) FROM documents").fetchone()[0]
        conn.rollback()


def test_a_killed_replicas_job_and_run_are_marked_failed(cluster):
    a, b, model, docs = cluster([{"text": ANSWER, "delay": 60}])
    for n in range(NOTES):
        body = "\n\n".join(f"Item {n} line {p} is kept in shelf {n % 17}, box {p}." for p in range(40))
        (docs / f"note-{n:04}.md").write_text(f"# Note {n}\n\n{body}\n", encoding="utf-8")
    r = httpx.post(f"{a.url}/api/v1/documents:ingest", json={"paths": [str(docs)]})
    assert r.status_code == 202
    job_url = r.headers["location"]
    running = wait_for(lambda: (j := httpx.get(f"{b.url}{job_url}").json())["status"] == "running"
                       and j["progress"]["done"] > 0 and j, timeout=60)  # B shows A's job and its progress
    assert running["kind"] == "ingest"
    # Taken between two of A's commits, the writers' lock stops A's next write: with documents still
    # to write, A's job is certainly running when A is killed (a fast machine may finish it otherwise).
    with _writers_lock(cluster.url) as committed:
        assert committed < NOTES + 1, "A's job wrote everything before the lock was taken: give it more files"
        assert httpx.get(f"{b.url}{job_url}").json()["status"] == "running"
        stream = httpx.Client(timeout=90)
        with stream.stream("POST", f"{a.url}/api/v1/ask", json={"question": "How long are backups kept?"},
                           headers=SSE) as answer:
            lines = answer.iter_lines()  # held until A is dead: dropped, it would hang up, and A would record
            run_id = _metadata(lines)["run_id"]  # CANCELLED if it saw that before its model call (a busy machine)
            workers = _children(a.process.pid)  # its parsing workers, forked: orphaned by the kill
            a.process.kill()  # SIGKILL: no clean stop, nothing finished
            a.process.wait()
        stream.close()
    try:  # the orphaned workers live on meanwhile (they must not hold A's database sessions open)
        _marked_failed_then_rerun(b, job_url, run_id, docs)
    finally:
        for pid in workers:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _marked_failed_then_rerun(b: Replica, job_url: str, run_id: str, docs: Path) -> None:
    job = wait_for(lambda: (j := httpx.get(f"{b.url}{job_url}").json())["status"] != "running" and j, timeout=30)
    assert job["status"] == "failed" and "stopped before it finished" in job["error"]
    run = wait_for(lambda: (x := httpx.get(f"{b.url}/api/v1/runs/{run_id}").json())["status"] != "RUNNING" and x)
    assert run["status"] == "FAILED" and "stopped before it finished" in run["error"]
    # the job can be started again through B, and finishes there
    again = httpx.post(f"{b.url}/api/v1/documents:ingest", json={"paths": [str(docs)]})
    done = wait_for(lambda: (j := httpx.get(f"{b.url}{again.headers['location']}").json())["status"] != "queued"
                    and j["status"] != "running" and j, timeout=300)
    assert done["status"] == "succeeded"
    assert httpx.get(f"{b.url}/api/v1/documents", params={"limit": 1}).json()["total"] == NOTES + 1


@pytest.mark.parametrize("backend", ["postgres"], indirect=True)
def test_a_lost_database_gives_503_with_retry_after_and_recovers(postgres_server, make_app, live):
    """The embedded server is stopped under a running app and started again: 503 + Retry-After meanwhile."""
    server = postgres_server.embedded
    if server is None:
        pytest.skip("needs the embedded server (it is stopped and restarted): DOCQA_TEST_POSTGRES_URL is set")
    url = live(make_app()).url
    assert httpx.get(f"{url}/readyz").json()["database"]["ok"] is True
    assert httpx.post(f"{url}/api/v1/search", json={"query": "backups"}).status_code == 200
    server.stop()
    try:
        ready = httpx.get(f"{url}/readyz", timeout=30)
        assert ready.status_code == 503 and ready.headers["retry-after"]
        assert ready.json()["error"]["code"] == "store_unavailable" and "cannot be reached" in ready.json()["error"]["message"]
        search = httpx.post(f"{url}/api/v1/search", json={"query": "backups"}, timeout=30)
        assert search.status_code == 503 and search.headers["retry-after"], search.text
        assert search.json()["error"]["code"] == "store_unavailable"
    finally:
        server.start()
    assert wait_for(lambda: httpx.get(f"{url}/readyz", timeout=30).status_code == 200, timeout=60)
    assert wait_for(lambda: httpx.post(f"{url}/api/v1/search", json={"query": "backups"}, timeout=30).status_code == 200,
                    timeout=30)

