"""`docqa serve --watch`: folders kept in step inside the server, through its one writer, shown as a job."""

from __future__ import annotations

import os
import subprocess
import sys

import httpx
import pytest
from fastapi.testclient import TestClient

from docqa.api import create_app
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

from api.conftest import free_port, wait_for


def _settings(tmp_path, **api) -> Settings:
    return Settings(kb=str(tmp_path / "kb.db"), embed={"provider": "none"}, llm={"provider": "none"},
                    search={"mode": "bm25"}, api={"upload_dir": str(tmp_path / "uploads"), "allowed_hosts": ["testserver"], **api})


def _paths(c, query: str) -> set[str]:
    hits = c.post("/api/v1/search", json={"query": query}).json()["hits"]
    return {os.path.basename(h["path"]) for h in hits}


@pytest.mark.slow
def test_watched_folder_is_a_job_and_changes_become_searchable(tmp_path):
    folder = tmp_path / "watched"
    folder.mkdir()
    (folder / "start.md").write_text("# Start\n\nalready here at start\n", encoding="utf-8")
    settings = _settings(tmp_path)
    app = create_app(settings, kb_factory=lambda: KnowledgeBase(settings, embedder=None), watch=[str(folder)],
                     watch_collection="notes")
    with TestClient(app) as c:
        job_id = c.get("/readyz").json()["watch_job"]
        url = f"/api/v1/jobs/{job_id}"
        job = wait_for(lambda: (j := c.get(url).json())["progress"]["done"] >= 1 and j)  # the resync at start
        assert job["kind"] == "watch" and job["status"] == "running" and job["collection"] == "notes"
        assert job["result"]["last"]["added"] == 1 and job["detail"]["paths"] == [str(folder)]
        (folder / "otters.md").write_text("# Otters\n\notters hold hands while sleeping\n", encoding="utf-8")
        wait_for(lambda: _paths(c, "otters") == {"otters.md"}, timeout=20)
        job = wait_for(lambda: (j := c.get(url).json())["result"]["totals"]["added"] == 2 and j)  # counted after its commit
        assert job["progress"]["done"] >= 2 and job["result"]["last"]["latency_s"] > 0
        assert {d["collection"] for d in c.get("/api/v1/documents").json()["documents"]} == {"notes"}
        (folder / "otters.md").unlink()
        wait_for(lambda: not _paths(c, "otters"), timeout=20)
        runtime = app.state.runtime
    assert runtime.writer.job(job_id).status == "succeeded"  # stopped with the server, cleanly


def test_without_watch_readyz_names_no_job(client):
    assert client.get("/readyz").json()["watch_job"] is None


@pytest.mark.slow
def test_docqa_serve_watch(tmp_path):
    folder = tmp_path / "watched"
    folder.mkdir()
    port = free_port()
    env = {**os.environ, "DOCQA_EMBED__PROVIDER": "none", "DOCQA_LLM__PROVIDER": "none"}
    base = f"http://127.0.0.1:{port}"
    command = [sys.executable, "-m", "docqa", "--kb", str(tmp_path / "kb.db"), "serve", "--port", str(port),
               "--watch", str(folder)]
    server = subprocess.Popen(command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        job_id = wait_for(lambda: (r := _get(f"{base}/readyz")) is not None and r.json().get("watch_job"), timeout=60, step=0.2)
        wait_for(lambda: _get(f"{base}/api/v1/jobs/{job_id}").json()["progress"]["done"] >= 1, timeout=30, step=0.1)
        (folder / "lynx.md").write_text("# Lynx\n\nthe lynx has tufted ears\n", encoding="utf-8")

        def found() -> bool:
            hits = httpx.post(f"{base}/api/v1/search", json={"query": "tufted"}, timeout=10).json()["hits"]
            return any(h["path"].endswith("lynx.md") for h in hits)

        wait_for(found, timeout=30, step=0.2)
    finally:
        server.terminate()
        output = server.communicate(timeout=30)[0]
    assert f"job {job_id}" in output and "watch job" in output and "Traceback" not in output
    refused = subprocess.run([*command[:-1], str(tmp_path / "nothing")], env=env, capture_output=True, text=True, timeout=60)
    assert refused.returncode == 1 and "--watch takes folders" in refused.stderr


def _get(url: str):
    try:
        return httpx.get(url, timeout=2)
    except httpx.HTTPError:
        return None
