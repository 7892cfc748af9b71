"""GET /api/v1/estimate (the log permission) and /api/v1/estimate/ingest (editors, under api.ingest_roots):
the core decides, a reader key is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from docqa.kb import KnowledgeBase
from docqa.settings import Settings
from llm.scripted_server import ScriptedServer

QUESTION = "How long are backups kept?"


@pytest.mark.slow
def test_api_estimate_for_editors_not_readers(make_app, docs: Path):
    with ScriptedServer() as server:
        app = make_app(server)
        with TestClient(app) as client:
            mine = client.get("/api/v1/estimate", params={"question": QUESTION, "mode": "pipeline"})
            folder = client.get("/api/v1/estimate/ingest", params={"path": str(docs)})
            with KnowledgeBase(Settings(kb=make_app.kb_path, embed={"provider": "none"})) as kb:
                _, reader = kb.keys.create("reader")
                _, editor = kb.keys.create("editor")
            refused = client.get("/api/v1/estimate", headers={"Authorization": f"Bearer {reader}"})
            outside = client.get("/api/v1/estimate/ingest", params={"path": "/etc"},
                                 headers={"Authorization": f"Bearer {editor}"})
            allowed = client.get("/api/v1/estimate", headers={"Authorization": f"Bearer {editor}"})
    assert mine.status_code == 200 and mine.json()["basis"] == "defaults" and mine.json()["mode"] == "pipeline"
    assert server.base_url not in json.dumps(mine.json())  # the model's server is not named
    assert folder.status_code == 200 and folder.json()["files"] == 2
    assert refused.status_code == 403 and refused.json()["error"]["code"] == "forbidden"
    assert outside.status_code == 403 and allowed.status_code == 200
