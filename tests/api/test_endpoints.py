"""The REST resources: collections, documents, search, runs, sessions, feedback, jobs, health, metrics;
the auth hook; `docqa serve`'s guards."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest
from fastapi.testclient import TestClient

from docqa.errors import ConfigError, MissingExtraError
from docqa.kb import KnowledgeBase

from api.conftest import ANSWER, free_port, wait_for
from api.test_errors import assert_error
from llm.scripted_server import ScriptedServer

BOTH_BACKENDS = True  # the tests that make an app run on SQLite and PostgreSQL (api/conftest.py)


def test_collections(client):
    assert client.get("/api/v1/collections").json() == {"collections": [{"name": "default", "documents": 2}]}
    assert client.post("/api/v1/collections", json={"name": "team"}).status_code == 201
    assert_error(client.post("/api/v1/collections", json={"name": "team"}), 409, "exists")
    assert_error(client.post("/api/v1/collections", json={"name": " padded "}), 422)
    names = [c["name"] for c in client.get("/api/v1/collections").json()["collections"]]
    assert names == ["default", "team"]
    assert client.delete("/api/v1/collections/default").json() == {"name": "default", "removed_documents": 2}
    assert client.get("/api/v1/documents").json()["total"] == 0
    assert client.post("/api/v1/search", json={"query": "backups"}).json()["hits"] == []


def test_documents_and_search(client):
    listed = client.get("/api/v1/documents", params={"limit": 1}).json()
    assert listed["total"] == 2 and len(listed["documents"]) == 1 and listed["limit"] == 1
    assert listed["documents"][0]["path"].endswith("ops.md") and listed["documents"][0]["status"] == "ok"
    assert client.get("/api/v1/documents", params={"collection": "nope"}).json()["total"] == 0
    found = client.post("/api/v1/search", json={"query": "备份", "top_k": 3}).json()
    assert found["mode"] == "bm25" and found["hits"][0]["path"].endswith("运维.md")
    only = client.post("/api/v1/search", json={"query": "backups", "path": "*.md", "types": ["markdown"]}).json()
    assert only["hits"] and all(h["type"] == "markdown" for h in only["hits"])


@pytest.mark.slow
def test_runs_sessions_and_feedback(make_app):
    with ScriptedServer([{"text": ANSWER}, {"text": "VERIFIED"}]) as server:
        with TestClient(make_app(server)) as c:
            answer = c.post("/api/v1/ask", json={"question": "How long are backups kept?", "session_id": "chat-1"}).json()
            rated = c.post(f"/api/v1/runs/{answer['run_id']}/feedback", json={"rating": "down", "comment": "too short"})
            run = c.get(f"/api/v1/runs/{answer['run_id']}").json()
            session = c.get("/api/v1/sessions/chat-1").json()
            c.post("/api/v1/ask", json={"question": "What is the office Wi-Fi password?", "check": False})
            log = c.get("/api/v1/log").json()
            attention = c.get("/api/v1/log", params={"attention": "true"}).json()["questions"]
            csv_log = c.get("/api/v1/log", params={"format": "csv", "attention": "true"})
            later = c.get("/api/v1/log", params={"since": "2999-01-01"}).json()
            bad_date = c.get("/api/v1/log", params={"since": "last tuesday"})
    assert log["total"] == 2 and log["questions"][1]["question"] == "How long are backups kept?"
    assert "rated down: too short" in {row["question"]: row["reason"] for row in attention}["How long are backups kept?"]
    assert csv_log.headers["content-type"].startswith("text/csv") and "rated down: too short" in csv_log.text
    assert later["total"] == 0 and bad_date.status_code == 400
    assert rated.status_code == 201 and rated.json()["rating"] == "down"
    assert run["feedback"][0]["comment"] == "too short" and run["result"]["answer"] == ANSWER
    assert any("model_call" in step for step in run["trace"])  # the audit record keeps the model calls
    assert session["id"] == "chat-1" and [r["id"] for r in session["runs"]] == [answer["run_id"]]
    assert "trace" not in session["runs"][0]


def test_health_readiness_and_metrics(client):
    assert client.get("/healthz").json() == {"status": "ok"}
    ready = client.get("/readyz").json()
    assert ready["status"] == "ready" and ready["workers"] == 4 and ready["capacity"] == 20
    client.post("/api/v1/search", json={"query": "backups"})
    client.post("/api/v1/ask", json={"question": "How long are backups kept?"})
    text = client.get("/metrics").text
    for name in ("docqa_http_requests_total", "docqa_http_request_duration_seconds_bucket", "docqa_queue_depth",
                 "docqa_workers_busy", 'docqa_runs_total{status="SUCCESS"}', "docqa_writer_queue_depth"):
        assert name in text
    assert 'route="/api/v1/search",status="200"' in text


@pytest.mark.slow
def test_not_ready_before_startup(make_app):
    c = TestClient(make_app())  # not entered: the lifespan has not run
    assert_error(c.get("/readyz"), 503, "not_ready")
    assert_error(c.post("/api/v1/search", json={"query": "x"}), 503, "unavailable")


@pytest.mark.slow
def test_openapi_documents_every_endpoint(client):
    paths = client.get("/openapi.json").json()["paths"]
    for path in ("/api/v1/collections", "/api/v1/collections/{name}", "/api/v1/documents", "/api/v1/documents:ingest",
                 "/api/v1/documents/{document_id}", "/api/v1/reindex", "/api/v1/search", "/api/v1/ask",
                 "/api/v1/agents/{agent_id}/run", "/api/v1/runs/{run_id}", "/api/v1/runs/{run_id}/steer",
                 "/api/v1/runs/{run_id}/follow-up", "/api/v1/runs/{run_id}/cancel", "/api/v1/runs/{run_id}/feedback",
                 "/api/v1/sessions", "/api/v1/sessions/{session_id}", "/api/v1/jobs/{job_id}", "/healthz", "/readyz", "/metrics"):
        assert path in paths, path
    assert "multipart/form-data" in paths["/api/v1/documents"]["post"]["requestBody"]["content"]
    assert client.get("/docs").status_code == 200


def test_api_keys_through_the_auth_hook(make_app, tmp_path):
    pytest.importorskip("docqa.api.auth")
    app = make_app()
    with KnowledgeBase(app.state.runtime.settings, embedder=None) as kb:
        _, reader_key = kb.keys.create("reader")
    with TestClient(app) as c:
        error = assert_error(c.post("/api/v1/search", json={"query": "backups"}), 401)
        assert c.post("/api/v1/search", json={"query": "x"}).headers["www-authenticate"].startswith("Bearer")
        assert error["code"] == "unauthorized"
        auth = {"authorization": f"Bearer {reader_key}"}
        assert c.post("/api/v1/search", json={"query": "backups"}, headers=auth).status_code == 200
        assert_error(c.post("/api/v1/reindex", headers=auth), 403, "forbidden")
        assert_error(c.post("/api/v1/collections", json={"name": "x"}, headers=auth), 403, "forbidden")
        assert c.get("/healthz").status_code == 200  # liveness needs no key


@pytest.mark.slow
def test_loopback_server_refuses_other_host_names(make_app, live):
    """DNS rebinding: a page on evil.example resolving to 127.0.0.1 must not reach the API as the local user."""
    url = live(make_app(allowed_hosts=[])).url
    port = url.rsplit(":", 1)[1]
    assert_error(httpx.get(f"{url}/api/v1/collections", headers={"host": "evil.example"}), 421, "bad_host")
    assert_error(httpx.get(f"{url}/api/v1/collections", headers={"host": f"evil.example:{port}"}), 421, "bad_host")
    for host in (f"127.0.0.1:{port}", f"localhost:{port}", "[::1]"):
        assert httpx.get(f"{url}/api/v1/collections", headers={"host": host}).status_code == 200
    proxied = live(make_app(allowed_hosts=["docs.example.org"])).url
    assert httpx.get(f"{proxied}/healthz", headers={"host": "docs.example.org"}).status_code == 200


def test_serve_refuses_other_addresses_without_keys(tmp_path):
    from docqa.api.auth import is_loopback
    from docqa.api.server import check_bind
    from docqa.settings import Settings

    settings = Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"})
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost") and not is_loopback("0.0.0.0")
    check_bind("127.0.0.1", False, settings)
    check_bind("0.0.0.0", True, settings)
    with pytest.raises(ConfigError, match="--insecure"):
        check_bind("0.0.0.0", False, settings)


@pytest.mark.slow
def test_docqa_serve_runs_the_api(tmp_path):
    port = free_port()
    env = {**os.environ, "DOCQA_EMBED__PROVIDER": "none", "DOCQA_LLM__PROVIDER": "none"}
    command = [sys.executable, "-m", "docqa", "--kb", str(tmp_path / "kb.db"), "serve", "--port", str(port)]
    outputs = []
    for _ in range(2):  # a missing knowledge base is created (said once), then served as it is
        server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        try:
            ready = wait_for(lambda: _get(f"http://127.0.0.1:{port}/readyz"), timeout=60, step=0.2)
            assert ready.json()["status"] == "ready"
            assert httpx.get(f"http://127.0.0.1:{port}/openapi.json").json()["info"]["title"] == "docqa"
            assert httpx.get(f"http://127.0.0.1:{port}/api/v1/collections").json()["collections"] == []
        finally:
            server.terminate()
            outputs.append(server.communicate(timeout=20)[0])
    assert all("Application startup complete" in o and "Traceback" not in o for o in outputs)
    assert f"created a new knowledge base at {tmp_path / 'kb.db'}" in outputs[0]
    assert "created a new knowledge base" not in outputs[1] and (tmp_path / "kb.db").exists()
    refused = subprocess.run([*command[:-2], "--host", "0.0.0.0"], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 2 and "--insecure" in refused.stderr


def _get(url: str):
    try:
        return httpx.get(url, timeout=2)
    except httpx.HTTPError:
        return None


def test_a_missing_extra_names_the_install_command(monkeypatch):
    from docqa import api

    monkeypatch.setitem(sys.modules, "sse_starlette", None)
    with pytest.raises(MissingExtraError, match=r"pip install 'docqa\[api\]'"):
        api.create_app()


@pytest.mark.slow
def test_search_rerank_parameter(make_app):
    with ScriptedServer([{"text": "2 > 1"}]) as server:
        with TestClient(make_app(server), raise_server_exceptions=False) as c:
            fused = c.post("/api/v1/search", json={"query": "backups", "top_k": 2}).json()
            reranked = c.post("/api/v1/search", json={"query": "backups", "top_k": 2, "rerank": "llm"}).json()
            assert_error(c.post("/api/v1/search", json={"query": "backups", "rerank": "cross-encoder"}), 422)
    assert "rerank" not in fused and reranked["rerank"]["status"] == "reranked" and len(server.requests) == 1
    assert [h["chunk_id"] for h in reranked["hits"]] == [h["chunk_id"] for h in reversed(fused["hits"])]
