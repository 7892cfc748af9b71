"""POST /api/v1/documents:ingest with URLs: editors only, only the hosts api.ingest_urls names (a loopback
address only when named itself), as a job whose result lists the crawled pages."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from api.test_errors import assert_error
from crawl.site import Site
from docqa.kb import KnowledgeBase
from docqa.settings import Settings

pytestmark = pytest.mark.slow


@pytest.fixture
def site():
    with Site() as s:
        yield s


def _client(make_app, **api):
    app = make_app(index=False, **api)
    with KnowledgeBase(Settings(kb=make_app.kb_path, embed={"provider": "none"}, llm={"provider": "none"})) as kb:
        keys = {role: kb.keys.create(role, [])[1] for role in ("reader", "editor")}
    return TestClient(app, raise_server_exceptions=False), keys


def _finished(client, job_id: str, headers: dict) -> dict:
    job = client.get(f"/api/v1/jobs/{job_id}", headers=headers).json()
    while job["status"] not in ("succeeded", "failed"):
        job = client.get(f"/api/v1/jobs/{job_id}", headers=headers).json()
    return job


def test_an_editor_crawls_only_the_hosts_the_setting_names(make_app, site):
    client, keys = _client(make_app)
    editor = {"Authorization": f"Bearer {keys['editor']}"}
    with client:
        body = {"urls": [site.url("/docs/")]}
        assert_error(client.post("/api/v1/documents:ingest", json=body, headers=editor), 403, "forbidden")
        reader = {"Authorization": f"Bearer {keys['reader']}"}
        assert client.post("/api/v1/documents:ingest", json=body, headers=reader).status_code == 403
        assert client.post("/api/v1/documents:ingest", json={}, headers=editor).status_code == 422
        assert client.get("/api/v1/documents:ingest", headers=editor).json()["ingest_urls"] == []


def test_a_named_loopback_host_is_crawled_as_a_job(make_app, site):
    client, keys = _client(make_app, ingest_urls=["127.0.0.1"])
    editor = {"Authorization": f"Bearer {keys['editor']}"}
    with client:
        r = client.post("/api/v1/documents:ingest", json={"urls": [site.url("/docs/")], "collection": "web"}, headers=editor)
        assert r.status_code == 202
        job = _finished(client, r.json()["job"]["id"], editor)
        assert job["status"] == "succeeded", job
        result = job["result"]
        assert len(result["added"]) > 50 and result["crawl"]["sites"][0]["found"] >= len(result["added"])
        assert any(f["path"] == site.url("/docs/missing.html") for f in result["failed"])
        hits = client.post("/api/v1/search", json={"query": "codeword zxapiv13q", "collection": "web"}, headers=editor).json()
        assert hits["hits"][0]["url"] == site.url("/docs/api/v1/page3.html#details")
        wrong = client.post("/api/v1/documents:ingest", json={"urls": ["http://localhost:1/docs/"]}, headers=editor)
        assert_error(wrong, 403, "forbidden")  # localhost is not the address the setting names
